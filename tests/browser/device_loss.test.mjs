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
  // This seed's run reaches 60.0% on the 1,024 fresh samples (chance: 1/32) on every backend, and with the
  // device lost at step 6, 21 or 41; trained only to step 30 it has 11%, to step 50 36% (attnlab train
  // --lab alignment --task copy --batch 16 --seed 0 --steps N). Above 50%, then, the steps after the
  // fallback all trained, with room for a backend's rounding.
  const accuracy = await metric(page, 'accuracy');
  assert.ok(accuracy > 0.5, `the model kept learning after the fallback: ${accuracy}`);
  assert.deepEqual(problems, []);
});
