// Bad input gets an AttnLabError whose message names the argument and the expected value, and the
// instance keeps working: the same valid call before and after gives the same numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';

const m = await lab('simd');
const E = 8, H = 2, B = 2, T = 3, S = 4;

function validArgs() {
  const rng = new m.Rng(3);
  const fill = (n) => Float32Array.from({ length: n }, () => rng.normal());
  const args = { batch: B, queryLength: T, keyLength: S, query: fill(B * T * E), key: fill(B * S * E), value: fill(B * S * E) };
  rng.delete();
  return args;
}

function expectError(fn, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.name, 'AttnLabError');
    assert.equal(e.message, message);
    return true;
  });
}

test('MultiheadAttention: every bad input names the argument, and the instance keeps working', () => {
  const mha = new m.MultiheadAttention(E, H, { seed: 1 });
  const args = validArgs();
  const before = mha.forward(args).output;
  const bad = (patch, message) => expectError(() => mha.forward({ ...args, ...patch }), message);
  bad({ query: new Float32Array(5) }, 'query must have 48 elements [B=2, T=3, E=8], got 5');
  bad({ key: new Float32Array(3) }, 'key must have 64 elements [B=2, S=4, E=8], got 3');
  bad({ value: 'abc' }, 'value must be a Float32Array (or an array of numbers), got string');
  bad({ value: undefined }, 'value must be a Float32Array (or an array of numbers), got undefined');
  bad({ batch: 0 }, 'batch must be a positive integer, got 0');
  bad({ batch: -3 }, 'batch must be a positive integer, got -3');
  bad({ queryLength: 2.5 }, 'queryLength must be an integer, got 2.5');
  bad({ keyLength: 5000 }, 'keyLength must be at most 4096, got 5000');
  const nan = args.query.slice();
  nan[7] = NaN;
  bad({ query: nan }, 'query contains NaN at index 7');
  const inf = args.key.slice();
  inf[2] = Infinity;
  bad({ key: inf }, 'key contains +Infinity at index 2');
  const huge = args.value.slice();
  huge[1] = 1e30;
  bad({ value: huge }, 'value[1] = 1e+30 is too large: values must lie in [-1e6, 1e6]');
  bad({ keyPaddingMask: new Uint8Array(3) }, 'keyPaddingMask must have 8 elements, got 3');
  bad({ attnMask: new Float32Array(5) }, 'attnMask must have 12 or 48 elements, got 5');
  const nanMask = new Float32Array(12);
  nanMask[4] = NaN;
  bad({ attnMask: nanMask }, 'attnMask[4] must be a finite number or -Infinity (an additive mask), got NaN');
  bad({ backend: 'cuda' }, "backend must be one of scalar, simd128, webgpu, got 'cuda'");
  expectError(() => mha.forward(), 'forward takes one object {batch, queryLength, keyLength, query, key, value, ...}');
  expectError(() => mha.backward(new Float32Array(3)), 'dOutput must have 48 elements [B=2, T=3, E=8], got 3');
  expectError(() => mha.setParameter('in_proj_weight', new Float32Array(10)),
    'in_proj_weight must have 192 elements [rows=24, cols=8], got 10');
  expectError(() => mha.setParameter('q_proj', new Float32Array(10)),
    "unknown parameter 'q_proj': this layer has in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias");
  // the same valid call gives the same numbers: no state was touched
  assert.deepEqual(mha.forward(args).output, before);
  mha.delete();
});

test('a fully masked row gives zero weights and output where PyTorch gives NaN', () => {
  const mha = new m.MultiheadAttention(E, H, { seed: 1 });
  const args = validArgs();
  const mask = new Uint8Array(B * S);
  mask.fill(1, 0, S); // batch 0: every key is padding
  const { weights, output } = mha.forward({ ...args, keyPaddingMask: mask });
  assert.ok(weights.slice(0, H * T * S).every((w) => w === 0));
  assert.ok(output.every(Number.isFinite));
  mha.delete();
});

