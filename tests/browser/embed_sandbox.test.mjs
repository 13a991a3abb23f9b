// A lab in a sandboxed iframe (issue 16 §4): without allow-same-origin the browser blocks the page's
// modules and worker, and the frame says what the embed needs instead of staying at "starting…"; with
// "allow-scripts allow-same-origin" (the attributes docs/embedding.md gives) the lab runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab } from './support.mjs';
import { labFrame, parentPage } from './embed_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const frameHtml = (url, sandbox) => `<!doctype html><title>parent</title>
  <iframe title="lab" sandbox="${sandbox}" src="${url}?lab=alignment&task=copy&embed=1" style="width: 640px; height: 480px; border: 0"></iframe>`;

test('sandbox="allow-scripts": the frame says it needs allow-same-origin, and no spinner stays', async () => {
  const { page } = await parentPage(lab, frameHtml(lab.url, 'allow-scripts'));
  const frame = await (await page.waitForSelector('iframe')).contentFrame();
  await frame.waitForSelector('#boot-error', { timeout: 15000 });
  assert.match(await frame.textContent('#boot-error'),
    /^This lab is in a frame sandboxed without allow-same-origin, .* Embed it with sandbox="allow-scripts allow-same-origin"/);
  assert.equal(await frame.getAttribute('#boot-error', 'role'), 'alert');
  assert.equal(await frame.textContent('#badge-backend'), 'not running');
  await page.close();
});

test('sandbox="allow-scripts allow-same-origin": the lab builds its model and trains in the frame', async () => {
  const { page, problems } = await parentPage(lab, frameHtml(lab.url, 'allow-scripts allow-same-origin'));
  const frame = await labFrame(page);
  await frame.click('#step');
  await frame.waitForFunction(() => document.getElementById('progress-text').dataset.step === '1', null, { timeout: 30000 });
  assert.equal(await frame.$('#boot-error'), null);
  assert.deepEqual(problems, []);
  await page.close();
});
