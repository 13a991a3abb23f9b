// Pause answers within a step, whatever the settings (issue 16 §2): with a model whose steps take a
// good fraction of a second, pressing Pause right after Play stops training after at most one step
// (the worker used to guess 10 ms a step before it had timed one, so its first chunk ran 10 steps:
// 56 s before Pause took effect in one report). The worker only reads messages between chunks, and a
// chunk is sized from measured step times to fit in 100 ms, so Pause later in a run waits at most a step.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

const BIG = '?lab=alignment&task=copy&length=64&vocab=256&dModel=256&heads=16&batch=128&steps=1000&speed=max';

test('pause[L=64,E=256,H=16,B=128] right after play: training stops after at most 1 step; later pauses wait at most a step', async (t) => {
  const lab = await startLab();
  after(() => lab.close());
  const { page, problems } = await openPage(lab, BIG);
  const stepOf = () => page.getAttribute('#progress-text', 'data-step').then(Number);
  const stateOf = () => page.getAttribute('#progress-text', 'data-state');

  await page.click('#play');
  await page.waitForFunction(() => document.querySelector('[data-running]')?.dataset.running === 'true', null, { timeout: 30000 });
  await page.click('#play'); // now "Pause"
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'paused', null, { timeout: 120000 });
  const stepsAtFirstPause = await stepOf();
  assert.ok(stepsAtFirstPause <= 1, `paused after ${stepsAtFirstPause} steps (at most the one under way)`);

  // Later in the run: time a few steps, then pause mid-run and time the answer in steps.
  await page.click('#play');
  await page.waitForFunction((s) => Number(document.getElementById('progress-text').dataset.step) >= s + 3, stepsAtFirstPause, { timeout: 120000 });
  const t0 = Date.now();
  const stepBefore = await stepOf();
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'paused', null, { timeout: 120000 });
  const waited = Date.now() - t0;
  const stepAfter = await stepOf();
  t.diagnostic(`first pause after ${stepsAtFirstPause} step(s); mid-run pause answered in ${waited} ms, ${stepAfter - stepBefore} step(s) later`);
  // In steps, not milliseconds: the chunk under way (sized to ~100 ms, at least one step) may finish.
  assert.ok(stepAfter - stepBefore <= 2, `${stepAfter - stepBefore} steps ran after Pause`);
  assert.equal(await stateOf(), 'paused');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await stepOf(), stepAfter, 'nothing trains after Pause');
  assert.deepEqual(problems, []);
});

test('reset[L=64,E=256,H=16,B=128] while training: the new model is built after at most the chunk under way, and nothing trains on', async (t) => {
  const lab = await startLab();
  after(() => lab.close());
  const { page, problems } = await openPage(lab, BIG);
  const stepOf = () => page.getAttribute('#progress-text', 'data-step').then(Number);
  await page.click('#play');
  await page.waitForFunction(() => Number(document.getElementById('progress-text').dataset.step) >= 3, null, { timeout: 120000 });
  const t0 = Date.now();
  const stepBefore = await stepOf();
  // Reset sends a configure; the worker takes it between two chunks (a chunk is ~100 ms, at least a step).
  await page.click('#reset');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '0'
    && document.getElementById('progress-text').dataset.state === 'paused', null, { timeout: 120000 });
  t.diagnostic(`reset at step ${stepBefore} answered in ${Date.now() - t0} ms`);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await stepOf(), 0, 'the new model waits for Play');
  assert.deepEqual(problems, []);
});
