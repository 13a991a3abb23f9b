// The header badge says which backend ran and why: without --enable-unsafe-webgpu headless Chromium
// has no adapter (SIMD128 runs, and the badge says WebGPU is unavailable and why); with it, the
// page reports SwiftShader's WebGPU adapter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metric, openPage, startLab, trainToEnd } from './support.mjs';


test('without --enable-unsafe-webgpu: WebGPU unavailable with its reason, SIMD128 ran', async () => {
  const lab = await startLab({ webgpu: false });
  try {
    const { page, problems } = await openPage(lab);
    const webgpu = await page.textContent('#badge-webgpu');
    assert.match(webgpu, /^WebGPU unavailable: \S/);
    assert.equal(await page.getAttribute('#badge-webgpu', 'data-available'), 'false');
    assert.equal(await page.textContent('#badge-backend'), 'SIMD128 ran');
    assert.match(await page.textContent('#badge-reason'), /^auto: WebGPU: .+ -> SIMD128$/);
    assert.deepEqual(problems, []);
  } finally {
    await lab.close();
  }
});

test('with --enable-unsafe-webgpu: the page reports a WebGPU adapter', async (t) => {
  const lab = await startLab({ webgpu: true });
  try {
    const { page } = await openPage(lab, '?backend=webgpu&steps=5&speed=max');
    const webgpu = await page.textContent('#badge-webgpu');
    t.diagnostic(`badge: ${webgpu} | ${await page.textContent('#badge-backend')} | ${await page.textContent('#badge-reason')}`);
    assert.equal(await page.getAttribute('#badge-webgpu', 'data-available'), 'true', webgpu);
    assert.match(webgpu, /^WebGPU: /);
    assert.equal(await page.textContent('#badge-backend'), 'WebGPU ran');
  } finally {
    await lab.close();
  }
});

test('forcing WebGPU (--enable-unsafe-webgpu): copy trains on WebGPU to its last step, no fallback, the badge says so', async (t) => {
  const lab = await startLab({ webgpu: true });
  try {
    const steps = 20;
    const query = `?lab=alignment&task=copy&seed=5&batch=16&steps=${steps}&speed=max`;
    const { page, problems } = await openPage(lab, `${query}&backend=webgpu`);
    assert.equal(await page.textContent('#badge-backend'), 'WebGPU ran');
    await trainToEnd(page, 120000);
    assert.equal(await page.getAttribute('#progress-text', 'data-step'), String(steps));
    assert.equal(await page.textContent('#badge-backend'), 'WebGPU ran');
    assert.equal(await page.textContent('#badge-reason'), 'forced: WebGPU');
    const gpuLoss = await metric(page, 'loss');
    // The same run on the CPU: the kernels differ only in float rounding.
    const cpu = await openPage(lab, `${query}&backend=scalar`);
    await trainToEnd(cpu.page, 120000);
    const cpuLoss = await metric(cpu.page, 'loss');
    t.diagnostic(`evaluation loss after ${steps} steps: WebGPU ${gpuLoss}, scalar ${cpuLoss}`);
    assert.ok(Number.isFinite(gpuLoss) && Math.abs(gpuLoss - cpuLoss) <= 1e-5 * Math.abs(cpuLoss), `WebGPU ${gpuLoss} vs scalar ${cpuLoss}`);
    assert.deepEqual(problems, []);
    assert.deepEqual(cpu.problems, []);
  } finally {
    await lab.close();
  }
});
