// The "?" beside a setting opens its help on a click, a tap or the keyboard (issue 29: it was a title
// tooltip that could not be focused or touched), says so to a screen reader (aria-expanded), and closes
// the same way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const helpButton = (page, prop) => page.locator(`button.help-icon[aria-controls="prop-${prop}-help"]`);
const helpOf = (page, prop) => page.$eval(`#prop-${prop}-help`, (text) => {
  const button = document.querySelector(`button[aria-controls="${text.id}"]`);
  return { expanded: button.getAttribute('aria-expanded'), shown: text.className === 'help-text' && text.getBoundingClientRect().height > 0, text: text.textContent };
});

test('help opens on a click and on the keyboard, and closes again', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment');
  const button = helpButton(page, 'batch');
  const closed = await helpOf(page, 'batch');
  assert.equal(closed.expanded, 'false');
  assert.equal(closed.shown, false);
  await button.click();
  let help = await helpOf(page, 'batch');
  assert.equal(help.expanded, 'true');
  assert.ok(help.shown, 'the help text is on the page');
  assert.match(help.text, /examples per training step/i);
  await button.click();
  assert.equal((await helpOf(page, 'batch')).shown, false, 'a second click closes it');
  await button.focus();
  await page.keyboard.press('Enter');
  assert.equal((await helpOf(page, 'batch')).shown, true, 'Enter opens it');
  await page.keyboard.press('Space');
  assert.equal((await helpOf(page, 'batch')).shown, false, 'Space closes it');
  assert.deepEqual(problems, []);
  await page.close();
});

test('on a phone-sized page a press opens it, and it fits the screen', async () => {
  const { page, problems } = await openPage(lab, '?lab=count', { viewport: { width: 390, height: 844 } });
  const button = helpButton(page, 'lr');
  await button.scrollIntoViewIfNeeded();
  await button.click();
  assert.equal((await helpOf(page, 'lr')).shown, true);
  const box = await page.$eval('#prop-lr-help', (t) => t.getBoundingClientRect().right);
  assert.ok(box <= 390, `the help text ends at ${box} px, inside the 390 px screen`);
  assert.deepEqual(problems, []);
  await page.close();
});
