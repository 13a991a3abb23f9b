// Heads switched off headless (issue 39, item 4): `attnlab generate|pretrained|translate --ablate L.H,...`
// on the tiny checkpoints against PyTorch with the same heads' z zeroed before the output projection
// (tests/fixtures/make_ablation_fixtures.py -> ablation_reference.safetensors): GPT-2's greedy
// continuation and each step's logits, BERT's [MASK] probabilities and the first guess's logit before
// and after, Marian's greedy and beam ids and each generated token's cross-attention; within 1e-5 (or
// twice PyTorch's own float32-vs-float64 error where that is larger). A run without --ablate keeps its
// record's fields. Bad lists (malformed, repeated, outside the model) exit 2 with one line naming the head.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const file = parseSafetensors(readFileSync(path.join(FIXTURES, 'ablation_reference.safetensors')));
const ref = file.tensors;
const CASES = JSON.parse(file.metadata.cases);  // none, l0h1, l1h0, l0h0_l1h1
const tol = (name) => Math.max(1e-5, 2 * Number(file.metadata[`${name}.f32_vs_f64`] ?? 0));
// A case's heads as --ablate writes them ('' for none).
const flag = (c) => {
  const pairs = Array.from(ref[`${c}.heads`].data);
  return Array.from({ length: pairs.length / 2 }, (_, i) => `${pairs[2 * i]}.${pairs[2 * i + 1]}`).join(',');
};
const withFlag = (c) => (flag(c) ? ['--ablate', flag(c)] : []);

const gpt2Meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'gpt2_tiny_reference.safetensors'))).metadata;
const bertRef = fixture('bert_tiny_reference.safetensors');
const bertMeta = parseSafetensors(readFileSync(path.join(FIXTURES, 'bert_tiny_reference.safetensors'))).metadata;
const marianMeta = parseSafetensors(readFileSync(path.join(FIXTURES, 'marian_tiny_reference.safetensors'))).metadata;

test('generate --ablate: greedy ids and every step\'s logits match PyTorch with the same heads zeroed', () => {
  const T = 10;  // the prompt's tokens (gpt2_tiny_reference's prompt.input_ids)
  for (const c of CASES) {
    const r = run('generate', '--model', path.join(FIXTURES, 'gpt2_tiny', 'hub'), '--text', gpt2Meta['prompt.text'], '--max-new-tokens', '12',
      '--temperature', '0', '--json', ...withFlag(c));
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.prompt.ids.length, T);
    const want = Array.from(ref[`gpt2.${c}.greedy.ids`].data);
    assert.deepEqual(out.generated.ids, want, c);
    // Each step's likeliest tokens carry their logits: PyTorch's row of the whole text at that position.
    const logits = ref[`gpt2.${c}.greedy.logits`].data, V = logits.length / (T + want.length - 1);
    let worst = 0;
    out.steps.forEach((s, k) => {
      for (const t of s.top) worst = Math.max(worst, Math.abs(t.logit - logits[(T - 1 + k) * V + t.id]));
    });
    assert.ok(worst <= tol(`gpt2.${c}.greedy.logits`), `${c}: max |ours - torch| = ${worst}`);
    if (c === 'none') assert.equal(out.ablate, undefined);
    else assert.equal(out.ablate, flag(c));
  }
  // Text mode says which heads were off.
  const r = run('generate', '--model', path.join(FIXTURES, 'gpt2_tiny', 'hub'), '--text', gpt2Meta['prompt.text'], '--max-new-tokens', '3', '--ablate', '1.0');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^heads switched off: 1\.0$/m);
});

test('pretrained --ablate: the [MASK] guesses, the guesses with every head, and the first guess\'s logit before and after, against PyTorch', () => {
  const mask = Number(bertMeta['pair.mask_index']);
  const softmaxRow = (flat, row, V) => {
    const z = flat.subarray(row * V, (row + 1) * V);
    let max = -Infinity;
    for (const x of z) max = Math.max(max, x);
    let sum = 0;
    for (const x of z) sum += Math.exp(x - max);
    return Array.from(z, (x) => Math.exp(x - max) / sum);
  };
  const none = ref['bert.none.mlm_logits'].data, V = none.length / bertRef['pair.input_ids'].data.length;
  for (const c of CASES) {
    const r = run('pretrained', '--model', path.join(FIXTURES, 'bert_tiny', 'modern'), '--text', 'the cat sat on the [MASK] .', '--pair', 'a dog ran .',
      '--json', ...withFlag(c));
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.split('\n')[0]);
    assert.deepEqual(out.ids, Array.from(bertRef['pair.input_ids'].data));
    const logits = ref[`bert.${c}.mlm_logits`].data;
    const p = softmaxRow(logits, mask, V);
    const [m] = out.masks;
    assert.equal(m.position, mask);
    const order = p.map((x, id) => [x, id]).sort((a, b) => b[0] - a[0]).slice(0, 5).map(([, id]) => id);
    assert.deepEqual(m.top.map((t) => t.id), order, c);
    assert.ok(Math.max(...m.top.map((t) => Math.abs(t.probability - p[t.id]))) <= 1e-5, c);
    if (c === 'none') {
      assert.equal(out.ablate, undefined);
      assert.equal(m.before, undefined);
      continue;
    }
    assert.equal(out.ablate, flag(c));
    // Before: the whole model's five; the chosen token is its first, and its logit moves as PyTorch's does.
    const whole = softmaxRow(none, mask, V);
    const first = whole.indexOf(Math.max(...whole));
    assert.equal(m.before[0].id, first);
    assert.equal(m.chosen.id, first);
    const before = none[mask * V + first], after = logits[mask * V + first];
    assert.ok(Math.abs(m.chosen.logitBefore - before) <= tol('bert.none.mlm_logits'), `${c}: before ${m.chosen.logitBefore} vs ${before}`);
    assert.ok(Math.abs(m.chosen.logitAfter - after) <= tol(`bert.${c}.mlm_logits`), `${c}: after ${m.chosen.logitAfter} vs ${after}`);
    assert.ok(Math.abs(m.chosen.change - (after - before)) <= 2e-5);
  }
  const r = run('pretrained', '--model', path.join(FIXTURES, 'bert_tiny', 'modern'), '--text', 'the cat sat on the [MASK] .', '--ablate', '1.0');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^heads switched off: 1\.0$/m);
  assert.match(r.stdout, /^ {2}with every head: /m);
  assert.match(r.stdout, /^ {2}\S+'s logit: -?\d+\.\d{3} -> -?\d+\.\d{3} \([+-]\d+\.\d{3}\)$/m);
});

