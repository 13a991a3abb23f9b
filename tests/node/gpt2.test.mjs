// GPT-2 in the module and the CLI (issue 26): the tiny checkpoints of tests/fixtures/make_gpt2_fixtures.py
// open through the registry's opener in both namings and both formats, the prompt's pass matches a plain
// PyTorch GPT-2 (attentions, residuals, logits within twice PyTorch's own float32 error, at least 1e-5),
// greedy writing is PyTorch's continuation, a seed reproduces a sampled run, the head roles and the
// logit lens are the script's; `attnlab generate` and `attnlab heads` print the same, and bad input
// exits 2 with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { checkpointKind, openCheckpoint } from '../../web/models/registry.js';
import { KernelRunner } from '../../web/training/kernel_runner.js';

const ref = fixture('gpt2_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'gpt2_tiny_reference.safetensors'))).metadata;
const tol = (name) => Math.max(1e-5, 2 * Number(meta[`${name}.f32_vs_f64`]));
const folder = (v) => path.join(FIXTURES, 'gpt2_tiny', v);
const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const PROMPT = meta['prompt.text'];
const layersOf = (L, f) => Float32Array.from([...Array(L).keys()].flatMap((l) => Array.from(f(l))));

async function open(variant) {
  const module = await lab('simd');
  const sources = await folderSources(folder(variant));
  assert.equal((await checkpointKind(sources)).kind.kind, 'gpt2');
  return (await openCheckpoint(module, sources, { lab: 'writing' })).opened;
}

test('gpt2: every fixture folder opens as its kind and the prompt\'s pass matches PyTorch', async () => {
  for (const [variant, file, naming] of [['hub', 'model.safetensors', 'no prefix'], ['hub_bin', 'pytorch_model.bin', 'no prefix'],
    ['lm', 'model.safetensors', '"transformer." prefix'], ['lm_bin', 'pytorch_model.bin', '"transformer." prefix']]) {
    const { model: gpt2, tokenizer, summary } = await open(variant);
    try {
      assert.equal(summary.file, file);
      assert.equal(summary.naming, naming);
      assert.deepEqual(summary.config, { vocabSize: 407, hiddenSize: 16, layers: 2, heads: 2, innerSize: 64, maxPositions: 48, eosId: 406 });
      const ids = tokenizer.encode(PROMPT).ids;
      assert.deepEqual(ids, Array.from(ref['prompt.input_ids'].data));
      for (const backend of ['scalar', 'simd128']) {
        gpt2.forward(ids, { backend });
        assert.ok(maxAbsDiff(layersOf(2, (l) => gpt2.attention(l)), ref['prompt.attentions'].data) <= tol('prompt.attentions'), `${variant} ${backend}: attentions`);
        assert.ok(maxAbsDiff(layersOf(3, (l) => gpt2.residual(l)), ref['prompt.residuals'].data) <= tol('prompt.residuals'), `${variant} ${backend}: residuals`);
        assert.ok(maxAbsDiff(layersOf(ids.length, (t) => gpt2.logits(t)), ref['prompt.logits'].data) <= tol('prompt.logits'), `${variant} ${backend}: logits`);
      }
      assert.deepEqual(gpt2.logitLens().flat().map((c) => c.id), Array.from(ref['prompt.lens'].data));
    } finally {
      gpt2.delete();
    }
  }
});

test('gpt2: the prompt\'s pass through the staged calls (the page\'s kernel, its causal mask) gives the CPU pass\'s results', async () => {
  const { model: gpt2, tokenizer } = await open('lm');
  try {
    const ids = tokenizer.encode(PROMPT).ids;
    const module = await lab('simd');
    const runner = new KernelRunner({ module, request: { requested: 'scalar' } });
    const last = await gpt2.forwardWith(ids, (args) => runner.forward(args));
    assert.equal(last.choice.backend, 'scalar');
    assert.ok(maxAbsDiff(layersOf(2, (l) => gpt2.attention(l)), ref['prompt.attentions'].data) <= tol('prompt.attentions'));
    assert.ok(maxAbsDiff(gpt2.logits(), ref['prompt.logits'].data.subarray((ids.length - 1) * 407)) <= tol('prompt.logits'));
  } finally {
    gpt2.delete();
  }
});

test('gpt2: greedy writing is PyTorch\'s continuation; a seed reproduces a sampled run; the live distribution follows the temperature', async () => {
  const { model: gpt2, tokenizer } = await open('hub');
  try {
    const ids = tokenizer.encode(PROMPT).ids;
    const greedy = gpt2.generate(ids, { temperature: 0, maxNewTokens: 12 });
    assert.deepEqual(greedy.ids, Array.from(ref['greedy.ids'].data));
    assert.equal(greedy.stopReason, 'max_new_tokens');
    assert.equal(greedy.steps[0].attention.length, 2 * 2 * (ids.length + 1));  // L x H x (its position + 1)
    const settings = { temperature: 0.9, topK: 50, topP: 0.95, maxNewTokens: 15, seed: 42, stopAtEos: false };
    const a = gpt2.generate(ids, settings), b = gpt2.generate(ids, settings), c = gpt2.generate(ids, { ...settings, seed: 43 });
    assert.deepEqual(a.ids, b.ids);
    assert.deepEqual(a.steps.map((s) => s.probability), b.steps.map((s) => s.probability));
    assert.notDeepEqual(a.ids, c.ids);
    // The bars at another temperature: p_i ∝ exp(z_i / T) over the whole vocabulary.
    gpt2.beginWriting(ids, { temperature: 1 });
    const z = gpt2.logits();
    for (const T of [0.5, 1, 2]) {
      const max = Math.max(...z);
      const sum = z.reduce((s, x) => s + Math.exp((x - max) / T), 0);
      for (const { id, probability } of gpt2.distribution({ temperature: T, k: 10 })) {
        assert.ok(Math.abs(probability - Math.exp((z[id] - max) / T) / sum) < 1e-6, `T ${T} id ${id}`);
      }
    }
    assert.throws(() => gpt2.beginWriting(ids, { temperature: -1 }), /temperature must be in \[0, 100\]/);
    assert.throws(() => gpt2.beginWriting(ids, { topP: 'x' }), /topP must be a number, got string/);
    assert.throws(() => gpt2.beginWriting([1, 407]), /token id 407 at position 1 is outside the vocabulary \[0, 407\)/);
    assert.throws(() => gpt2.forward([]), /the text has no tokens/);
  } finally {
    gpt2.delete();
  }
});

test('gpt2: head roles match the script\'s', async () => {
  const { model: gpt2 } = await open('lm_bin');
  try {
    const r = gpt2.headRoles({ n: 20, seed: 7 });
    assert.deepEqual(Array.from(r.tokens), Array.from(ref['roles.input_ids'].data));
    for (const name of ['previous', 'first', 'induction']) assert.ok(maxAbsDiff(r[name], ref[`roles.${name}`].data) <= tol(`roles.${name}`), name);
    assert.ok(maxAbsDiff(Float32Array.of(r.firstCopyLoss, r.secondCopyLoss), ref['roles.loss'].data) <= tol('roles.loss'));
    assert.throws(() => gpt2.headRoles({ n: 30 }), /1 \+ 2 x 30 tokens: this model has position embeddings for 48/);
  } finally {
    gpt2.delete();
  }
});

test('attnlab generate --json: the prompt\'s tokens and ids, the greedy continuation, every attention; text mode; heads --json', () => {
  let r = run('generate', '--model', folder('hub'), '--text', PROMPT, '--max-new-tokens', '12', '--temperature', '0', '--json');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.prompt.ids, Array.from(ref['prompt.input_ids'].data));
  assert.equal(out.prompt.tokens.join(''), PROMPT);
  assert.deepEqual(out.generated.ids, Array.from(ref['greedy.ids'].data));
  assert.ok(maxAbsDiff(Float32Array.from(out.promptAttention.flat(3)), ref['prompt.attentions'].data) <= tol('prompt.attentions'));
  assert.equal(out.steps.length, 12);
  assert.equal(out.steps[3].attention.length, 2);
  assert.equal(out.steps[3].attention[0][0].length, out.steps[3].position + 1);
  assert.deepEqual(Object.keys(out).sort(), ['generated', 'prompt', 'promptAttention', 'settings', 'steps']);
  assert.deepEqual(Object.keys(out.steps[0]), ['id', 'token', 'probability', 'position', 'top', 'attention']);
  assert.deepEqual(out.settings, { temperature: 0, topK: 50, topP: 1, maxNewTokens: 12, seed: 0 });
  r = run('generate', '--model', folder('lm'), '--text', PROMPT, '--max-new-tokens', '5', '--temperature', '0.8', '--top-k', '20', '--seed', '3');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^prompt \(10 tokens\): "The" " quick"/);
  assert.match(r.stdout, /temperature 0.8, top-k 20, top-p 1, seed 3/);
  r = run('heads', '--model', folder('hub_bin'), '--role-tokens', '20', '--role-seed', '7', '--json');
  assert.equal(r.status, 0, r.stderr);
  const heads = JSON.parse(r.stdout);
  assert.ok(maxAbsDiff(Float32Array.from(heads.induction.flat()), ref['roles.induction'].data) <= tol('roles.induction'));
  assert.deepEqual(heads.tokens, Array.from(ref['roles.input_ids'].data));
});

