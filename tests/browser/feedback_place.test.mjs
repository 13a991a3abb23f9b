// Feedback where the hand is (issue 38, item 2), at a laptop's 1280x800 and a phone's 390x844, measured
// as boxes against the screen after the action:
// - a weights file the lab refuses is said on the line under the button that asked for it, on screen,
//   and not in a notice at the top of the page (it was 1,149 px above the screen, 2,620 on a phone);
// - the Pretrained lab's "Mask a word" leaves the page where it was (it jumped 572 px up to the neuron
//   view) and its guesses are on the screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPage, startLab, waitDrawn } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Boxes against the screen: {selector: {top, bottom, left, right}} and the scroll position. */
const boxes = (page, selectors) => page.evaluate((selectors) => {
  const out = { scrollY, innerWidth, innerHeight };
  for (const s of selectors) {
    const e = document.querySelector(s);
    const r = e?.getBoundingClientRect();
    out[s] = r && r.height > 0 ? { top: r.top, bottom: r.bottom, left: r.left, right: r.right } : null;
  }
  return out;
}, selectors);
// Within half a pixel: scrollY is whole pixels, so scrollIntoView({block: 'end'}) can leave a box whose
// height has a fraction ending 0.1 px past the screen's edge.
const inScreen = (r, { innerWidth, innerHeight }) => !!r && r.top >= -0.5 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth;

for (const size of SCREENS) {
  const at = `${size.width}x${size.height}`;

  test(`weights at ${at}: a file refused for "Compare beside this run" is said under the button, on screen; the top of the page stays as it was`, async () => {
    const { page, problems } = await openPage(lab, '?lab=alignment&heads=2&seed=3', { viewport: size });
    await page.locator('#weights-compare').scrollIntoViewIfNeeded();
    const before = await boxes(page, ['#weights-compare']);
    // notebook 05's One query model is not the Alignment lab's CrossAttnSeqClassifier.
    await page.setInputFiles('#compare-file', path.join(FIXTURES, 'count_model.pt'));
    await page.waitForFunction(() => /was not compared/.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
    const message = await page.textContent('#weights-message');
    assert.match(message, /^count_model\.pt was not compared; this run is unchanged\. This lab loads an Alignment model of the \w+ task, and this file is another model's \(not the notebook's CrossAttnSeqClassifier: missing tok_emb\.weight.*\)\. It is a One query model: open the One query lab and load it there\.$/);
    assert.match(await page.getAttribute('#weights-message', 'class'), /\berror\b/);
    const after = await boxes(page, ['#weights-compare', '#weights-message']);
    assert.equal(after.scrollY, before.scrollY, 'the page did not move');
    assert.ok(inScreen(after['#weights-compare'], after), `the button: ${JSON.stringify(after['#weights-compare'])}`);
    assert.ok(inScreen(after['#weights-message'], after), `the message: ${JSON.stringify(after['#weights-message'])} in ${after.innerWidth}x${after.innerHeight}`);
    // Right under the button, not a screen away.
    assert.ok(after['#weights-message'].top - after['#weights-compare'].bottom < 40, JSON.stringify(after));
    assert.equal(await page.locator('.notice[data-key="weights"]').count(), 0, 'no notice at the top of the page');
    assert.equal(await page.inputValue('#prop-heads'), '2', 'the run keeps its settings');
    assert.deepEqual(problems.filter((p) => !/count_model/.test(p)), []);
    await page.close();
  });

  for (const where of ['start', 'end']) {
    test(`pretrained at ${at}: "Mask a word" (the section ${where === 'start' ? 'at the top of the screen' : 'scrolled up from below: the button at the bottom'}) leaves the page in place; the guesses are on screen`, async () => {
      const { page, problems } = await openPage(lab, '?lab=pretrained', { viewport: size });
      await waitDrawn(page);
      const selector = where === 'start' ? '#section-mask' : '#action-mask-word';
      await page.locator(selector).evaluate((e, block) => e.scrollIntoView({ block }), where);
      const before = await boxes(page, ['#action-mask-word']);
      assert.ok(inScreen(before['#action-mask-word'], before), JSON.stringify(before));
      // Every place the page passes through, not only where it ends: a jump up and back down is a jump.
      await page.evaluate(() => { window.__scrolls = []; addEventListener('scroll', () => window.__scrolls.push(scrollY)); });
      await page.click('#action-mask-word');
      await page.waitForSelector('[data-figure^="mask-"]:not([data-figure="mask-none"])', { timeout: 20000 });
      await waitDrawn(page);
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      const guesses = await page.$eval('[data-figure^="mask-"]:not([data-figure="mask-none"])', (e) => `[data-figure="${e.dataset.figure}"]`);
      const after = await boxes(page, ['#action-mask-word', guesses]);
      assert.match(await page.inputValue('#prop-text'), /\[MASK\]$/);
      // The button the student pressed stays on screen; the page may move only to bring the guesses into view.
      assert.ok(inScreen(after['#action-mask-word'], after), `the button: ${JSON.stringify(after['#action-mask-word'])}`);
      const passed = await page.evaluate(() => window.__scrolls);
      assert.ok(Math.min(after.scrollY, ...passed) >= before.scrollY - 12, `the page moved up ${before.scrollY - Math.min(after.scrollY, ...passed)} px (${passed})`);
      assert.ok(inScreen(after[guesses], after), `the guesses ${JSON.stringify(after[guesses])} in ${after.innerWidth}x${after.innerHeight}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}
