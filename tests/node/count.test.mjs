// The Count lab's trainer through the WASM module (issue 11): PyTorch parity of the forward pass, the loss
// and every gradient (tests/fixtures/make_count_fixtures.py) on both CPU kernels of each build; the
// staged step against train(); the hand-built exact solution; the records' shapes and messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, lab, fixture, assertClose } from './support.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';

const NAMES = ['query', 'embed.weight', 'WK.weight', 'WK.bias', 'WV.weight', 'WV.bias',
  'nn.0.weight', 'nn.0.bias', 'nn.2.weight', 'nn.2.bias'];
// The notebook's embedding and its alternative, one-hot + Linear(10, 5): embed.weight [5, 10] and embed.bias;
// and the notebook's model with other sizes (the settings embedDim, attDim, hidden).
const MODELS = [
  { embedding: 'embedding', f: fixture('count_attention_model.safetensors'), names: NAMES },
  { embedding: 'one-hot', f: fixture('count_one_hot_model.safetensors'), names: [...NAMES.slice(0, 2), 'embed.bias', ...NAMES.slice(2)] },
  { embedding: 'embedding', sizes: { embedDim: 8, attDim: 3, hidden: 18 }, f: fixture('count_sizes_model.safetensors'),
    names: NAMES },
];

for (const { embedding, sizes = {}, f, names } of MODELS) {
  const label = [embedding, ...Object.entries(sizes).map(([k, v]) => `${k} ${v}`)].join(', ');
  // 1e-5, or twice PyTorch's own float32-vs-float64 error where larger (as tests/core/test_count_torch.cpp)
  const tol = (key) => Math.max(1e-5, 2 * f[`err/${key}`].data[0]);
  for (const build of BUILDS) {
    for (const backend of ['scalar', 'simd128']) {
      test(`count[${label}] vs PyTorch [${build} build, ${backend} kernel]: weights, values, weighted, probability, loss, every gradient`, async () => {
        const m = await lab(build);
        const t = m.createTrainer('count', { seed: 0, embedding, ...sizes });
        try {
          assert.deepEqual(t.parameterNames(), names);
          for (const name of names) t.setParameter(name, f[`init/${name}`].data);
          const r = t.inspect({ batch: f.tokens.data, gradients: true }, { backend });
          assert.equal(r.N, 32);
          assertClose(r.weights, f.weights.data, tol('weights'), 'weights');
          assertClose(r.values, f.values.data, tol('values'), 'values');
          assertClose(r.weighted, f.weighted.data, tol('weighted'), 'weighted');
          assertClose(r.probability, f.probability.data, tol('probability'), 'probability');
          assert.ok(Math.abs(r.loss - f.loss.data[0]) <= tol('loss'), `loss ${r.loss} vs ${f.loss.data[0]}`);
          assert.deepEqual([...r.label], [...f.labels.data]);
          const g = t.gradients();
          for (const name of names) assertClose(g[name], f[`grad/${name}`].data, tol(`grad/${name}`), `grad/${name}`);
          assert.deepEqual(t.parameters()['nn.0.bias'], f['init/nn.0.bias'].data); // values unchanged
        } finally {
          t.delete();
        }
      });
    }
  }
}

test('count: one-hot + Linear is an embedding lookup of W^T + b: an Embedding model with those rows gives the same probabilities', async () => {
  const m = await lab('simd');
  const f = MODELS[1].f;
  const oneHot = m.createTrainer('count', { seed: 0, embedding: 'one-hot' });
  const lookup = m.createTrainer('count', { seed: 0 });
  try {
    for (const name of MODELS[1].names) oneHot.setParameter(name, f[`init/${name}`].data);
    for (const name of NAMES) lookup.setParameter(name, name === 'embed.weight' ? f['lookup_equivalent/embed.weight'].data : f[`init/${name}`].data);
    const a = oneHot.inspect({ batch: f.tokens.data }, { backend: 'scalar' });
    const b = lookup.inspect({ batch: f.tokens.data }, { backend: 'scalar' });
    assert.deepEqual(a.values, b.values);
    assert.deepEqual(a.probability, b.probability);
    // A Linear weight of the wrong shape is refused by name: the two models are not interchangeable files.
    assert.throws(() => lookup.setParameter('embed.weight', new Float32Array(49)), /embed\.weight/);
  } finally {
    oneHot.delete();
    lookup.delete();
  }
});

