// Settings checked together (issue 16 §2): a link whose settings are each in range but together need
// more memory than the lab allows is refused with the estimate and what to lower, and the page builds
// the default model instead of staying without one; a change to such settings later keeps the model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('a link needing ~2.4 GB (L=64, V=256, E=256, H=16, batch 1024): a notice with the estimate, and the default model runs', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&length=64&vocab=256&dModel=256&heads=16&batch=1024');
  const notices = await page.textContent('#notices');
  assert.match(notices, /The link's model was not built: these settings need about 2\.\d GB to train; the lab allows 512 MB: lower batch \(1024\), length \(64\), heads \(16\) or dModel \(256\)\. The default settings are used instead\./);
  assert.equal(await page.inputValue('#prop-batch'), '128');
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '0');
  await page.click('#step');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '1', null, { timeout: 30000 });
  assert.deepEqual(problems, []);
  await page.close();
});
