// A module that aborts (a failed allocation, a bug in the core) is survived (issue 16 §2): the worker
// starts a fresh module, rebuilds the model with the same settings and the weights of the last step
// the page saw, and the page says so; the attention on screen is the same, and Play trains on. The
// abort is a real failed allocation: the worker's test-only abortModule builds a Linear too large for
// the module's memory, past the binding edge's size check (web/worker.js).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, readHeatmap, startLab, trainToEnd, waitDrawn } from './support.mjs';

test('after the module aborts, a fresh module has the same settings and weights; training goes on', async () => {
  const lab = await startLab();
  after(() => lab.close());
  const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&seed=0&steps=60&heads=2&speed=max');
  await trainToEnd(page);
  const before = await readHeatmap(page, '#heatmap-main');
  await page.evaluate(() => window.attnlabWorker.send('abortModule'));
  const notice = page.locator('.notice', { hasText: 'The training module stopped' });
  await notice.waitFor({ timeout: 60000 });
  assert.match(await notice.textContent(), /Aborted\(.*\)\. A fresh one was started with the same settings and the weights of step 60/);
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '0', null, { timeout: 30000 });
  await waitDrawn(page);
  assert.equal(await page.inputValue('#prop-heads'), '2', 'the settings are kept');
  assert.deepEqual(await readHeatmap(page, '#heatmap-main'), before, 'the attention of step 60, from the restored weights');
  await page.click('#play');
  await page.waitForFunction(() => Number(document.getElementById('progress-text').dataset.step) >= 10, null, { timeout: 60000 });
  // Emscripten prints the abort on the console: that line, and nothing else, is expected.
  assert.deepEqual(problems.filter((p) => !/Aborted\(/.test(p)), []);
});
