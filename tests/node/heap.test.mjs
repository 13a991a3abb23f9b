// No leaks: the WASM heap in use does not grow across 1,000 calls, nor across 1,000 objects made and
// deleted, nor across 1,000 rejected calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';

const m = await lab('simd');

function assertFlat(label, fn) {
  fn(); // warm up: first-call buffers are allowed
  const before = m.heapBytesInUse();
  for (let i = 0; i < 1000; i++) fn(i);
  const after = m.heapBytesInUse();
  assert.ok(after <= before, `${label}: heap grew from ${before} to ${after} bytes over 1,000 calls`);
}

test('MultiheadAttention forward + backward 1,000 times', () => {
  const mha = new m.MultiheadAttention(16, 4, { seed: 1 });
  const q = new Float32Array(2 * 5 * 16).fill(0.1), kv = new Float32Array(2 * 7 * 16).fill(0.2);
  const g = new Float32Array(2 * 5 * 16).fill(1);
  assertFlat('mha', () => {
    mha.forward({ batch: 2, queryLength: 5, keyLength: 7, query: q, key: kv, value: kv });
    mha.backward(g);
  });
  mha.delete();
});

test('making and deleting layers and optimisers 1,000 times', () => {
  assertFlat('objects', (i) => {
    const lin = new m.Linear(8, 8, { seed: i ?? 0 });
    const emb = new m.Embedding(10, 8);
    const adam = new m.Adam([lin, emb]);
    adam.step();
    adam.delete();
    lin.delete();
    emb.delete();
  });
});

test('rejected calls leak nothing', () => {
  const mha = new m.MultiheadAttention(8, 2);
  const bad = new Float32Array(3);
  assertFlat('errors', () => {
    assert.throws(() => mha.forward({ batch: 1, queryLength: 1, keyLength: 1, query: bad, key: bad, value: bad }));
    assert.throws(() => m.crossEntropy(bad, Int32Array.of(9), 3));
  });
  mha.delete();
});

test('kernel and loss calls 1,000 times', () => {
  const args = { B: 1, H: 2, T: 4, S: 4, D: 4, q: new Float32Array(32), k: new Float32Array(32), v: new Float32Array(32) };
  assertFlat('kernel', () => {
    m.attentionForward(args);
    m.crossEntropy(new Float32Array(6), Int32Array.of(0, 1), 3);
    m.relu(new Float32Array(10));
  });
});