test('attnlab generate and heads: bad flags and bad folders exit 2 with one line', () => {
  const cases = [
    [['generate', '--text', 'hi'], /^attnlab: --model DIR\|ID is required/],
    [['generate', '--model', folder('hub'), '--text', 'x', '--top-p', '0'], /^attnlab: --top-p must be a number in \[0.01, 1\], got '0'/],
    [['generate', '--model', folder('hub'), '--text', 'x', '--max-new-tokens', '2.5'], /^attnlab: --max-new-tokens must be an integer in \[1, 200\], got '2.5'/],
    [['generate', '--model', folder('hub'), '--text', 'x', '--bogus'], /^attnlab: unknown flag '--bogus' for attnlab generate \(it takes --text /],
    [['generate', '--model', folder('hub'), '--text', ''], /^attnlab: --text is empty/],
    // The lab's cap on the prompt, checked before anything is read or tokenised (as pretrained and translate).
    [['generate', '--model', '/no/such/model', '--text', 'x'.repeat(131000)], /^attnlab: --text is 131,000 characters long: at most 2,000\n$/],
    // Characters as a person counts them: 2,001 emoji are 2,001, not 4,002 UTF-16 units (issue 48).
    [['generate', '--model', '/no/such/model', '--text', '😀'.repeat(2001)], /^attnlab: --text is 2,001 characters long: at most 2,000\n$/],
    // Longer in tokens than the model's positions (48): refused before the model runs.
    [['generate', '--model', folder('hub'), '--text', 'x '.repeat(40)], /^attnlab: --text is \d+ tokens: this model reads at most 48 \(n_positions\)\n$/],
    [['generate', '--model', path.join(FIXTURES, 'bert_tiny', 'modern'), '--text', 'x'], /^attnlab: This folder holds a BERT model .*open it in the Pretrained lab/],
    [['heads', '--model', folder('hub'), '--role-tokens', '40'], /^attnlab: 1 \+ 2 x 40 tokens: this model has position embeddings for 48/],
    [['heads', '--model', folder('hub'), '--n', '20'], /^attnlab: unknown flag '--n' for attnlab heads \(it takes --role-tokens --role-seed --backend --model --json\)/],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const help = run('generate', '--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--top-p X/);
  assert.match(help.stdout, /--temperature X .*\(range \[0, 2\]; default 0\.8\)/s);
});

test('attnlab generate --png writes the whole text\'s attention heatmap as the page draws it; a missing folder is refused first', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { PNG } = await import('pngjs');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-gen-')), 'attention.png');
  let r = run('generate', '--model', folder('hub'), '--text', PROMPT, '--max-new-tokens', '5', '--png', file);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /wrote .*attention\.png/);
  const image = PNG.sync.read(readFileSync(file));
  assert.ok(image.width > 200 && image.height > 200, `${image.width}x${image.height}`);
  // With --json: the record, then the figure as its own JSON line, as pretrained and translate report it.
  r = run('generate', '--model', folder('hub'), '--text', PROMPT, '--max-new-tokens', '5', '--png', file, '--json');
  assert.equal(r.status, 0, r.stderr);
  const [record, figure, ...rest] = r.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.equal(record.steps.length, 5);
  assert.match(figure.figure, /attention\.png/);
  assert.deepEqual(rest, []);
  r = run('generate', '--model', folder('hub'), '--text', PROMPT, '--png', '/no/such/folder/a.png');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: \/no\/such\/folder\/a\.png: its folder does not exist\n$/);
});

