// The Scaled dot-product lab through the WASM module (issue 12): every stage against PyTorch
// (tests/fixtures/make_scaled_fixtures.py: notebook 04's SimpleAttention, notebook 03's SelfAttention in
// eval mode with no, causal and padding masks) on each build and both CPU kernels, and on WebGPU
// (Dawn on SwiftShader) through the same KernelRunner as the page; the lab's sections as the worker
// runs them (edits, masks, dropout, the saturation curve, the tables' extremes); the messages for bad
// input; and `attnlab train --lab scaled`, which has nothing to train.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { BUILDS, lab, fixture, assertClose, nodeWebGpuAttention } from './support.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { scaledLab } from '../../web/labs/04_scaled.js';
import { causalMask, parseSentences, tokenLabels, tokenize, MAX_TOKENS } from '../../web/labs/04_scaled_sections.js';
import { defaultValues } from '../../web/shared/properties.js';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const f = fixture('scaled_dot_product.safetensors');
// 1e-6 (the issue's), or twice PyTorch's own float32-vs-float64 error where that is larger.
const tol = (key) => Math.max(1e-6, 2 * f[`err/${key}`].data[0]);
const N = 2, L = 6, E = 8, LENGTHS = [6, 4];
const PARAMS = ['query.weight', 'query.bias', 'key.weight', 'key.bias', 'value.weight', 'value.bias'];

/** PyTorch's NaN (a row with no key) must be 0 in ours; everything else within tolerance. */
function assertMatches(ours, key) {
  const torch = f[key].data;
  assert.equal(ours.length, torch.length, `${key}: length`);
  const t = tol(key);
  for (let i = 0; i < torch.length; i++) {
    if (Number.isNaN(torch[i])) assert.equal(ours[i], 0, `${key}[${i}]: a fully masked row is 0 here (NaN in PyTorch)`);
    else if (!Number.isFinite(torch[i])) assert.equal(ours[i], torch[i], `${key}[${i}]`);
    else assert.ok(Math.abs(ours[i] - torch[i]) <= t, `${key}[${i}]: ours ${ours[i]}, torch ${torch[i]}, tolerance ${t}`);
  }
}

function additiveMasks() {
  const causal = new Float32Array(N * L * L), padding = new Float32Array(N * L * L);
  for (let b = 0; b < N; b++) {
    causal.set(causalMask(L), b * L * L);
    for (let t = 0; t < L; t++) for (let s = 0; s < L; s++) if (t >= LENGTHS[b] || s >= LENGTHS[b]) padding[(b * L + t) * L + s] = -Infinity;
  }
  return { none: undefined, causal, padding };
}

/** The notebooks' cases through `attention` (a KernelRunner's forward: any backend). */
async function checkAgainstTorch(m, attention) {
  const q = f['simple/q'].data, k = f['simple/k'].data, v = f['simple/v'].data;
  for (const name of ['none', 'causal']) {
    const mask = name === 'causal' ? causalMask(5) : undefined;
    const stages = m.attentionScoreStages({ T: 5, S: 5, D: 4, q, k, scale: 0.5, mask });
    for (const stage of ['scores', 'scaled', 'masked']) assertMatches(stages[stage], `simple/${name}/${stage}`);
    const { weights, out } = await attention({ B: 1, H: 1, T: 5, S: 5, D: 4, q, k, v, scale: 0.5, mask });
    assertMatches(weights, `simple/${name}/weights`);
    assertMatches(out, `simple/${name}/output`);
  }
  const layer = new m.SelfAttention(E, { dropout: 0.1, seed: 0 });
  try {
    assert.deepEqual(layer.parameterNames(), PARAMS);
    for (const p of PARAMS) layer.setParameter(p, f[`self/init/${p}`].data);
    for (const [name, mask] of Object.entries(additiveMasks())) {
      const { q: Q, k: K, v: V, softmax, weights, output } = await layer.forwardWith(f['self/x'].data, { batch: N, length: L, mask, train: false }, attention);
      assertClose(Q, f['self/q'].data, tol('self/q'), 'Q');
      assertClose(K, f['self/k'].data, tol('self/k'), 'K');
      assertClose(V, f['self/v'].data, tol('self/v'), 'V');
      assertMatches(weights, `self/${name}/weights`);
      assert.deepEqual(weights, softmax, 'eval mode: no dropout, the kernel\'s weights');
      assertMatches(output, `self/${name}/output`);
    }
  } finally {
    layer.delete();
  }
}

