// Status and figures at the same step (issue 45, item 4): paused between two snapshots (they come every
// few steps), or after Step, the figures show the step the status says, not the snapshot before it; and
// the snapshot taken then is an inspection only: a run paused and stepped trains the same bits as one that
// never stopped. On the One query lab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { recordLosses, startLab, waitConfigured, trainToEnd, waitDrawn } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

async function recordedPage(query) {
  const page = await lab.context.newPage();
  await recordLosses(page);
  await page.goto(lab.url + query);
  await waitConfigured(page);
  return page;
}

// The step the figures show: the timeline's (live, its last snapshot), as written beside its slider.
const shownStep = (page) => page.$eval('#timeline-step', (o) => Number(/step (\d+)/.exec(o.textContent)?.[1]));
const statusStep = (page) => page.$eval('#progress-text', (p) => Number(p.dataset.step));

test('paused or stepped between snapshots, the figures show the status\'s step; the bits are a straight run\'s', async () => {
  const straight = await recordedPage('?lab=count&steps=40&speed=max&seed=3');
  await trainToEnd(straight);
  const want = await straight.evaluate(() => window.__losses);
  assert.equal(want.length, 40);
  await straight.close();

  const page = await recordedPage('?lab=count&steps=40&speed=20&seed=3');
  await page.click('#play');
  await page.waitForFunction(() => Number(document.getElementById('progress-text').dataset.step) >= 3);
  await page.click('#play'); // pause
  await page.waitForFunction(() => /paused/.test(document.getElementById('progress-text').textContent));
  await waitDrawn(page);
  await page.waitForFunction(() => {
    const shown = /step (\d+)/.exec(document.getElementById('timeline-step')?.textContent ?? '')?.[1];
    return Number(shown) === Number(document.getElementById('progress-text').dataset.step);
  }, null, { timeout: 10000 });
  assert.equal(await shownStep(page), await statusStep(page));
  const paused = await statusStep(page);
  await page.click('#step');
  await page.waitForFunction((was) => Number(document.getElementById('progress-text').dataset.step) === was + 1, paused);
  await page.waitForFunction(() => {
    const shown = /step (\d+)/.exec(document.getElementById('timeline-step')?.textContent ?? '')?.[1];
    return Number(shown) === Number(document.getElementById('progress-text').dataset.step);
  }, null, { timeout: 10000 });
  await page.selectOption('#prop-speed', 'max');
  await trainToEnd(page);
  assert.deepEqual(await page.evaluate(() => window.__losses), want, 'the same losses, bit for bit');
  await page.close();
});
