// Training through the WebGPU kernel (Node 'webgpu' package on SwiftShader): the staged step runs the
// attention passes on the GPU and everything else in C++; losing the device mid-run falls back to
// SIMD128 and keeps the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';
import { nodeGpu } from '../../web/webgpu/node_gpu.mjs';
import { WebGpuProbe } from '../../web/webgpu/probe.js';
import { alignmentLab } from '../../web/labs/01_alignment.js';
import { TrainingSession } from '../../web/training/session.js';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DIGITS_ASSET, loadDigits } from '../../web/data/digits.js';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const m = await lab('simd');

async function gpuAttention() {
  const { gpu, reason } = await nodeGpu();
  assert.ok(gpu, `WebGPU for Node is unavailable: ${reason}`);
  const probe = await WebGpuProbe.probe(gpu);
  assert.ok(probe.available, `no WebGPU adapter: ${probe.reason} (is chromium's SwiftShader installed?)`);
  return probe;
}

test('copy trains with the attention kernel on WebGPU and matches the SIMD128 run closely', async () => {
  const probe = await gpuAttention();
  const config = { task: 'copy', seed: 3, batch: 16 }; // small: SwiftShader is a CPU
  const gpuRun = TrainingSession.create({ module: m, lab: alignmentLab, config, request: { requested: 'webgpu', gpu: probe } });
  assert.equal(gpuRun.backend, 'webgpu');
  assert.equal(gpuRun.reason, 'forced: WebGPU');
  const cpuRun = TrainingSession.create({ module: m, lab: alignmentLab, config, request: { requested: 'simd' } });
  const a = await gpuRun.runSteps(40);
  const b = await cpuRun.runSteps(40);
  // Same seed, same batches, same init: the runs differ only by float rounding in the kernel.
  for (let i = 0; i < 40; i++) assert.ok(Math.abs(a.losses[i] - b.losses[i]) < 2e-3, `step ${i + 1}: ${a.losses[i]} vs ${b.losses[i]}`);
  assert.ok(a.losses[39] < a.losses[0] - 0.3, `the loss falls: ${a.losses[0]} -> ${a.losses[39]}`);
  gpuRun.dispose();
  cpuRun.dispose();
  probe.attention.destroy();
});

test('losing the GPU device mid-training falls back to SIMD128 without losing the run', async () => {
  const probe = await gpuAttention();
  const session = TrainingSession.create({ module: m, lab: alignmentLab, config: { task: 'reverse', seed: 1, batch: 16 }, request: { requested: 'webgpu', gpu: probe } });
  const before = await session.runSteps(5);
  probe.attention.destroy(); // what a driver reset or a lost GPU process looks like to the page
  const after = await session.runSteps(5);
  assert.equal(session.step, 10, 'no step was lost');
  assert.equal(session.backend, 'simd128');
  assert.match(session.reason, /^WebGPU: device lost at step 6 \(.*\) -> SIMD128$/);
  assert.equal(before.losses.length + after.losses.length, 10);
  assert.ok(after.losses.every(Number.isFinite));
  session.dispose();
});

test('auto picks SIMD128 for the small lab problem even with an adapter, and says why', async () => {
  const probe = await gpuAttention();
  const session = TrainingSession.create({ module: m, lab: alignmentLab, config: { task: 'copy' }, request: { requested: 'auto', gpu: { attention: probe.attention } } });
  assert.equal(session.backend, 'simd128');
  assert.equal(session.reason, 'auto: WebGPU: problem too small to pay off -> SIMD128');
  session.dispose();
  probe.attention.destroy();
});

// Every lab's trainer through the staged-call protocol (trainer.stepWith: the step's forward call, then
// its backward call, on a KernelRunner, as the page's WebGPU steps run): on a CPU kernel its losses are
// train()'s (train() shards the batch, so its gradient sums differ in the last bits; its losses do not);
// a kernel that keeps the weights to itself (readWeights false, as the GPU does) makes the backward
// recompute them, with the same bits.
test('the staged-call protocol trains every lab as train() does, and bit for bit whoever keeps the weights', async () => {
  const digits = await loadDigits(m, readFileSync(path.join(REPO_ROOT, 'public', DIGITS_ASSET)));
  const makers = {
    alignment: () => new m.AlignmentTrainer({ task: 'copy', seed: 4, batch: 8 }),
    lookup: () => new m.LookupTrainer({ seed: 4, heads: 2, batch: 16 }, digits),
    count: () => new m.CountTrainer({ seed: 4, batch: 20 }),
  };
  for (const [id, make] of Object.entries(makers)) {
    const staged = make(), lean = make();
    const runner = new KernelRunner({ module: m, request: { requested: 'simd' } });
    const kernel = { forward: (args) => runner.forward(args, { call: 'step' }), backward: (args) => runner.backward(args, { call: 'step' }) };
    let readWeights = null;
    const keepsWeights = {
      forward: async (args) => {
        readWeights = args.readWeights;
        const r = await kernel.forward(args);
        return { out: r.out, weights: args.readWeights ? r.weights : null };
      },
      backward: kernel.backward,
    };
    const direct = make();
    const { losses } = direct.train(3, { backend: 'simd128' });
    for (let i = 0; i < 3; i++) {
      const a = await staged.stepWith(kernel);
      const b = await lean.stepWith(keepsWeights);
      assert.equal(a.step, i + 1, id);
      assert.equal(Math.fround(a.loss), losses[i], `${id} step ${i + 1}`);
      assert.equal(b.loss, a.loss, `${id} step ${i + 1}, weights kept by the kernel`);
    }
    assert.equal(readWeights, id === 'lookup', `${id}: only the Lookup lab's loss reads the weights`);
    // (train()'s parameters are not compared: its sharded gradient sums differ in the last bits, which
    // Adam's normalised step can carry far on a near-zero gradient.)
    assert.deepEqual(lean.parameters(), staged.parameters(), `${id}: the same bits whoever keeps the weights`);
    for (const t of [direct, staged, lean]) t.delete();
  }
});