for (const build of BUILDS) {
  for (const backend of ['scalar', 'simd']) {
    test(`scaled vs PyTorch [${build} build, ${backend} kernel]: QK^T, / sqrt(d_k), the mask, softmax, output; SelfAttention with no, causal, padding masks`, async () => {
      const m = await lab(build);
      const runner = new KernelRunner({ module: m, request: { requested: backend } });
      await checkAgainstTorch(m, (args) => runner.forward(args));
    });
  }
}

let gpuAttention = null;
after(() => gpuAttention?.destroy());

test('scaled vs PyTorch on the WebGPU kernel (Dawn on SwiftShader): the same fixtures, the same tolerance', async () => {
  gpuAttention = await nodeWebGpuAttention();
  const m = await lab('simd');
  const runner = new KernelRunner({ module: m, request: { requested: 'webgpu', gpu: { attention: gpuAttention, reason: 'ok' } } });
  let backend = null;
  await checkAgainstTorch(m, async (args) => {
    const r = await runner.forward(args);
    backend = r.choice.backend;
    return r;
  });
  assert.equal(backend, 'webgpu');
});

// ---- the lab's sections, as the worker runs them ----

async function sectionContext(build = 'simd') {
  const m = await lab(build);
  const runner = new KernelRunner({ module: m, request: { requested: 'simd' } });
  return { module: m, backend: `simd:${build}`, attention: (args) => runner.forward(args), rng: (seed) => new m.Rng(seed) };
}
const section = (id) => scaledLab.sections.find((s) => s.id === id);
const defaults = defaultValues(scaledLab.properties);

test('step by step: the stages chain (scaled = scores x 1/sqrt(d_k), rows of the softmax sum to 1, output = weights V); an edit changes everything after it and nothing before', async () => {
  const ctx = await sectionContext();
  const steps = section('steps');
  const v = { ...defaults };
  const r = await steps.compute(ctx, v, { key: null, cells: {} });
  assert.equal(r.T, 5);
  assert.equal(r.D, 4);
  assert.equal(r.choice.backend, 'simd128');
  for (let i = 0; i < 25; i++) assert.equal(r.scaled[i], Math.fround(r.scores[i] * Math.fround(0.5)));
  for (let t = 0; t < 5; t++) {
    const sum = r.weights.slice(t * 5, t * 5 + 5).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-6, `row ${t} sums to ${sum}`);
    for (let d = 0; d < 4; d++) {
      let o = 0;
      for (let s = 0; s < 5; s++) o += r.weights[t * 5 + s] * r.v[s * 4 + d];
      assert.ok(Math.abs(o - r.out[t * 4 + d]) < 1e-5);
    }
  }
  // The same draw, the same matrices (bit for bit).
  const again = await steps.compute(ctx, v, { key: null, cells: {} });
  assert.deepEqual(again.weights, r.weights);
  // Edit K[2][1]: column 2 of QK^T changes, so every row of weights and every output; Q and V do not.
  const key = `${v.draw}/${v.tokens}/${v.dk}`;
  const edited = await steps.compute(ctx, v, { key, cells: { 'k:2:1': 3.5 } });
  assert.deepEqual(edited.edited, ['k:2:1']);
  assert.equal(edited.k[2 * 4 + 1], 3.5);
  assert.deepEqual(edited.q, r.q);
  assert.deepEqual(edited.v, r.v);
  for (let t = 0; t < 5; t++) {
    assert.notEqual(edited.scores[t * 5 + 2], r.scores[t * 5 + 2], `score (${t}, 2) follows the edit`);
    assert.equal(edited.scores[t * 5 + 0], r.scores[t * 5 + 0], `score (${t}, 0) does not`);
  }
  assert.notDeepEqual(edited.weights, r.weights);
  assert.notDeepEqual(edited.out, r.out);
  // Edits of another draw are ignored (a re-roll starts clean).
  const other = await steps.compute(ctx, { ...v, draw: 1 }, { key, cells: { 'k:2:1': 3.5 } });
  assert.deepEqual(other.edited, []);
});