/** `steps` staged steps of trainer t on the SIMD128 kernel, as the page's WebGPU steps run: [{s (the kernel
 *  call's arguments), r (the step's result)}]. */
async function stagedSteps(m, t, steps) {
  const runner = new KernelRunner({ module: m, request: { requested: 'simd' } });
  const out = [];
  for (let i = 0; i < steps; i++) {
    let s = null;
    const r = await t.stepWith({
      forward: (args) => { s = args; return runner.forward(args, { call: 'step' }); },
      backward: (args) => runner.backward(args, { call: 'step' }),
    });
    out.push({ s, r });
  }
  return out;
}

test('count: createTrainer gives a CountTrainer; defaults; the staged step gives train()\'s bits', async () => {
  const m = await lab('simd');
  assert.ok(m.trainerIds().includes('count'));
  assert.deepEqual(m.CountTrainer.defaults(), { seed: 2, lr: 1e-4, batch: 100, embedding: 'embedding', embedDim: 5,
    attDim: 5, hidden: 200, steps: 5001 });
  const a = m.createTrainer('count', { seed: 3, lr: 1e-3 });
  const b = new m.CountTrainer({ seed: 3, lr: 1e-3 });
  assert.ok(a instanceof m.CountTrainer && a instanceof m.Trainer);
  const trained = a.train(4, { backend: 'simd128' });
  for (const [i, { s, r }] of (await stagedSteps(m, b, 4)).entries()) {
    assert.deepEqual([s.B, s.H, s.T, s.S, s.D, s.readWeights], [100, 1, 1, 10, 5, false]);
    assert.equal(r.step, i + 1);
    assert.equal(Math.fround(r.loss), trained.losses[i]);
  }
  assert.deepEqual(a.parameters(), b.parameters());
  assert.equal(a.config.steps, 5001);
  a.delete();
  b.delete();
});

test('count: other sizes (embedDim 8, attDim 3, hidden 18): the kernel call is 3 wide, the staged step gives train()\'s bits', async () => {
  const m = await lab('simd');
  const config = { seed: 4, embedDim: 8, attDim: 3, hidden: 18 };
  const a = m.createTrainer('count', config);
  const b = m.createTrainer('count', config);
  assert.deepEqual(a.parameters()['WK.weight'].length, 3 * 8);
  assert.equal(a.parameters()['nn.0.bias'].length, 18);
  const trained = a.train(3, { backend: 'simd128' });
  for (const [i, { s, r }] of (await stagedSteps(m, b, 3)).entries()) {
    assert.deepEqual([s.B, s.S, s.D], [100, 10, 3]);
    assert.equal(Math.fround(r.loss), trained.losses[i]);
  }
  assert.deepEqual(a.parameters(), b.parameters());
  a.delete();
  b.delete();
  assert.throws(() => m.createTrainer('count', { attDim: 65 }), /attDim must be an integer in \[1, 64\], got 65/);
});

