// The pace the settings promise (issue 29: "roughly 49-89 steps/s" for a Lookup run that did 400-450):
// no steps/s before this computer has trained a model of the lab, then the measured pace, within 1.5x
// of the rate the transport bar showed while it trained.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, waitDrawn } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('lookup: no pace promised before a run; after one, the measured pace (within 1.5x of the status), scaled for a pending change', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&steps=300&speed=max');
  const before = await page.textContent('#cost-estimate');
  assert.match(before, /FLOP per training step/);
  assert.doesNotMatch(before, /steps\/s/, `no guess before a measurement: ${before}`);

  // Every rate the status shows while it trains.
  await page.evaluate(() => {
    window.__rates = [];
    const text = document.getElementById('progress-text');
    new MutationObserver(() => {
      const m = /training · (\d+) steps\/s/.exec(text.textContent);
      if (m) window.__rates.push(Number(m[1]));
    }).observe(text, { childList: true, characterData: true, subtree: true });
  });
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 120000, polling: 100 });
  await waitDrawn(page);
  const rates = await page.evaluate(() => window.__rates);
  assert.ok(rates.length > 0, 'the status showed a rate while training');
  const shown = rates.at(-1);
  // The estimate is redrawn from the run's measured steps on the render after the last state: wait for
  // it (a busy machine drew 'done' a frame before it), then read it.
  await page.waitForFunction(() => /steps\/s at most on this computer \(measured\)/.test(document.getElementById('cost-estimate').textContent),
    null, { timeout: 15000 }).catch(() => {});
  const after = await page.textContent('#cost-estimate');
  const promised = Number(/: (\d+) steps\/s at most on this computer \(measured\)/.exec(after)?.[1]);
  assert.ok(promised > 0, `a measured pace: ${after}`);
  assert.ok(promised <= 1.5 * shown && shown <= 1.5 * promised, `the estimate ${promised} steps/s is within 1.5x of the ${shown} steps/s shown while training`);

  // A pending change that doubles the work: the pace scales from the measurement, and says so.
  await setField(page, 'batch', 128);
  const scaled = await page.textContent('#cost-estimate');
  const roughly = Number(/roughly (\d+) steps\/s at most on this computer \(scaled from the current model's measured pace\)/.exec(scaled)?.[1]);
  assert.ok(roughly > 0 && roughly < promised, `a scaled pace below the measured one: ${scaled}`);
  assert.deepEqual(problems, []);
  await page.close();
});