test('step by step: the causal mask blocks exactly the keys after each query (-inf, weight 0), rows still sum to 1', async () => {
  const ctx = await sectionContext();
  const r = await section('steps').compute(ctx, { ...defaults, stepMask: 'causal' }, null);
  for (let t = 0; t < 5; t++) {
    let sum = 0;
    for (let s = 0; s < 5; s++) {
      const w = r.weights[t * 5 + s];
      sum += w;
      if (s > t) {
        assert.equal(r.masked[t * 5 + s], -Infinity);
        assert.equal(w, 0);
      } else assert.ok(w > 0);
    }
    assert.ok(Math.abs(sum - 1) < 1e-6);
  }
  assert.equal(r.weights[0], 1, 'the first query sees only itself');
});

test('the sqrt(d_k) demonstration: without the scale the mean entropy falls as d_k grows, with it it stays near its d_k = 1 value; var(q.k) ~ d_k', async () => {
  const ctx = await sectionContext();
  const r = await section('steps').compute(ctx, { ...defaults, dk: 64 }, null);
  const at = (dk) => r.curve.find((p) => p.dk === dk);
  assert.deepEqual(r.curve.map((p) => p.dk), [1, 2, 4, 8, 16, 32, 64, 128, 256]);
  for (let i = 1; i < r.curve.length; i++) assert.ok(r.curve[i].unscaled < r.curve[i - 1].unscaled + 0.02, `unscaled entropy falls: ${JSON.stringify(r.curve)}`);
  assert.ok(at(256).unscaled < 0.35 * at(1).unscaled, `unscaled at 256: ${at(256).unscaled}, at 1: ${at(1).unscaled}`);
  for (const p of r.curve) {
    assert.ok(Math.abs(p.scaled - at(1).scaled) < 0.15 * Math.log(5), `scaled entropy stays: ${p.dk} -> ${p.scaled}`);
    // All pairs of 160 random q and 160 random k: within 15% of d_k, or 40% where d_k <= 2 (few numbers)
    assert.ok(Math.abs(p.variance / p.dk - 1) < (p.dk <= 2 ? 0.4 : 0.15), `var(q.k) at d_k = ${p.dk}: ${p.variance}`);
  }
  // An odd d_k is on the curve too (the readout's own point).
  const odd = await section('steps').compute(ctx, { ...defaults, dk: 37 }, null);
  assert.ok(odd.curve.some((p) => p.dk === 37));
});

