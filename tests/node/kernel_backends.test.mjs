// The SIMD128 kernel against the scalar reference, both in the SIMD build of the WASM module, over a
// sweep of sizes around every vector width and tile size (4 rows by 8 columns) with and without masks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';
import {
  makeProblem, MASK_KINDS, assertForwardClose, assertBackwardClose, assertFullyMaskedRowsAreZero,
} from './attention_problems.mjs';

const FORWARD_TOL = 1e-5; // absolute: the SIMD softmax sums in a different order and uses a vector exp
const BACKWARD_TOL = 1e-4; // relative to the largest gradient

const DIMS = [1, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 65];
const LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 37, 64, 101];

const CASES = [];
let seed = 1;
for (const D of DIMS) {
  for (const T of LENGTHS) {
    const S = LENGTHS[(LENGTHS.indexOf(T) * 5 + DIMS.indexOf(D)) % LENGTHS.length];
    const mask = MASK_KINDS[seed % MASK_KINDS.length];
    CASES.push({ B: 1 + (seed % 2), H: 1 + (seed % 3), T, S, D, mask, dWeights: seed % 4 === 0, seed: seed++ });
  }
}
CASES.push({ B: 4, H: 16, T: 9, S: 11, D: 8, mask: 'masked', seed: seed++ }); // B*H = 64
CASES.push({ B: 1, H: 2, T: 256, S: 256, D: 64, mask: 'none', seed: seed++ });
CASES.push({ B: 1, H: 1, T: 300, S: 293, D: 33, mask: 'fully-masked', dWeights: true, seed: seed++ });

for (const c of CASES) {
  const p = makeProblem(c);
  test(`${p.name} simd128 vs scalar`, async () => {
    const m = await lab('simd');
    assert.ok(m.cpuBackends.includes('simd128'), `the SIMD build reports backends ${m.cpuBackends}`);
    const args = { B: p.B, H: p.H, T: p.T, S: p.S, D: p.D, q: p.q, k: p.k, v: p.v,
      mask: p.mask, maskStrideB: p.maskStrideB, maskStrideH: p.maskStrideH };
    const expected = m.attentionForward({ ...args, backend: 'scalar' });
    const actual = m.attentionForward({ ...args, backend: 'simd128' });
    assertForwardClose(actual, expected, FORWARD_TOL, p.name);
    assertFullyMaskedRowsAreZero(p, actual, p.name);
    const back = { ...args, weights: expected.weights, dOut: p.dOut, dWeights: p.dWeights };
    assertBackwardClose(m.attentionBackward({ ...back, backend: 'simd128' }),
      m.attentionBackward({ ...back, backend: 'scalar' }), BACKWARD_TOL, p.name);
  });
}
