// The WebGPU backend (web/webgpu/) against the scalar WASM kernel, in Node through the npm 'webgpu'
// package (Dawn) on SwiftShader, Chromium's CPU Vulkan driver; on a machine with a GPU the same tests
// run on it. A missing package or driver FAILS these tests with the reason: CI installs Chromium.
//
// Sizes: head_dim 1..96, lengths 1..300 with primes, B*H 1..64, every mask kind, chosen to stay under
// about a minute on two cores with SwiftShader (a CPU runs these shaders about 100x slower than SIMD).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { lab } from './support.mjs';
import {
  makeProblem, assertForwardClose, assertBackwardClose, assertFullyMaskedRowsAreZero,
} from './attention_problems.mjs';
import { generateShaders } from '../../scripts/gen_shaders.mjs';
import { nodeGpu, SWIFTSHADER_ICD } from '../../web/webgpu/node_gpu.mjs';

const FORWARD_TOL = 1e-5; // absolute: the GPU's exp and summation order differ from the scalar loop's
const BACKWARD_TOL = 1e-4; // relative to the largest gradient

generateShaders(); // web/webgpu/shaders.generated.js is a build output (gitignored)
const { WebGpuAttention } = await import('../../web/webgpu/attention_webgpu.js');

let ready;
function gpuAttention() {
  ready ??= (async () => {
    const { gpu, reason } = await nodeGpu();
    if (!gpu) throw new Error(`WebGPU unavailable in Node: ${reason}`);
    const { attention, reason: why } = await WebGpuAttention.create({ gpu });
    if (!attention) {
      const icd = existsSync(SWIFTSHADER_ICD) ? '' : ` (no SwiftShader ICD at ${SWIFTSHADER_ICD}: install chromium)`;
      throw new Error(`WebGPU unavailable in Node: ${why}${icd}`);
    }
    return attention;
  })();
  return ready;
}
after(async () => {
  const attention = await ready?.catch(() => null);
  attention?.destroy();
});

const CASES = [
  // edges: one of everything, single key, single query, around the workgroup size (64)
  { B: 1, H: 1, T: 1, S: 1, D: 1 },
  { B: 1, H: 1, T: 1, S: 7, D: 3, mask: 'masked' },
  { B: 1, H: 1, T: 300, S: 1, D: 7 },
  { B: 1, H: 1, T: 1, S: 300, D: 12, mask: 'shared' },
  { B: 2, H: 3, T: 7, S: 13, D: 5, mask: 'masked' },
  { B: 1, H: 1, T: 4, S: 4, D: 4, dWeights: true },
  { B: 1, H: 2, T: 5, S: 3, D: 8, mask: 'fully-masked' },
  { B: 3, H: 1, T: 9, S: 17, D: 16, mask: 'shared', dWeights: true },
  { B: 2, H: 2, T: 16, S: 16, D: 17, mask: 'fully-masked' },
  { B: 1, H: 4, T: 31, S: 29, D: 31, mask: 'per-head' },
  { B: 4, H: 4, T: 3, S: 37, D: 9, mask: 'masked' },
  { B: 1, H: 1, T: 63, S: 65, D: 64 },
  { B: 1, H: 1, T: 64, S: 64, D: 63, mask: 'masked', dWeights: true },
  { B: 1, H: 1, T: 65, S: 127, D: 65, mask: 'shared' },
  { B: 2, H: 1, T: 2, S: 128, D: 2, mask: 'fully-masked' },
  // B*H up to 64
  { B: 8, H: 8, T: 5, S: 5, D: 1, mask: 'masked' },
  { B: 2, H: 32, T: 2, S: 11, D: 2, mask: 'per-head' },
  { B: 4, H: 16, T: 8, S: 8, D: 64, dWeights: true },
  { B: 16, H: 4, T: 13, S: 7, D: 24, mask: 'fully-masked' },
  { B: 1, H: 64, T: 3, S: 19, D: 32, mask: 'shared' },
  // primes and the longer lengths
  { B: 1, H: 1, T: 127, S: 131, D: 64, mask: 'masked' },
  { B: 1, H: 1, T: 211, S: 199, D: 96 },
  { B: 1, H: 2, T: 257, S: 263, D: 33, mask: 'per-head', dWeights: true },
  { B: 1, H: 1, T: 300, S: 300, D: 64, mask: 'fully-masked' },
  { B: 2, H: 2, T: 101, S: 97, D: 48, mask: 'shared' },
  { B: 1, H: 3, T: 293, S: 23, D: 11, mask: 'masked' },
  { B: 1, H: 1, T: 17, S: 283, D: 40, dWeights: true },
  { B: 3, H: 3, T: 41, S: 43, D: 20, mask: 'per-head' },
];