test('sentence: tokens, subscripts for repeated words; one random vector per position (the notebook) or per word (identical rows for a repeated word); causal and padding masks; dropout in train mode', async () => {
  assert.deepEqual(tokenize('The cat sat on the mat.'), ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']);
  assert.deepEqual(tokenLabels(['The', 'cat', 'sat', 'on', 'the', 'mat']), ['The₀', 'cat', 'sat', 'on', 'the₄', 'mat']);
  assert.deepEqual(tokenLabels(Array(12).fill('a')).slice(10), ['a₁₀', 'a₁₁']);
  const ctx = await sectionContext();
  const s = section('sentence');
  const r = await s.compute(ctx, { ...defaults }, null);
  assert.deepEqual(r.sentences, [['The', 'cat', 'sat', 'on', 'the', 'mat']]);
  // The notebook's x = torch.randn(batch_size, seq_len, hidden_dim): one vector per position, so "The" and
  // "the" get different rows of weights; with one vector per word they share one, and their rows are the same.
  assert.equal(defaults.embeddings, 'position');
  assert.notDeepEqual(Array.from(r.weights.slice(0, 6)), Array.from(r.weights.slice(4 * 6, 5 * 6)));
  const perWord = await s.compute(ctx, { ...defaults, embeddings: 'word' }, null);
  assert.deepEqual(perWord.weights.slice(0, 6), perWord.weights.slice(4 * 6, 5 * 6));
  const causal = await s.compute(ctx, { ...defaults, sentenceMask: 'causal' }, null);
  for (let t = 0; t < 6; t++) for (let u = t + 1; u < 6; u++) assert.equal(causal.weights[t * 6 + u], 0);
  const padded = await s.compute(ctx, { ...defaults, text: 'The cat sat on the mat | A dog barked', sentenceMask: 'padding' }, null);
  assert.equal(padded.L, 6);
  const second = padded.weights.slice(36, 72);
  for (let t = 0; t < 6; t++) {
    const row = second.slice(t * 6, t * 6 + 6);
    if (t >= 3) assert.deepEqual(Array.from(row), [0, 0, 0, 0, 0, 0], `padding row ${t} is zeros`);
    else {
      assert.deepEqual(Array.from(row.slice(3)), [0, 0, 0], `no weight on the padding (row ${t})`);
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6);
    }
  }
  // Without the padding mask, real words give weight to the padding.
  const unmasked = await s.compute(ctx, { ...defaults, text: 'The cat sat on the mat | A dog barked' }, null);
  assert.ok(unmasked.weights[36 + 3] > 0);
  // Train mode: about p of the weights are 0, the others are the eval weights / (1 - p); the same draw, the same bits.
  const p = 0.5;
  const train = await s.compute(ctx, { ...defaults, mode: 'train', dropout: p }, null);
  let zeros = 0;
  train.weights.forEach((w, i) => {
    if (w === 0) zeros++;
    else assert.ok(Math.abs(w - r.weights[i] / (1 - p)) < 1e-6);
  });
  assert.ok(zeros > 5 && zeros < 31, `${zeros} of 36 dropped at p = 0.5`);
  assert.deepEqual((await s.compute(ctx, { ...defaults, mode: 'train', dropout: p }, null)).weights, train.weights);
  assert.notDeepEqual((await s.compute(ctx, { ...defaults, mode: 'train', dropout: p, dropDraw: 1 }, null)).weights, train.weights);
  // Issue 45, item 2: notebook 03 drew its heatmap in train mode (never eval()): said beside the heatmap.
  const said = (result, values) => s.figures(result, values).find((f) => f.id === 'dropout').text;
  assert.match(said(r, defaults), /Notebook 03's own heatmap is not this one: its SelfAttention is never put in eval\(\), so it drew the weights after dropout 0\.1/);
  assert.match(said(train, { ...defaults, mode: 'train', dropout: p }), /This is how notebook 03 drew its heatmap/);
});

test('sections at the extremes of the property table compute (the largest d_k, tokens, embedding, a 32-token sentence, 4 sentences)', async () => {
  const ctx = await sectionContext();
  const max = (name) => scaledLab.properties.find((p) => p.name === name).max;
  const r = await section('steps').compute(ctx, { ...defaults, tokens: max('tokens'), dk: max('dk'), scaled: false }, null);
  assert.equal(r.weights.length, max('tokens') ** 2);
  const long = Array.from({ length: MAX_TOKENS }, (_, i) => `w${i}`).join(' ');
  const text = [long, 'a b', 'c d e', 'f'].join(' | ');
  const s = await section('sentence').compute(ctx, { ...defaults, text, embedDim: max('embedDim'), sentenceMask: 'padding', mode: 'train', dropout: max('dropout') }, null);
  assert.equal(s.L, MAX_TOKENS);
  assert.equal(s.weights.length, 4 * MAX_TOKENS * MAX_TOKENS);
});

test('sentence: bad text gets a message that names the problem', async () => {
  assert.match(parseSentences('  ').error, /Type a sentence/);
  assert.match(parseSentences(Array(33).fill('x').join(' ')).error, /Sentence 1 has 33 tokens: at most 32/);
  assert.match(parseSentences('a | b | c | d | e').error, /5 sentences: at most 4/);
  const ctx = await sectionContext();
  await assert.rejects(section('sentence').compute(ctx, { ...defaults, text: Array(40).fill('x').join(' ') }, null), /Sentence 1 has 40 tokens/);
});

test('the bindings refuse bad input with a message that names it, and keep working', async () => {
  const m = await lab('simd');
  const q = new Float32Array(8), k = new Float32Array(8);
  assert.throws(() => m.attentionScoreStages({ T: 2, S: 2, D: 4, q, k: new Float32Array(7), scale: 1 }), /k must have 8 elements \(S=2 x D=4\), got 7|k.*8.*7/);
  assert.throws(() => m.attentionScoreStages({ T: 2, S: 2, D: 4, q: Float32Array.of(NaN, 0, 0, 0, 0, 0, 0, 0), k, scale: 1 }), /q contains NaN at index 0/);
  assert.throws(() => m.attentionScoreStages({ T: 2, S: 2, D: 4, q, k, scale: NaN }), /scale must be a finite number/);
  assert.throws(() => m.attentionScoreStages({ T: 2, S: 2, D: 4, q, k, scale: 1, mask: Float32Array.of(0, NaN, 0, 0) }), /mask\[1\] must be a finite number or -Infinity/);
  assert.throws(() => new m.SelfAttention(8, { dropout: 1.5 }), /dropout must be in \[0, 1\]/);
  assert.throws(() => new m.SelfAttention(0), /input_dim/);
  const layer = new m.SelfAttention(4, { seed: 1 });
  try {
    const kernel = (args) => m.attentionForward({ ...args, backend: 'scalar' });
    assert.equal(layer.raw._finish_call(new Float32Array(4), new Float32Array(8)), 'no forward pass is under way: begin one first');
    await assert.rejects(layer.forwardWith(new Float32Array(7), { batch: 1, length: 2 }, kernel), /input must have 8 elements/);
    await assert.rejects(layer.forwardWith(new Float32Array(8), { batch: 1, length: 2, mask: Float32Array.of(0, NaN, 0, 0) }, kernel), /mask\[1\] must be a finite number or -Infinity/);
    await assert.rejects(layer.forwardWith(new Float32Array(8), { batch: 1, length: 2, mask: new Float32Array(3) }, kernel), /mask must have 4 elements/);
    await assert.rejects(layer.forwardWith(new Float32Array(8), { batch: 1, length: 2 }, () => ({ weights: Float32Array.of(0.5, 0.5, 2, 0), out: new Float32Array(8) })), /weights\[2\]/);
    const { output } = await layer.forwardWith(new Float32Array(8), { batch: 1, length: 2 }, kernel);
    assert.equal(output.length, 8);
  } finally {
    layer.delete();
  }
  assert.deepEqual(Array.from(m.rowEntropies(Float32Array.of(0.5, 0.5, 1, 0), 2, 2)).map((h) => Number(h.toFixed(6))), [Number(Math.log(2).toFixed(6)), 0]);
});

test('attnlab train --lab scaled: exit 2, a message that points to attnlab attention; attnlab labs lists it', () => {
  const cli = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
  let failure = null;
  try {
    execFileSync(process.execPath, [cli, 'train', '--lab', 'scaled'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    failure = error;
  }
  assert.equal(failure?.status, 2);
  assert.match(failure.stderr, /--lab scaled: the Scaled dot-product lab trains nothing; its headless side is `attnlab attention/);
  const labs = execFileSync(process.execPath, [cli, 'labs'], { encoding: 'utf8' });
  assert.match(labs, /^scaled\s+Scaled dot-product .*\[no training: attnlab attention/m);
});
