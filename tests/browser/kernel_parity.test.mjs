// The attention kernel's backends inside Chromium, as the page runs them: SIMD128 and WebGPU
// (SwiftShader, with --enable-unsafe-webgpu) against the scalar WASM kernel over shapes around the
// vector width and the workgroup size, with and without masks; and without the flag, no adapter and
// the fallback chain. Forward: max abs diff <= 1e-5; backward: <= 1e-4 of the largest gradient.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab } from './support.mjs';

const SHAPES = [
  { B: 1, H: 1, T: 1, S: 1, D: 1 },
  { B: 2, H: 3, T: 7, S: 13, D: 5, mask: true },
  { B: 1, H: 2, T: 5, S: 3, D: 8, fullyMasked: true },
  { B: 1, H: 4, T: 31, S: 29, D: 31, mask: true },
  { B: 1, H: 1, T: 65, S: 127, D: 64 },
  { B: 8, H: 8, T: 5, S: 5, D: 1, mask: true },
  { B: 2, H: 2, T: 17, S: 37, D: 17 },
  { B: 1, H: 1, T: 3, S: 300, D: 4, mask: true },
];

// Runs in the page: builds each problem, runs every backend, returns the worst differences.
async function sweep({ shapes, withWebGpu }) {
  const base = new URL('build/web/', location.href);
  const { loadAttnLab } = await import(new URL('loader.js', base));
  const lab = await loadAttnLab({ build: 'simd' });
  let gpu = null;
  if (withWebGpu) {
    const { WebGpuAttention } = await import(new URL('webgpu/attention_webgpu.js', base));
    const made = await WebGpuAttention.create({ gpu: navigator.gpu });
    if (!made.attention) return { error: `no WebGPU: ${made.reason}` };
    gpu = made.attention;
  }
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296) * 2 - 1;
  const fill = (n) => Float32Array.from({ length: n }, rand);
  const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
  const maxAbs = (a) => a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  const results = [];
  for (const s of shapes) {
    const { B, H, T, S, D } = s;
    const args = { B, H, T, S, D, q: fill(B * H * T * D), k: fill(B * H * S * D), v: fill(B * H * S * D) };
    if (s.mask || s.fullyMasked) {
      args.mask = Float32Array.from({ length: B * H * T * S }, (_, i) => (s.fullyMasked && Math.floor(i / S) % T === 0) || rand() < -0.5 ? -Infinity : 0);
      args.maskStrideB = H * T * S;
      args.maskStrideH = T * S;
    }
    const dOut = fill(B * H * T * D);
    const ref = lab.attentionForward({ ...args, backend: 'scalar' });
    const refGrad = lab.attentionBackward({ ...args, weights: ref.weights, dOut, backend: 'scalar' });
    const gradScale = Math.max(1e-6, maxAbs(refGrad.dQ), maxAbs(refGrad.dK), maxAbs(refGrad.dV));
    const name = `attention[B=${B},H=${H},T=${T},S=${S},D=${D}${s.mask ? ',masked' : ''}${s.fullyMasked ? ',fully-masked rows' : ''}]`;
    const simd = lab.attentionForward({ ...args, backend: 'simd128' });
    const simdGrad = lab.attentionBackward({ ...args, weights: ref.weights, dOut, backend: 'simd128' });
    results.push({
      name: `${name} simd128 vs scalar`,
      forward: Math.max(maxDiff(simd.weights, ref.weights), maxDiff(simd.out, ref.out)),
      backward: Math.max(maxDiff(simdGrad.dQ, refGrad.dQ), maxDiff(simdGrad.dK, refGrad.dK), maxDiff(simdGrad.dV, refGrad.dV)) / gradScale,
      finite: [...simd.weights, ...simd.out].every(Number.isFinite),
    });
    if (gpu) {
      const g = await gpu.forward({ ...args, scale: 1 / Math.sqrt(D) });
      const gGrad = await gpu.backward({ dOut });
      results.push({
        name: `${name} webgpu vs scalar`,
        forward: Math.max(maxDiff(g.weights, ref.weights), maxDiff(g.out, ref.out)),
        backward: Math.max(maxDiff(gGrad.dQ, refGrad.dQ), maxDiff(gGrad.dK, refGrad.dK), maxDiff(gGrad.dV, refGrad.dV)) / gradScale,
        finite: [...g.weights, ...g.out].every(Number.isFinite),
      });
    }
  }
  gpu?.destroy();
  return { results };
}

for (const webgpu of [true, false]) {
  test(`kernel parity in Chromium ${webgpu ? 'with --enable-unsafe-webgpu: SIMD128 and WebGPU' : 'without WebGPU: SIMD128'} vs scalar`, async () => {
    const lab = await startLab({ webgpu });
    after(() => lab.close());
    const page = await lab.context.newPage();
    await page.goto(lab.url);
    const { results, error } = await page.evaluate(sweep, { shapes: SHAPES, withWebGpu: webgpu });
    assert.equal(error, undefined);
    assert.equal(results.length, SHAPES.length * (webgpu ? 2 : 1));
    for (const r of results) {
      assert.ok(r.finite, `${r.name}: non-finite output`);
      assert.ok(r.forward <= 1e-5, `${r.name}: forward max abs diff ${r.forward}`);
      assert.ok(r.backward <= 1e-4, `${r.name}: backward diff ${r.backward} of the largest gradient`);
    }
  });
}

test('without --enable-unsafe-webgpu there is no adapter, and auto and forced WebGPU fall back with the reason', async () => {
  const lab = await startLab({ webgpu: false });
  after(() => lab.close());
  const page = await lab.context.newPage();
  await page.goto(lab.url);
  const r = await page.evaluate(async () => {
    const base = new URL('build/web/', location.href);
    const { WebGpuProbe } = await import(new URL('webgpu/probe.js', base));
    const { loadAttnLab } = await import(new URL('loader.js', base));
    const probe = await WebGpuProbe.probe(navigator.gpu);
    const lab = await loadAttnLab();
    const env = { simd128: lab.cpuBackends.includes('simd128'), webgpu: probe.available, webgpuReason: probe.reason };
    const big = { B: 512, H: 1, T: 1024, S: 1024, D: 64 };
    return { probe: { available: probe.available, reason: probe.reason },
      auto: { ...lab.selectBackend('auto', env, big) }, forced: { ...lab.selectBackend('webgpu', env, big) } };
  });
  assert.equal(r.probe.available, false);
  assert.match(r.probe.reason, /^(no adapter|no navigator\.gpu)$/);
  assert.equal(r.auto.backend, 'simd128');
  assert.equal(r.auto.reason, `auto: WebGPU: ${r.probe.reason} -> SIMD128`);
  assert.equal(r.forced.reason, `forced: WebGPU: ${r.probe.reason} -> SIMD128`);
});
