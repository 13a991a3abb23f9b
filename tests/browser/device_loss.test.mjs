// Losing the GPU device while the page trains on WebGPU (as a driver reset would): training goes on
// with SIMD128 from the same step, nothing is lost, and the badge says what happened.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab, openPage, metric } from './support.mjs';

test('WebGPU device lost mid-training -> SIMD128, the run continues to its last step', async () => {
  const lab = await startLab({ webgpu: true });
  after(() => lab.close());
  const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&backend=webgpu&batch=16&steps=60&seed=0&speed=max');
  assert.match(await page.textContent('#badge-backend'), /WebGPU/);
  await page.click('#play');
  await page.waitForFunction(() => Number(document.getElementById('progress-text').dataset.step) >= 5, null, { timeout: 60000 });
  await page.evaluate(() => window.attnlabWorker.send('loseDevice'));
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 90000 });
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '60');
  assert.match(await page.textContent('#badge-backend'), /SIMD128/);
  assert.match(await page.textContent('#badge-reason'), /WebGPU: device lost at step \d+ .* -> SIMD128/);
  assert.ok((await metric(page, 'accuracy')) > 0.1, 'the model kept learning');
  assert.deepEqual(problems, []);
});