test('attnlab generate: the Writing lab\'s defaults (temperature 0.8, top-k 50, seed 0) apply without flags, and the seed reproduces the run', () => {
  const bare = run('generate', '--model', folder('hub'), '--text', PROMPT, '--json');
  assert.equal(bare.status, 0, bare.stderr);
  const out = JSON.parse(bare.stdout);
  assert.deepEqual(out.settings, { temperature: 0.8, topK: 50, topP: 1, maxNewTokens: 20, seed: 0 });
  const spelled = run('generate', '--model', folder('hub'), '--text', PROMPT, '--json', '--temperature', '0.8', '--top-k', '50', '--top-p', '1', '--max-new-tokens', '20', '--seed', '0');
  assert.equal(spelled.stdout, bare.stdout, 'the defaults are the page\'s, flag for flag');
  assert.equal(run('generate', '--model', folder('hub'), '--text', PROMPT, '--json').stdout, bare.stdout, 'the same seed, the same text');
  const other = JSON.parse(run('generate', '--model', folder('hub'), '--text', PROMPT, '--json', '--seed', '1').stdout);
  assert.notDeepEqual(other.generated.ids, out.generated.ids, 'another seed draws other tokens');
});

test('attnlab generate --json is written in pieces of at most one attention row, and they make the whole record', async () => {
  const { runGenerate } = await import('../../web/cli/writing_commands.mjs');
  const { writingLab } = await import('../../web/labs/07_writing.js');
  const { defaultValues } = await import('../../web/shared/properties.js');
  const module = await lab('simd');
  const pieces = [];
  // Writing to n_positions (48): the prompt's [2][2][10][10], then 38 steps of [2][2][position + 1] each.
  const values = { ...defaultValues(writingLab.properties), model: folder('hub'), text: PROMPT, maxNewTokens: 200, temperature: 0, json: true, given: new Set() };
  await runGenerate(values, module, async (text) => { pieces.push(text); });
  const whole = pieces.join('');
  assert.ok(whole.endsWith('}\n'));
  const record = JSON.parse(whole);
  assert.equal(record.generated.stopReason, 'n_positions');
  assert.equal(record.prompt.ids.length + record.steps.length, 48, 'a token at every position');
  // Nothing held or written at once beyond one step's fields or one row of at most 48 numbers.
  const longest = Math.max(...pieces.map((p) => p.length));
  const rowBound = 2 + 48 * 24;  // "[" + 48 float32 values as JSON numbers (at most 24 characters each) + "]"
  const stepFields = Math.max(...record.steps.map((s) => JSON.stringify({ ...s, attention: null }).length));
  assert.ok(longest <= Math.max(rowBound, stepFields + 2, JSON.stringify(record.generated).length + 40), `the longest piece is ${longest} characters`);
  assert.ok(whole.length > 20 * longest, `${whole.length} characters in ${pieces.length} pieces`);
  // The same record as the command prints.
  const r = run('generate', '--model', folder('hub'), '--text', PROMPT, '--max-new-tokens', '200', '--temperature', '0', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, whole);
});

test('attnlab generate: broken tokenizer files are refused when the folder opens: exit 2, one line naming the file', async () => {
  const { mkdtempSync, copyFileSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const broken = (name, text) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-gpt2-'));
    for (const f of ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']) copyFileSync(path.join(folder('hub'), f), path.join(dir, f));
    writeFileSync(path.join(dir, name), text);
    return dir;
  };
  const vocab = JSON.parse(readFileSync(path.join(folder('hub'), 'vocab.json'), 'utf8'));
  const zeros = JSON.stringify(Object.fromEntries(Object.keys(vocab).map((t) => [t, 0])));
  const merges = readFileSync(path.join(folder('hub'), 'merges.txt'), 'utf8');
  for (const [dir, message] of [
    [broken('vocab.json', zeros), /^attnlab: vocab\.json: "0" and "1" have the same id 0: each token needs its own\n$/],
    [broken('merges.txt', `${merges.trimEnd()}\nq z\n`), /^attnlab: merges\.txt: merge 151 \("q z"\) needs the token "qz", which vocab\.json lacks\n$/],
  ]) {
    const r = run('generate', '--model', dir, '--text', PROMPT, '--max-new-tokens', '3');
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
});