test('auto never picks a software adapter, even for a problem big enough for a GPU; forcing WebGPU still uses it', async () => {
  const probe = await gpuAttention();
  assert.equal(probe.software, true, `SwiftShader is a software adapter: ${probe.adapter}`);
  const big = { task: 'copy', batch: 1024, length: 64 }; // 12*B*H*T*S*D = 1.6 GFLOP per step
  const auto = TrainingSession.create({ module: m, lab: alignmentLab, config: big, request: { requested: 'auto', gpu: probe } });
  assert.equal(auto.backend, 'simd128');
  assert.match(auto.reason, /^auto: WebGPU: software adapter \(.*SwiftShader.*\) is slower than the CPU -> SIMD128$/i);
  const forced = TrainingSession.create({ module: m, lab: alignmentLab, config: big, request: { requested: 'webgpu', gpu: probe } });
  assert.equal(forced.backend, 'webgpu');
  auto.dispose();
  forced.dispose();
  probe.attention.destroy();
});

test('a training step reads back only the output; the backward uses the weights kept on the GPU', async () => {
  const probe = await gpuAttention();
  const gpu = probe.attention;
  const rng = new m.Rng(9);
  const fill = (n) => Float32Array.from({ length: n }, () => rng.normal());
  const shape = { B: 2, H: 3, T: 5, S: 7, D: 4 };
  const args = { ...shape, q: fill(120), k: fill(168), v: fill(168) };
  const dOut = fill(120);
  const full = await gpu.forward(args);
  const fullGrad = await gpu.backward({ dOut });
  const lean = await gpu.forward({ ...args, readWeights: false });
  const leanGrad = await gpu.backward({ dOut });
  assert.equal(lean.weights, null);
  assert.deepEqual(lean.out, full.out);
  assert.deepEqual(leanGrad, fullGrad);
  const reference = m.attentionBackward({ ...args, weights: full.weights, dOut, backend: 'scalar' });
  const worst = Math.max(...['dQ', 'dK', 'dV'].map((k) => Math.max(...leanGrad[k].map((x, i) => Math.abs(x - reference[k][i])))));
  assert.ok(worst < 1e-4, `backward vs scalar: ${worst}`);
  rng.delete();
  gpu.destroy();
});

// A fake WebGPU kernel whose forward fails as `error` does; enough of WebGpuAttention for a session.
function failingGpu(error) {
  return { adapterDescription: 'fake adapter', forward: async () => { throw error; }, backward: async () => { throw error; }, destroy() {} };
}

test('a WebGPU programming error (a bad argument to the API) is rethrown, never taken for a lost device', async () => {
  const session = TrainingSession.create({ module: m, lab: alignmentLab, config: { task: 'copy', seed: 2, batch: 8 }, request: { requested: 'webgpu',
    gpu: { attention: failingGpu(new TypeError('no overload matched for writeBuffer: no possible types matched')) } } });
  assert.equal(session.backend, 'webgpu');
  await assert.rejects(session.runSteps(1), (e) => e instanceof TypeError && /no overload matched/.test(e.message));
  assert.equal(session.backend, 'webgpu', 'no silent fallback');
  assert.equal(session.fallback, null);
  session.dispose();
});

test('a lost device is the one error that falls back: fallback says where and why', async () => {
  const { WebGpuDeviceLost } = await import('../../web/webgpu/attention_webgpu.js');
  const session = TrainingSession.create({ module: m, lab: alignmentLab, config: { task: 'copy', seed: 2, batch: 8 }, request: { requested: 'webgpu',
    gpu: { attention: failingGpu(new WebGpuDeviceLost('WebGPU device lost (unknown): driver reset')) } } });
  await session.runSteps(3);
  assert.equal(session.backend, 'simd128');
  assert.deepEqual(session.fallback, { requested: 'webgpu', fellBackAt: 1, reason: session.reason });
  assert.match(session.reason, /^WebGPU: device lost at step 1 \(WebGPU device lost \(unknown\): driver reset\) -> SIMD128$/);
  session.dispose();
});
