// A lab left training keeps a bounded history (web/training/bounded_history.js, HISTORY_BUDGET in
// web/ui/training_run.js): 20,000 steps of the largest attention the lab draws (16 heads over 64 x 64) fed
// to the page faster than real time, through the worker's own message channel, leave at most 512
// snapshots and 64 MiB of them, a timeline that still spans the whole run, and a heap that stops growing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

const H = 16, L = 64, STEPS_PER_MESSAGE = 5, MESSAGES = 4000; // one snapshot per message, as the worker sends them

test(`long run[H=${H},T=S=${L},steps=${STEPS_PER_MESSAGE * MESSAGES}]: the page keeps <= 512 snapshots, <= 64 MiB, and spans the run`, async (t) => {
  const lab = await startLab();
  after(() => lab.close());
  const { page, problems } = await openPage(lab, `?lab=alignment&task=copy&length=${L}&heads=${H}&dModel=64&vocab=64&batch=4`);
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const u = await cdp.send('Runtime.getHeapUsage');
    return u.usedSize + (u.backingStorageSize ?? 0);
  };
  // Feeds `count` progress messages as the worker would post them while training at top speed.
  const feed = (first, count) => page.evaluate(async ({ first, count, H, L, per }) => {
    const worker = window.attnlabWorker.worker;
    for (let i = first; i < first + count; i++) {
      const step = (i + 1) * per;
      const snapshot = { step, H, T: L, S: L, weights: new Float32Array(H * L * L).fill(1 / L), weightsMean: new Float32Array(L * L).fill(1 / L),
        predictions: new Int32Array(L), confidence: new Float32Array(L).fill(0.5) };
      const data = { type: 'progress', step, losses: new Float32Array(per).fill(1 / (1 + i)), accuracies: new Float32Array(per).fill(0.5),
        snapshots: [snapshot], running: true, targetSteps: 1e6, stepsPerSecond: 1000 };
      worker.dispatchEvent(new MessageEvent('message', { data }));
      if (i % 200 === 0) await new Promise((r) => requestAnimationFrame(r)); // let the page draw now and then
    }
  }, { first, count, H, L, per: STEPS_PER_MESSAGE });

  await feed(0, MESSAGES / 4);
  const quarter = await heap();
  await feed(MESSAGES / 4, (3 * MESSAGES) / 4);
  const end = await heap();
  // Stop "training" so every panel is drawn, then read what the page shows.
  await page.evaluate(() => window.attnlabWorker.worker.dispatchEvent(new MessageEvent('message', { data: { type: 'state', running: false, step: 20000 } })));
  const timeline = await page.textContent('#timeline-step');
  t.diagnostic(`heap after ${MESSAGES / 4 * STEPS_PER_MESSAGE} steps ${(quarter / 2 ** 20).toFixed(1)} MiB, after ${MESSAGES * STEPS_PER_MESSAGE} ${(end / 2 ** 20).toFixed(1)} MiB; timeline: ${timeline}`);
  const [, shownStep, index, count] = timeline.match(/^step (\d+) \((\d+) of (\d+) snapshots\)/);
  assert.ok(Number(count) <= 512, `${count} snapshots kept`);
  assert.equal(Number(shownStep), MESSAGES * STEPS_PER_MESSAGE, 'live: the newest snapshot');
  assert.equal(index, count);
  // The scrubber still reaches the run's first snapshot (step 0): thinning keeps the first and the newest.
  await page.evaluate(() => {
    const slider = document.getElementById('timeline-slider');
    slider.value = '0';
    slider.dispatchEvent(new Event('input'));
  });
  assert.match(await page.textContent('#timeline-step'), /^step 0 \(1 of \d+ snapshots\)/);
  // Without the budget the 4,000 snapshots alone would hold 4000 x 278 KB = 1.1 GB; with it, under 64 MiB.
  assert.ok(end < quarter + 96 * 2 ** 20, `the heap grew from ${(quarter / 2 ** 20).toFixed(0)} to ${(end / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(end < 256 * 2 ** 20, `heap ${(end / 2 ** 20).toFixed(0)} MiB`);
  assert.deepEqual(problems, []);
});
