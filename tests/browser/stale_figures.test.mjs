// Figures a student can trust (issue 29): a figure left from the last good input while the input now is
// refused is dimmed under a note until a good result replaces it; a long translation without spaces
// wraps inside its card, and the page never gets wider than the window.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, waitConfigured, waitDrawn, dropFiles, TINY_MARIAN_FILES } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const stale = (page, id) => page.$eval(`#section-${id}`, (s) => ({
  marked: s.classList.contains('stale'),
  note: s.querySelector('.stale-note').hidden ? '' : s.querySelector('.stale-note').textContent,
  opacity: Number(getComputedStyle(s.querySelector('.figure-board')).opacity),
}));

test('scaled: a refused sentence leaves the figures dimmed under "Not updated", a field in error too; a good one clears it', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  assert.deepEqual(await stale(page, 'sentence'), { marked: false, note: '', opacity: 1 });
  // Refused by the section (too many tokens): the last figures stay, marked.
  await setField(page, 'text', Array(40).fill('word').join(' '));
  await page.waitForFunction(() => document.getElementById('section-sentence').dataset.state === 'error');
  const refused = await stale(page, 'sentence');
  assert.equal(refused.marked, true);
  assert.match(refused.note, /^Not updated: fix the input above/);
  assert.ok(refused.opacity < 0.5, `dimmed: opacity ${refused.opacity}`);
  // A good sentence: a new result, the mark goes.
  await setField(page, 'text', 'Attention is all you need');
  await page.waitForFunction(() => document.getElementById('section-sentence').dataset.state === 'shown' && !document.getElementById('section-sentence').classList.contains('stale'));
  assert.deepEqual(await stale(page, 'sentence'), { marked: false, note: '', opacity: 1 });
  // A setting of the section in error (an empty embedding size): its figures cannot follow, marked too.
  await setField(page, 'embedDim', '');
  assert.equal((await stale(page, 'sentence')).marked, true);
  assert.equal((await stale(page, 'steps')).marked, false, 'a section that does not read it is not marked');
  await setField(page, 'embedDim', 8);
  assert.equal((await stale(page, 'sentence')).marked, false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('translation: a long sentence without spaces wraps inside its card; the page is no wider than the window', async () => {
  const page = await lab.context.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${lab.url}?lab=translation&maxLength=64`);
  await page.waitForSelector('#open-drop');
  await dropFiles(page, TINY_MARIAN_FILES);
  await waitConfigured(page);
  // Too long for the tiny model's 64 positions: refused, the last translation stays, marked.
  const long = 'Thecatsatonthematwhilethedogsleptbythedoorandthebirdssangoutsidethewindowallafternoonlong';
  await setField(page, 'text', long.repeat(2));
  await page.waitForFunction(() => document.getElementById('section-translate').dataset.state === 'error', null, { timeout: 60000 });
  assert.match(await stale(page, 'translate').then((s) => s.note), /^Not updated/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no wider than the window');
  // One that fits: translated, the mark goes.
  await setField(page, 'text', long.slice(0, 40));
  await page.waitForFunction(() => document.getElementById('section-translate').dataset.state === 'shown'
    && !document.getElementById('section-translate').classList.contains('stale'), null, { timeout: 60000 });
  await waitDrawn(page);
  const text = page.locator('[data-figure="translation"]');
  assert.equal(await text.evaluate((e) => getComputedStyle(e).overflowWrap), 'anywhere');
  assert.ok(await text.evaluate((e) => e.scrollWidth <= e.clientWidth + 1), 'the translation fits its card');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than the window`);
  // Every line of text in the section stays inside the section.
  const outside = await page.$$eval('#section-translate .figure-text', (ps) => ps.filter((p) => p.scrollWidth > p.clientWidth + 1).map((p) => p.textContent.slice(0, 40)));
  assert.deepEqual(outside, []);
  assert.deepEqual(problems, []);
  await page.close();
});
