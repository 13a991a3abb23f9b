// The Lookup lab's section 5, notebook 02's nn.MultiheadAttention(16, 1, batch_first=True) on a batch of 4
// (issue 28): the section's weights and output are the layer's maths, recomputed here in float64 from
// the layer's own parameters (Q = X_q W_qᵀ + b_q, ..., softmax(QKᵀ/√E) V, then out_proj), for cross-
// attention (X_q (4, 1, 16) and X_k, X_v (4, 100, 16): weights (4, 1, 100), output (4, 1, 16)) and
// self-attention (X (4, 100, 16) three times: (4, 100, 100), (4, 100, 16)). The layer itself is checked
// against PyTorch in multihead_attention's tests (tests/fixtures/mha_*.safetensors). The figure names the
// weights' shape as the notebook prints it (average_attn_weights=False: (4, 1, 1, 100)), and question 6.2
// expects that same shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';
import { lookupLab } from '../../web/labs/02_lookup.js';
import { SECTIONS, mhaWeightsShape, multiheadLookup } from '../../web/labs/02_lookup_sections.js';
import { judgeAnswer } from '../../web/ui/answer_check.js';
import { defaultValues } from '../../web/shared/properties.js';

/** nn.MultiheadAttention with one head, in float64: {weights [B,T,S], output [B,T,E]}. */
function reference(p, E, B, T, S, xq, xk, xv) {
  const W = p.in_proj_weight, b = p.in_proj_bias, Wo = p['out_proj.weight'], bo = p['out_proj.bias'];
  const project = (x, rows, part) => {
    const out = new Float64Array(rows * E);
    for (let r = 0; r < rows; r++) for (let o = 0; o < E; o++) {
      let s = b[part * E + o];
      for (let i = 0; i < E; i++) s += x[r * E + i] * W[(part * E + o) * E + i];
      out[r * E + o] = s;
    }
    return out;
  };
  const Q = project(xq, B * T, 0), K = project(xk, B * S, 1), V = project(xv, B * S, 2);
  const weights = new Float64Array(B * T * S), output = new Float64Array(B * T * E);
  for (let n = 0; n < B; n++) for (let t = 0; t < T; t++) {
    const row = weights.subarray((n * T + t) * S, (n * T + t + 1) * S);
    let max = -Infinity;
    for (let s = 0; s < S; s++) {
      let dot = 0;
      for (let e = 0; e < E; e++) dot += Q[(n * T + t) * E + e] * K[(n * S + s) * E + e];
      row[s] = dot / Math.sqrt(E);
      max = Math.max(max, row[s]);
    }
    let sum = 0;
    for (let s = 0; s < S; s++) sum += (row[s] = Math.exp(row[s] - max));
    for (let s = 0; s < S; s++) row[s] /= sum;
    const mixed = new Float64Array(E);
    for (let s = 0; s < S; s++) for (let e = 0; e < E; e++) mixed[e] += row[s] * V[(n * S + s) * E + e];
    for (let o = 0; o < E; o++) {
      let y = bo[o];
      for (let e = 0; e < E; e++) y += mixed[e] * Wo[o * E + e];
      output[(n * T + t) * E + o] = y;
    }
  }
  return { weights, output };
}

/** The section's inputs, drawn as it draws them (the module's seeded RNG, X_k then X_v then X_q). */
function inputsOf(module, draw, E, S, B) {
  const rng = new module.Rng(draw);
  const normals = (n) => Float32Array.from({ length: n }, () => rng.normal());
  const xk = normals(B * S * E), xv = normals(B * S * E), xq = normals(B * E);
  rng.delete();
  return { xq, xk, xv };
}

const close = (a, b, what) => {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  assert.ok(worst <= 1e-5, `${what}: largest difference ${worst}`);
};

for (const mode of ['cross', 'self']) {
  test(`Lookup section 5 (${mode}-attention): the notebook's shapes, and the layer's maths`, async () => {
    const module = await lab('simd');
    const values = { ...defaultValues(lookupLab.properties), mhaMode: mode, draw: 3 };
    assert.equal(values.vecSize, 16, 'the notebook\'s vec_size');
    const ctx = { module, backend: 'auto', rng: (seed) => new module.Rng(seed) };
    const r = multiheadLookup(ctx, values);
    const E = 16, S = 100, B = 4, T = mode === 'self' ? S : 1;
    assert.deepEqual([r.E, r.S, r.T], [E, S, T]);
    assert.equal(r.weights.length, B * T * S, `weights (${B}, ${T}, ${S})`);
    assert.equal(r.output.length, B * T * E, `output (${B}, ${T}, ${E})`);
    // The layer's parameters, from a layer made as the section makes it (the same seed).
    const layer = new module.MultiheadAttention(E, 1, { seed: values.draw });
    const p = layer.parameters();
    layer.delete();
    assert.deepEqual([...r.W.q, ...r.W.k, ...r.W.v], [...p.in_proj_weight], 'W_q, W_k, W_v are in_proj_weight\'s three blocks');
    const { xq, xk, xv } = inputsOf(module, values.draw, E, S, B);
    const want = mode === 'self' ? reference(p, E, B, T, S, xk, xk, xk) : reference(p, E, B, T, S, xq, xk, xv);
    close(r.weights, want.weights, 'attn_output_weights');
    close(r.output, want.output, 'attn_output');
    for (let row = 0; row < B * T; row++) {
      const sum = r.weights.slice(row * S, (row + 1) * S).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${row} sums to 1`);
    }
    // The same draw gives the same bits; another draw, other inputs.
    assert.deepEqual(multiheadLookup(ctx, values).output, r.output);
    assert.notDeepEqual(multiheadLookup(ctx, { ...values, draw: 4 }).output, r.output);
  });
}

test('Lookup section 5 and question 6.2 agree: the figure\'s attn_output_weights shape is the notebook\'s (4, 1, 1, 100), and the question expects it', async () => {
  const module = await lab('simd');
  const values = { ...defaultValues(lookupLab.properties), mhaMode: 'cross', draw: 3 };
  const ctx = { module, backend: 'auto', rng: (seed) => new module.Rng(seed) };
  const mha = SECTIONS.find((s) => s.id === 'mha');
  const figures = mha.figures(multiheadLookup(ctx, values));
  const title = figures.find((f) => f.id === 'mha-weights').title;
  assert.match(title, /^attn_output_weights \(4, 1, 1, 100\)/, 'average_attn_weights=False keeps the heads\' axis');
  assert.deepEqual(mhaWeightsShape(1), [4, 1, 1, 100]);
  const question = mha.questions.find((q) => q.number === '6.2');
  assert.deepEqual(question.ask.expected, mhaWeightsShape(1));
  assert.match(question.answer, /it is \(4, 1, 1, 100\), one map per head/);
  assert.deepEqual(judgeAnswer(question.ask, 'torch.Size([4, 1, 1, 100])').status, 'right');
  assert.deepEqual(judgeAnswer(question.ask, '(4, 1, 100)').status, 'wrong');
});
