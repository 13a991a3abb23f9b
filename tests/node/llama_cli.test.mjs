// The decoder kinds `llama` and `qwen2` (issue 37, item 1) in the module and the CLI: the tiny folders of
// tests/fixtures/make_llama_fixtures.py (a BF16 Llama with 4 query heads over 2 and its own lm_head, in
// model.safetensors; a Qwen2 with q/k/v biases, one key/value head, tied embeddings and a padded
// vocabulary, in pytorch_model.bin) open through the registry as their kinds, in the Writing lab's
// place (the BF16 one held at 16 bits, widened inside the products); their prompt's logits and attentions, greedy continuation and head scores through
// `attnlab generate` and `attnlab heads` are PyTorch's (within twice its own float32 error, at least
// 1e-5); a config this decoder does not compute exits 2 with one line naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { checkpointKind, openCheckpoint } from '../../web/models/registry.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const folder = (kind) => path.join(FIXTURES, `${kind}_tiny`);
const KINDS = {
  llama: { file: 'model.safetensors', weights: 'BF16', config: { vocabSize: 407, hiddenSize: 32, layers: 2, heads: 4, kvHeads: 2, headDim: 12 } },
  qwen2: { file: 'pytorch_model.bin', weights: 'F32', config: { vocabSize: 416, hiddenSize: 24, layers: 2, heads: 3, kvHeads: 1, headDim: 8 } },
};

function reference(kind) {
  const name = `${kind}_tiny_reference.safetensors`;
  const meta = parseSafetensors(readFileSync(path.join(FIXTURES, name))).metadata;
  return { ref: fixture(name), tol: (t) => Math.max(1e-5, 2 * Number(meta[`${t}.f32_vs_f64`])), prompt: meta['prompt.text'] };
}

// The file's BF16 rows of `name` for `ids`, widened here (a bfloat16 is a float32's top 16 bits): [T * E].
function widenedRows(file, name, ids, E) {
  const bytes = readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const { dtype, data_offsets: [begin] } = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))[name];
  assert.equal(dtype, 'BF16');
  const bits = new Uint32Array(ids.length * E);
  ids.forEach((id, t) => { for (let e = 0; e < E; e++) bits[t * E + e] = bytes.readUInt16LE(8 + n + begin + 2 * (id * E + e)) << 16; });
  return bits;
}

