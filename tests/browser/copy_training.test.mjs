// Copy trains to the target on the page (defaults: seed 0, 200 steps), the head-mean heatmap read back
// from the canvas pixels is diagonal-dominant, and the main thread stays responsive while training.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { brightestAt, metric, openPage, readHeatmap, startFrameMonitor, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('copy[d_model=32,heads=4,seed=0,steps=200] trains to >= 99% with a diagonal head mean, no main-thread frame over 50 ms', async (t) => {
  const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&seed=0&steps=200');
  const stopMonitor = await startFrameMonitor(page);
  const started = Date.now();
  await trainToEnd(page);
  const frames = await stopMonitor();
  const seconds = (Date.now() - started) / 1000;
  t.diagnostic(`trained 200 steps in ${seconds.toFixed(1)} s; longest main-thread task ${frames.maxLongTaskMs.toFixed(0)} ms `
    + `(${frames.longTasks.length} over 50 ms); largest gap between animation frames ${frames.maxFrameGapMs.toFixed(0)} ms`);

  const accuracy = await metric(page, 'accuracy');
  assert.ok(accuracy >= 0.99, `accuracy ${accuracy} < 0.99`);
  assert.match(await page.textContent('#evaluation'), /100\.0%|99\.\d%/);

  const matrix = await readHeatmap(page, '#heatmap-main');
  assert.equal(matrix.length, 16);
  const diagonal = brightestAt(matrix, (r) => r);
  assert.ok(diagonal.ok, `not diagonal-dominant:\n${diagonal.failures.join('\n')}`);
  assert.match(await page.getAttribute('#heatmap-main', 'data-title'), /Head mean — step 200/);
  assert.match(await page.textContent('#results'), /16 of 16 predicted tokens correct/);

  assert.deepEqual(frames.longTasks, [], `main-thread tasks over 50 ms: ${frames.longTasks.map((d) => d.toFixed(0)).join(', ')}`);
  assert.deepEqual(problems, []);
  await page.close();
});