test('translate --ablate: greedy ids and cross-attention, and beam ids, match PyTorch with the same cross-attention heads zeroed', () => {
  const folder = path.join(FIXTURES, 'marian_tiny');
  const noneIds = Array.from(ref['marian.none.greedy.ids'].data).slice(1);
  for (const c of CASES) {
    const greedy = run('translate', '--model', folder, '--text', marianMeta['cat.source_text'], '--beams', '1', '--json', ...withFlag(c));
    assert.equal(greedy.status, 0, greedy.stderr);
    const out = JSON.parse(greedy.stdout.split('\n')[0]);
    assert.deepEqual(out.target.ids, Array.from(ref[`marian.${c}.greedy.ids`].data).slice(1), c);
    const cross = Float32Array.from(out.crossAttention.flat(3));
    assert.ok(maxAbsDiff(cross, ref[`marian.${c}.greedy.cross_attentions`].data) <= tol(`marian.${c}.greedy.cross_attentions`), c);
    if (c === 'none') assert.equal(out.before, undefined);
    else {
      assert.deepEqual([out.ablate, out.before.ids], [flag(c), noneIds]);
      // The chosen token's logit (the Translation lab's line): at the first token where the translations
      // part, PyTorch's greedy step logits there, with every head ('none') and with these heads off.
      const mine = Array.from(ref[`marian.${c}.greedy.ids`].data).slice(1);
      let p = 0;
      while (p < mine.length && p < noneIds.length && mine[p] === noneIds[p]) p++;
      if (p === mine.length || p === noneIds.length) p = 0;
      const on = ref['marian.none.greedy.logits'].data, off = ref[`marian.${c}.greedy.logits`].data, V = on.length / noneIds.length;
      assert.equal(out.logit.position, p + 1, c);
      assert.deepEqual([out.logit.whole.id, out.logit.off.id], [noneIds[p], mine[p]], c);
      for (const t of [out.logit.whole, out.logit.off]) {
        const want = [on[p * V + t.id], off[p * V + t.id]];
        const worst = Math.max(Math.abs(t.on - want[0]), Math.abs(t.off - want[1]));
        assert.ok(worst <= Math.max(tol('marian.none.greedy.logits'), tol(`marian.${c}.greedy.logits`)), `${c} ${t.piece}: ${[t.on, t.off]} vs torch ${want}`);
      }
      assert.ok(Math.abs(out.logit.whole.off - out.logit.whole.on) > 1e-3, `${c}: switching the heads off moves the chosen token's logit`);
    }
    // The checkpoint's own beams (generate()'s num_beams).
    const beam = run('translate', '--model', folder, '--text', marianMeta['cat.source_text'], '--json', ...withFlag(c));
    assert.equal(beam.status, 0, beam.stderr);
    assert.deepEqual(JSON.parse(beam.stdout.split('\n')[0]).target.ids, Array.from(ref[`marian.${c}.beam.ids`].data).slice(1), `${c} beam`);
  }
});

test('--ablate refuses a malformed, repeated or missing head with exit 2 and one line naming it', () => {
  const gpt2 = ['generate', '--model', path.join(FIXTURES, 'gpt2_tiny', 'hub'), '--text', 'hi', '--max-new-tokens', '1'];
  const bert = ['pretrained', '--model', path.join(FIXTURES, 'bert_tiny', 'modern'), '--text', 'hi'];
  const marian = ['translate', '--model', path.join(FIXTURES, 'marian_tiny'), '--text', 'hi'];
  const cases = [
    [[...gpt2, '--ablate', '0.x'], /^attnlab: --ablate: '0\.x' is not a head: write layer\.head, numbered from 0 \(e\.g\. 0\.1\)\n$/],
    [[...gpt2, '--ablate', '1'], /^attnlab: --ablate: '1' is not a head/],
    [[...gpt2, '--ablate', '0.1,1.0,0.1'], /^attnlab: --ablate: head 0\.1 is given twice\n$/],
    [[...gpt2, '--ablate', ''], /^attnlab: --ablate needs at least one head, as layer\.head \(e\.g\. 0\.1\)\n$/],
    [[...gpt2, '--ablate', '2.0'], /^attnlab: Heads switched off: head 2\.0: this model's layers are 0 to 1\n$/],
    [[...bert, '--ablate', '0.2'], /^attnlab: Heads switched off: head 0\.2: this model's heads are 0 to 1 in each layer\n$/],
    [[...marian, '--ablate', '0.0,5.1'], /^attnlab: Heads switched off: head 5\.1: this model's layers are 0 to 1\n$/],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
});