test('constructors refuse bad sizes with the expected value', () => {
  expectError(() => new m.MultiheadAttention(30, 4), 'embed_dim (30) must be divisible by num_heads (4)');
  expectError(() => new m.MultiheadAttention(0, 1), 'embed_dim must be a positive integer, got 0');
  expectError(() => new m.MultiheadAttention(8, -2), 'num_heads must be a positive integer, got -2');
  expectError(() => new m.MultiheadAttention(8.5, 2), 'embed_dim must be an integer, got 8.5');
  expectError(() => new m.Linear(0, 3), 'in_features must be a positive integer, got 0');
  expectError(() => new m.Embedding(10, 0), 'embedding_dim must be a positive integer, got 0');
  expectError(() => new m.Linear(3, 3, { seed: -1 }), 'seed must be an integer in [0, 4294967295], got -1');
  expectError(() => new m.Adam([], { lr: NaN }), 'Adam option lr must be a finite number, got number');
  expectError(() => new m.Adam([], { beta1: 1 }), 'Adam option beta1 must be in [0, 1), got 1.000000');
});

test('layers and losses: token ids out of range, lengths, probabilities', () => {
  const emb = new m.Embedding(32, 4, { seed: 2 });
  const ok = emb.forward(Int32Array.of(1, 2, 3));
  expectError(() => emb.forward(Int32Array.of(1, 40)), 'ids[1] = 40 is out of range: token ids must be in [0, 32)');
  expectError(() => emb.forward([1, -1]), 'ids[1] = -1 is out of range: token ids must be in [0, 32)');
  expectError(() => emb.forward([1.5]), 'ids[0] must be a whole number in [-2147483648, 2147483647], got 1.5');
  expectError(() => emb.forward([1, 2 ** 32 + 5]), 'ids[1] must be a whole number in [-2147483648, 2147483647], got 4294967301'); // once reported as id -1
  assert.deepEqual(emb.forward(Int32Array.of(1, 2, 3)), ok);
  emb.delete();
  const lin = new m.Linear(3, 2);
  expectError(() => lin.forward(new Float32Array(5), 2), 'input must have 6 elements [N=2, in_features=3], got 5');
  expectError(() => lin.backward(new Float32Array(4)), 'Linear.backward needs a forward pass first');
  lin.delete();
  expectError(() => m.crossEntropy(new Float32Array(6), Int32Array.of(0, 3), 3),
    'targets[1] = 3 is out of range: token ids must be in [0, 3)');
  expectError(() => m.binaryCrossEntropy(Float32Array.of(0.5, 1.5), Float32Array.of(0, 1)),
    'probabilities[1] = 1.5 must lie in [0, 1]');
  expectError(() => m.mse(new Float32Array(2), new Float32Array(3)), 'target must have 2 elements (same as prediction), got 3');
  expectError(() => m.attentionForward({ B: 1, H: 1, T: 1, S: 1, D: 0 }), 'D must be a positive integer, got 0');
  assert.equal(m.mse(Float32Array.of(1, 2), Float32Array.of(1, 4)).loss, 2);
});

test('a deleted object says so instead of crashing', () => {
  const lin = new m.Linear(2, 2);
  lin.delete();
  expectError(() => lin.forward(new Float32Array(2), 1), 'this Linear was deleted');
});

test('own input at the binding edge: ids beyond int32 and fractional queries are named, never wrapped or truncated', () => {
  const copy = new m.AlignmentTrainer({ task: 'copy', seed: 1 });
  const pointer = new m.AlignmentTrainer({ task: 'pointer', seed: 1 });
  const before = copy.inspect({ tokens: [1, 2, 3] });
  expectError(() => copy.inspect({ tokens: [1, 2, 2 ** 32 + 5] }), 'tokens[2] must be a whole number in [-2147483648, 2147483647], got 4294967301');
  expectError(() => copy.inspect({ tokens: [1, 2.5] }), 'tokens[1] must be a whole number in [-2147483648, 2147483647], got 2.5');
  expectError(() => pointer.inspect({ keys: [1, 2], values: [13, 14], query: 1.9 }), 'query must be a key (a whole number), got 1.9');
  expectError(() => pointer.inspect({ keys: [1, 2], values: [13, 14], query: '2' }), 'query must be a key (a whole number), got a string');
  expectError(() => pointer.inspect({ keys: [1, 2 ** 31], values: [13, 14], query: 1 }), 'keys[1] must be a whole number in [-2147483648, 2147483647], got 2147483648');
  expectError(() => m.crossEntropy(new Float32Array(4), [0, 1e10], 2), 'targets[1] must be a whole number in [-2147483648, 2147483647], got 10000000000');
  assert.deepEqual(copy.inspect({ tokens: [1, 2, 3] }), before, 'the trainer keeps working, unchanged');
  copy.delete();
  pointer.delete();
});