CASES.forEach((c, i) => {
  const p = makeProblem({ mask: 'none', ...c, seed: i + 1 });
  test(`${p.name} webgpu vs scalar`, async () => {
    const [attention, m] = await Promise.all([gpuAttention(), lab('simd')]);
    const args = { B: p.B, H: p.H, T: p.T, S: p.S, D: p.D, q: p.q, k: p.k, v: p.v,
      mask: p.mask, maskStrideB: p.maskStrideB, maskStrideH: p.maskStrideH };
    const expected = m.attentionForward({ ...args, backend: 'scalar' });
    const actual = await attention.forward(args);
    assertForwardClose(actual, expected, FORWARD_TOL, `${p.name} webgpu`);
    assertFullyMaskedRowsAreZero(p, actual, `${p.name} webgpu`);
    const grads = await attention.backward({ dOut: p.dOut, dWeights: p.dWeights });
    const reference = m.attentionBackward({ ...args, weights: expected.weights, dOut: p.dOut,
      dWeights: p.dWeights, backend: 'scalar' });
    assertBackwardClose(grads, reference, BACKWARD_TOL, `${p.name} webgpu`);
  });
});

test('webgpu reuses its buffers and pipelines for repeated sizes, and grows them for larger ones', async () => {
  await gpuAttention(); // fails with the reason when there is no WebGPU
  // A fresh instance: the sweep above has already grown the shared one's buffers.
  const { attention } = await WebGpuAttention.create({ gpu: (await nodeGpu()).gpu });
  const small = makeProblem({ B: 2, H: 2, T: 9, S: 10, D: 8, mask: 'masked' });
  const run = async (p) => {
    await attention.forward(p);
    await attention.backward({ dOut: p.dOut });
  };
  await run(small);
  const created = attention.pool.created;
  const pipelines = attention.pipelines.size;
  await run(makeProblem({ B: 2, H: 2, T: 9, S: 10, D: 8, mask: 'masked', seed: 2 }));
  await run(makeProblem({ B: 1, H: 1, T: 3, S: 4, D: 8, mask: 'masked', seed: 3 })); // smaller: fits
  assert.equal(attention.pool.created, created, 'no new GPU buffers for sizes that fit');
  assert.equal(attention.pipelines.size, pipelines, 'pipelines are cached by shader, not by shape');
  await run(makeProblem({ B: 2, H: 2, T: 40, S: 50, D: 8, seed: 4 }));
  assert.ok(attention.pool.created > created, 'larger sizes grow the buffers');
  assert.equal(attention.pipelines.size, pipelines);
  attention.destroy();
  assert.match(await attention.lost, /destroyed/);
  await assert.rejects(attention.forward(small), /destroyed/);
});

test('webgpu says why it cannot run, and rejects bad input clearly', async () => {
  const none = await WebGpuAttention.create({ gpu: undefined });
  assert.equal(none.attention, null);
  assert.equal(none.reason, 'no navigator.gpu');
  const noAdapter = await WebGpuAttention.create({ gpu: { requestAdapter: async () => null } });
  assert.equal(noAdapter.reason, 'no adapter');
  const attention = await gpuAttention();
  const p = makeProblem({ B: 1, H: 1, T: 2, S: 3, D: 4 });
  await assert.rejects(attention.forward({ ...p, q: p.q.subarray(1) }), /q must have B\*H\*T\*D = 8 elements, got 7/);
  await assert.rejects(attention.forward({ ...p, D: 0 }), /D must be an integer in \[1, 65536\], got 0/);
  await assert.rejects(attention.forward({ ...p, mask: new Float32Array(5) }), /mask must have at least 6 elements/);
  // The instance still works after a rejected call.
  const { weights } = await attention.forward(p);
  assert.equal(weights.length, 6);
  await assert.rejects(attention.backward({ dOut: new Float32Array(3) }), /dOut must have B\*H\*T\*D = 8 elements, got 3/);
});
