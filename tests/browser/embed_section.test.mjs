// A slide with one section (issue 45, item 4): `?embed=1&show=section:hard` shows the Lookup lab's
// hard-attention section with its heading in sight, above its prose and figures; a training lab's embed
// keeps its panels' headings for screen readers only (its figures carry their titles).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const heading = (page, selector) => page.$eval(selector, (h) => {
  const r = h.getBoundingClientRect();
  return { text: h.textContent, seen: r.width > 10 && r.height > 10 && h.checkVisibility() };
});

test('embed with one section: its heading is in sight; a training lab\'s panel headings are not', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&embed=1&show=section:hard', { viewport: { width: 800, height: 500 } });
  await page.waitForSelector('#section-hard h2');
  const h = await heading(page, '#section-hard h2');
  assert.deepEqual(h, { text: '2. Hard attention: one-hot keys retrieve exactly', seen: true });
  const [headTop, proseTop] = await page.evaluate(() => ['#section-hard h2', '#section-hard .section-text']
    .map((s) => document.querySelector(s).getBoundingClientRect().top));
  assert.ok(headTop < proseTop, 'the heading above the prose');
  await page.close();
  const training = await openPage(lab, '?lab=alignment&embed=1', { viewport: { width: 800, height: 500 } });
  assert.equal((await heading(training.page, '.metrics-panel > h2')).seen, false);
  assert.deepEqual([...problems, ...training.problems], []);
  await training.page.close();
});
