// A changed setting's "Apply & reset" comes where the eye is (issue 45, item 3): right under the setting
// the student changed, not at the foot of a long settings box (below the fold). After a few steps, a model
// setting at the top of the box (the task) and one further down (heads) are changed in turn: each time
// the bar is the next thing under that field, inside the window. At both sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, trainToEnd, screenshotIfAsked } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Where the bar is against the changed field's row: {gap (px below the row), inWindow, next (the row's next element)}. */
const placeOf = (page, name) => page.evaluate((n) => {
  const row = document.getElementById(`prop-${n}`).closest('.control');
  const bar = document.getElementById('pending');
  const button = document.getElementById('apply-reset').getBoundingClientRect();
  return { gap: Math.round(bar.getBoundingClientRect().top - row.getBoundingClientRect().bottom),
    inWindow: button.top >= 0 && button.bottom <= window.innerHeight, next: row.nextElementSibling?.id ?? '' };
}, name);

for (const size of SCREENS) {
  test(`Apply & reset at ${size.width}x${size.height}: under the setting just changed, in the window`, async () => {
    const { page, problems } = await openPage(lab, '?lab=alignment&steps=5&speed=max', { viewport: size });
    await trainToEnd(page);
    for (const [name, value] of [['task', 'reverse'], ['heads', 2]]) {
      await setField(page, name, value);
      await page.waitForSelector('#pending:not([hidden])');
      await page.locator(`#prop-${name}`).scrollIntoViewIfNeeded();
      const place = await placeOf(page, name);
      assert.equal(place.next, 'pending', `${name}: the bar follows its row`);
      assert.ok(place.gap >= -1 && place.gap < 24, `${name}: ${place.gap} px under the row`);
      assert.ok(place.inWindow, `${name}: Apply & reset in the window`);
      await screenshotIfAsked(page, `apply-place-${name}-${size.width}.png`);
    }
    // Applied: the bar goes, the model is rebuilt at step 0.
    await page.click('#apply-reset');
    await page.waitForSelector('#pending[hidden]', { state: 'attached' });
    assert.deepEqual(problems, []);
    await page.close();
  });
}
