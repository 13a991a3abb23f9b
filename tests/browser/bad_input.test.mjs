// Bad input is explained where it happened and never breaks the page: an invalid hyperparameter, a
// bad "type your own input" (caught on the page, and caught by the C++ trainer), a bad link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { metric, openPage, setField, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('heads=5 with d_model=32 shows "heads must divide d_model" beside the control; training still works', async () => {
  const { page, problems } = await openPage(lab, '?steps=20&speed=max');
  await setField(page, 'heads', 5);
  assert.match(await page.textContent('#prop-heads-error'), /heads must divide d_model/);
  assert.equal(await page.getAttribute('#prop-heads', 'aria-invalid'), 'true');
  // The model that exists keeps training.
  await page.click('#step');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '1');
  // A valid value clears the message; after training started, changing the shape asks first.
  await setField(page, 'heads', 2);
  assert.equal(await page.textContent('#prop-heads-error'), '');
  assert.ok(await page.isVisible('#apply-reset'), 'Apply & reset is offered');
  await page.click('#apply-reset');
  await page.waitForFunction(() => document.querySelectorAll('#heatmap-select option').length === 3); // mean + 2 heads
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '0');
  await trainToEnd(page);
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '20');
  assert.ok((await metric(page, 'accuracy')) !== null, 'an evaluation is shown');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a bad own input shows its message: a typo (page) and an out-of-range token (C++ trainer)', async () => {
  const { page } = await openPage(lab);
  await page.fill('#inspect-tokens', '1, abc');
  await page.click('#inspect-submit');
  await page.waitForFunction(() => /not a whole number/.test(document.getElementById('inspect-message').textContent));
  await page.fill('#inspect-tokens', '0 99');
  await page.click('#inspect-submit');
  await page.waitForFunction(() => /out of range/.test(document.getElementById('inspect-message').textContent));
  assert.match(await page.textContent('#inspect-message'), /tokens\[0\] = 0 is out of range: tokens must be in \[1, 31\]/);
  // A good input replaces the message with the prediction and its attention.
  await page.fill('#inspect-tokens', '3, 1, 4, 1, 5');
  await page.click('#inspect-submit');
  await page.waitForSelector('#inspect-results table');
  assert.equal(await page.textContent('#inspect-message'), '');
  assert.match(await page.textContent('#inspect-results tr[data-row="input"]'), /^input31415$/);
  assert.ok(await page.isVisible('#heatmap-inspect'));
  await page.close();
});

test('a bad link (?heads=abc&bogus=1) shows a notice and uses the defaults', async () => {
  const { page, problems } = await openPage(lab, '?heads=abc&bogus=1');
  const notice = await page.textContent('#notices');
  assert.match(notice, /Heads must be a whole number, got 'abc'; using the default 4/);
  assert.match(notice, /Unknown parameter 'bogus' was ignored/);
  assert.equal(await page.inputValue('#prop-heads'), '4');
  assert.ok(!page.url().includes('bogus'), `the address was rewritten: ${page.url()}`);
  await page.click('#step');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '1');
  assert.deepEqual(problems, []);
  await page.close();
});
