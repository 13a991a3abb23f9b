// Pause answers within a step, whatever the settings (issue 16 §2): with a model whose steps take a
// good fraction of a second, pressing Pause right after Play stops training after at most one step
// (the worker used to guess 10 ms a step before it had timed one, so its first chunk ran 10 steps:
// 56 s before Pause took effect in one report). The worker only reads messages between chunks, and a
// chunk is sized from measured step times to fit in 100 ms, so Pause later in a run waits at most a step.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

const BIG = '?lab=alignment&task=copy&length=64&vocab=256&dModel=256&heads=16&batch=128&steps=1000&speed=max';

/**
 * Starts listening to the worker (web/worker.js) for the end of its training loop: the loop's own last
 * 'state' message (loop(), finally), which follows the worker's answer to the request that stopped it
 * (`answer`: Pause answers with a 'state', Reset with 'configured'). From then on no chunk runs until
 * Play. -> a function that waits for that message and gives the step it carries.
 */
function watchLoopEnd(page, answer) {
  return page.evaluate((answer) => {
    window.loopEnd = new Promise((resolve) => {
      let answered = false;
      const worker = window.attnlabWorker.worker;
      const listen = ({ data }) => {
        if (!answered) answered = data?.type === answer && !data.running;
        else if (data?.type === 'state' && !data.running) {
          worker.removeEventListener('message', listen);
          resolve(data.step);
        }
      };
      worker.addEventListener('message', listen);
    });
  }, answer).then(() => () => page.evaluate(() => window.loopEnd));
}

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
  const ended = await watchLoopEnd(page, 'state');
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'paused', null, { timeout: 120000 });
  const waited = Date.now() - t0;
  const stepAfter = await stepOf();
  t.diagnostic(`first pause after ${stepsAtFirstPause} step(s); mid-run pause answered in ${waited} ms, ${stepAfter - stepBefore} step(s) later`);
  // In steps, not milliseconds: the chunk under way (sized to ~100 ms, at least one step) may finish.
  assert.ok(stepAfter - stepBefore <= 2, `${stepAfter - stepBefore} steps ran after Pause`);
  assert.equal(await stateOf(), 'paused');
  assert.equal(await ended(), stepAfter, 'the loop ended at the step the page shows: nothing trains after Pause');
  assert.equal(await stepOf(), stepAfter);
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
  const ended = await watchLoopEnd(page, 'configured');
  // Reset sends a configure; the worker takes it between two chunks (a chunk is ~100 ms, at least a step).
  await page.click('#reset');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '0'
    && document.getElementById('progress-text').dataset.state === 'paused', null, { timeout: 120000 });
  t.diagnostic(`reset at step ${stepBefore} answered in ${Date.now() - t0} ms`);
  assert.equal(await ended(), 0, 'the old loop ended on the new model, untrained: it waits for Play');
  assert.equal(await stepOf(), 0);
  assert.deepEqual(problems, []);
});