test('count: the hand-built exact solution scores 100% on 10,000 sequences, ties included', async () => {
  const m = await lab('simd');
  const t = m.createTrainer('count', {});
  for (const [name, values] of Object.entries(t.parameters())) t.setParameter(name, new Float32Array(values.length));
  const embed = new Float32Array(50);
  embed[2 * 5 + 0] = 1; // digit 2 -> [1, 0, 0, 0, 0]
  embed[4 * 5 + 1] = 1; // digit 4 -> [0, 1, 0, 0, 0]
  t.setParameter('embed.weight', embed);
  t.setParameter('WV.weight', new Float32Array([1, -1, 0, 0, 0]));
  const w1 = new Float32Array(200), b1 = new Float32Array(200), w2 = new Float32Array(200);
  w1[0] = 1000;
  b1[0] = -50;
  w2[0] = 1;
  t.setParameter('nn.0.weight', w1);
  t.setParameter('nn.0.bias', b1);
  t.setParameter('nn.2.weight', w2);
  t.setParameter('nn.2.bias', new Float32Array([-5]));
  for (const backend of ['scalar', 'simd128']) {
    const e = t.evaluate({ samples: 10000 }, { backend });
    assert.equal(e.samples, 10000);
    assert.equal(e.accuracy, 1);
    assert.equal(e.tieAccuracy, 1);
    assert.ok(e.ties > 2500);
    assert.ok(Math.abs(e.massOn24 - e.uniformMassOn24) < 1e-5, 'flat attention');
  }
  const r = t.inspect({ tokens: [4, 2, 2, 0, 0, 0, 0, 0, 0, 0] });
  assert.ok(r.weights.every((w) => Math.abs(w - 0.1) < 1e-7));
  assert.deepEqual([...r.values], [-1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
  assert.ok(Math.abs(r.weighted[0] - 0.1) < 1e-6);
  assert.ok(r.probability[0] > 0.999);
  assert.equal(r.label[0], 1);
  t.delete();
});

test('count records: fixed sample, evaluation, inspect shapes and messages', async () => {
  const m = await lab('simd');
  const t = m.createTrainer('count', { seed: 4, batch: 16 });
  const sample = t.fixedSample();
  assert.ok(sample.tokens instanceof Int32Array && sample.tokens.length === 50);
  assert.deepEqual(t.data('fixedSample'), sample);
  const r = t.inspect({ batch: sample.tokens });
  assert.equal(r.N, 5);
  assert.ok(r.weights instanceof Float32Array && r.weights.length === 50);
  assert.ok(r.values instanceof Float32Array && r.values.length === 50);
  assert.equal(r.weighted.length, 5);
  assert.equal(r.probability.length, 5);
  assert.ok(r.label instanceof Int32Array && r.label.length === 5);
  const e = t.evaluate();
  assert.equal(e.samples, 10000);
  for (const key of ['accuracy', 'tieAccuracy', 'ties', 'loss', 'massOn24', 'uniformMassOn24', 'majority']) {
    assert.equal(typeof e[key], 'number', key);
  }
  assert.deepEqual(t.evaluate(), e);
  assert.throws(() => t.inspect({ tokens: [1, 2, 3] }), { message: 'tokens must hold 10 digits, got 3' });
  assert.throws(() => t.inspect({ tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }),
    { message: 'tokens[9] = 10 is not a digit: tokens must be in [0, 9]' });
  assert.throws(() => t.inspect({ tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9, 1.5] }),
    { message: 'tokens[9] must be a whole number in [-2147483648, 2147483647], got 1.5' });
  assert.throws(() => t.inspect({}), { message: 'inspect takes {tokens: 10 digits} or {batch: N * 10 digits}' });
  assert.throws(() => m.createTrainer('count', { batch: 0 }), { message: 'batch must be an integer in [1, 10000], got 0' });
  assert.throws(() => t.data('heldOut'), { message: "the Count trainer's data has one part, 'fixedSample', got 'heldOut'" });
  t.delete();
});

// Issue 45, item 4: a count of one is singular ("1 four", not "1 fours"), in the playground's summary
// and in a sequence's name on the heatmap.
test('count: "1 four" and "2 twos" in the words that count the digits', async () => {
  const { labById } = await import('../../web/labs/registry.js');
  const views = labById('count').views;
  const tokens = [2, 2, 4, 1, 1, 1, 1, 1, 1, 1];
  const inspection = { weights: Array(10).fill(0.1), values: Array(10).fill(0), probability: 0.7, weighted: 0.1 };
  const { summary } = views.tokenRows({}, { tokens }, inspection);
  assert.match(summary, /^2 twos, 1 four: the answer is yes\./);
  const { mean } = views.heatmaps({}, { tokens }, inspection);
  assert.match(mean.yNames[0], /^sequence 1: 2 twos, 1 four \(answer yes\)/);
});
