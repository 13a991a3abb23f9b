// The layers from JS against plain JS arithmetic on small inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab, assertClose } from './support.mjs';

const m = await lab('simd');

test('Linear computes x W^T + b and its backward', () => {
  const lin = new m.Linear(3, 2, { seed: 4 });
  const W = Float32Array.of(1, 2, 3, -1, 0, 1);
  lin.setParameter('weight', W);
  lin.setParameter('bias', Float32Array.of(0.5, -0.5));
  const y = lin.forward(Float32Array.of(1, 1, 1, 2, 0, -1), 2);
  assertClose(y, [6.5, -0.5, -0.5, -3.5], 1e-6, 'forward');
  const dx = lin.backward(Float32Array.of(1, 0, 0, 1));
  assertClose(dx, [1, 2, 3, -1, 0, 1], 1e-6, 'dx = dy W');
  assertClose(lin.gradients().bias, [1, 1], 1e-6, 'db');
  assertClose(lin.gradients().weight, [1, 1, 1, 2, 0, -1], 1e-6, 'dW = dy^T x');
  assert.deepEqual(lin.parameterNames(), ['weight', 'bias']);
  assert.deepEqual(lin.parameterShape('weight'), [2, 3]);
  lin.delete();
});

test('Embedding looks up rows; relu and sigmoid', () => {
  const emb = new m.Embedding(4, 2);
  emb.setParameter('weight', Float32Array.of(0, 0, 1, 1, 2, 2, 3, 3));
  assertClose(emb.forward(Int32Array.of(3, 1)), [3, 3, 1, 1], 0, 'rows');
  emb.backward(Int32Array.of(3, 3), Float32Array.of(1, 2, 3, 4));
  assertClose(emb.gradients().weight, [0, 0, 0, 0, 0, 0, 4, 6], 0, 'scatter-add');
  emb.delete();
  assertClose(m.relu(Float32Array.of(-1, 0, 2)), [0, 0, 2], 0, 'relu');
  assertClose(m.reluBackward(Float32Array.of(-1, 0, 2), Float32Array.of(5, 5, 5)), [0, 0, 5], 0, 'relu grad');
  const s = m.sigmoid(Float32Array.of(0, 100, -100));
  assertClose(s, [0.5, 1, 0], 1e-7, 'sigmoid');
  assertClose(m.sigmoidBackward(Float32Array.of(0.5), Float32Array.of(1)), [0.25], 1e-7, 'sigmoid grad');
});

test('a seed reproduces parameters bit for bit; another seed does not', () => {
  const a = new m.MultiheadAttention(8, 2, { seed: 42 });
  const b = new m.MultiheadAttention(8, 2, { seed: 42 });
  const c = new m.MultiheadAttention(8, 2, { seed: 43 });
  assert.deepEqual(a.parameters(), b.parameters());
  assert.notDeepEqual(a.parameters().in_proj_weight, c.parameters().in_proj_weight);
  // PyTorch's init: xavier-uniform bound for in_proj_weight [3E, E], zero biases
  const bound = Math.sqrt(6 / (8 + 24));
  assert.ok(a.parameters().in_proj_weight.every((w) => Math.abs(w) <= bound));
  assert.ok(a.parameters().in_proj_bias.every((w) => w === 0));
  [a, b, c].forEach((x) => x.delete());
});

test('selectBackend explains its choice', () => {
  const r = m.selectBackend('auto', { simd128: true, webgpu: false, webgpuReason: 'no adapter' },
    { B: 1, H: 4, T: 16, S: 16, D: 8 });
  assert.deepEqual({ ...r }, { backend: 'simd128', reason: 'auto: WebGPU: no adapter -> SIMD128' });
});