test('llama and qwen2 folders open as their kinds (the Writing lab\'s) and the prompt\'s pass is PyTorch\'s, in the SIMD128 and scalar builds; BF16 embeddings widened bit for bit', async () => {
  for (const build of ['simd', 'scalar']) for (const [kind, { file, config, weights }] of Object.entries(KINDS)) {
    const module = await lab(build);
    const { ref, tol } = reference(kind);
    const sources = await folderSources(folder(kind));
    const found = (await checkpointKind(sources)).kind;
    assert.deepEqual([found.kind, found.lab.id, found.lab.command], [kind, 'writing', 'attnlab generate']);
    const { kind: opened, opened: { model, tokenizer, summary } } = await openCheckpoint(module, sources, { lab: 'writing' });
    try {
      assert.equal(opened.kind, kind);
      assert.equal(summary.file, file);
      assert.equal(summary.weights, weights, `${kind}: how the weights are held`);
      // The speeds the passes turn by (the page's rotary figure draws them): PyTorch's inv_freq after
      // rope_scaling (llama: llama3, factor 8; qwen2: none), to float32's last bit: llama3's blended pair
      // rounds one ulp apart from PyTorch's, whose blend takes another order of float32 operations.
      const speeds = model.rotarySpeeds(), torchSpeeds = ref['rotary.inv_freq'].data;
      assert.equal(speeds.length, torchSpeeds.length);
      assert.ok(speeds.every((w, i) => Math.abs(w - torchSpeeds[i]) <= 2 ** -23 * torchSpeeds[i]), `${kind} rotary speeds (${build}): ${speeds} vs ${torchSpeeds}`);
      for (const [key, value] of Object.entries(config)) assert.equal(summary.config[key], value, `${kind} ${key}`);
      const ids = Array.from(ref['prompt.input_ids'].data);
      assert.deepEqual(tokenizer.encode(reference(kind).prompt).ids, ids);
      model.forward(ids, { backend: 'simd128' });
      const T = ids.length;
      if (weights === 'BF16') {  // the embeddings as the module widens them (vec4.h's widen_bf16_8: the SIMD128 build's shuffle)
        const embedded = new Uint32Array(model.residual(0).buffer);
        assert.deepEqual(embedded, widenedRows(path.join(folder(kind), file), 'model.embed_tokens.weight', ids, config.hiddenSize), `${kind} embeddings (${build})`);
      }
      // The ids the tokenizer writes (all 407); Qwen2's 9 padded ids past them are limited to -inf.
      const V = config.vocabSize, W = tokenizer.size;
      const rows = [...Array(T).keys()].map((t) => model.logits(t));
      const logits = Float32Array.from(rows.flatMap((row) => Array.from(row.slice(0, W))));
      const torch = Float32Array.from([...Array(T).keys()].flatMap((t) => Array.from(ref['prompt.logits'].data.slice(t * V, t * V + W))));
      assert.ok(maxAbsDiff(logits, torch) <= tol('prompt.logits'), `${kind} logits (${build})`);
      assert.ok(rows.every((row) => row.slice(W).every((z) => z === -Infinity)), `${kind}: padded ids`);
      assert.equal(W, 407);
      const attentions = Float32Array.from([0, 1].flatMap((l) => Array.from(model.attention(l))));
      assert.ok(maxAbsDiff(attentions, ref['prompt.attentions'].data) <= tol('prompt.attentions'), `${kind} attentions`);
    } finally {
      model.delete();
    }
  }
});

test('attnlab generate and heads on llama and qwen2: the greedy continuation, every attention and the head scores are PyTorch\'s', () => {
  for (const kind of Object.keys(KINDS)) {
    const { ref, tol, prompt } = reference(kind);
    const greedy = Array.from(ref['greedy.ids'].data);
    let r = run('generate', '--model', folder(kind), '--text', prompt, '--max-new-tokens', String(greedy.length), '--temperature', '0', '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.prompt.ids, Array.from(ref['prompt.input_ids'].data), kind);
    assert.deepEqual(out.generated.ids, greedy, kind);
    assert.ok(maxAbsDiff(Float32Array.from(out.promptAttention.flat(3)), ref['prompt.attentions'].data) <= tol('prompt.attentions'), kind);
    r = run('heads', '--model', folder(kind), '--role-tokens', '20', '--role-seed', '7', '--json');
    assert.equal(r.status, 0, r.stderr);
    const heads = JSON.parse(r.stdout);
    assert.deepEqual(heads.tokens, Array.from(ref['roles.input_ids'].data), kind);
    for (const role of ['previous', 'first', 'induction']) {
      assert.ok(maxAbsDiff(Float32Array.from(heads[role].flat()), ref[`roles.${role}`].data) <= tol(`roles.${role}`), `${kind} ${role}`);
    }
  }
});

test('a llama or qwen2 config this decoder does not compute exits 2 with one line naming the field', () => {
  const edited = (kind, change) => {
    const dir = mkdtempSync(path.join(tmpdir(), `attnlab-${kind}-`));
    cpSync(folder(kind), dir, { recursive: true });
    const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, ...change }));
    return dir;
  };
  for (const [kind, change, message] of [
    ['qwen2', { use_sliding_window: true }, /^attnlab: config\.json: "use_sliding_window" is true and "sliding_window" is 64; this decoder attends to every earlier token \(no sliding window\)\n$/],
    ['llama', { rope_scaling: { rope_type: 'dynamic', factor: 2 } }, /^attnlab: config\.json: rope_scaling's rope_type is "dynamic"; this decoder computes rotary positions unscaled, "linear" or "llama3" only\n$/],
  ]) {
    const r = run('generate', '--model', edited(kind, change), '--text', 'The dog');
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, message);
  }
});
