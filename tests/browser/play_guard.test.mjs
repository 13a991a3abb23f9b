// What a student's click does is what the page says (issue 29): Play while a setting shows an error does
// not train the settings before it (the transport says which to fix and that field takes the focus); a
// One-query model offers no "head mean" menu; "Solve it by hand" says it loads a model, and its message
// reads as a sentence.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, waitDrawn } from './support.mjs';

let lab;
before(async () => {
  lab = await startLab();
  // Every message the page sends its worker, by type: what Play asked for, if anything.
  await lab.context.addInitScript(() => {
    window.__sent = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function recorded(m, ...rest) {
      window.__sent.push(m?.type);
      return post.call(this, m, ...rest);
    };
  });
});
after(async () => { await lab?.close(); });

test('Play with a setting in error: not started, the status says which setting, the field has the focus; fixed, Play trains', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&steps=20&speed=max');
  await setField(page, 'lr', 'fast');
  assert.match(await page.textContent('.control[data-property="lr"] .field-error'), /Learning rate/);
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('play-refused').textContent !== '');
  assert.match(await page.textContent('#play-refused'), /^Not started: Learning rate shows an error \(Learning rate must be a number, got 'fast'\)/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'prop-lr', 'the field in error has the focus');
  assert.equal(await page.evaluate(() => window.__sent.includes('play')), false, 'no play was sent');
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '0');

  // A cross-check (heads must divide d_model) stops it too, and names that setting.
  await setField(page, 'lr', 0.003);
  await setField(page, 'heads', 5);
  await page.click('#play');
  await page.waitForFunction(() => /^Not started: Heads /.test(document.getElementById('play-refused').textContent));
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'prop-heads');
  assert.equal(await page.evaluate(() => window.__sent.includes('play')), false);

  // Fixed: the message goes, and Play trains.
  await setField(page, 'heads', 4);
  assert.equal(await page.textContent('#play-refused'), '');
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 60000, polling: 100 });
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '20');
  assert.deepEqual(problems, []);
  await page.close();
});

test('one head, one map: One query and a 1-head Alignment offer no "head mean" menu; 4 heads do', async () => {
  for (const [query, menu] of [['?lab=count', false], ['?lab=alignment&heads=1', false], ['?lab=alignment', true]]) {
    const { page, problems } = await openPage(lab, query);
    await waitDrawn(page);
    assert.equal(await page.isVisible('#heatmap-select'), menu, `${query}: the menu ${menu ? 'shows' : 'is hidden'}`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('"Solve it by hand" says it loads a model (not trains), and its message reads as a sentence', async () => {
  const { page, problems } = await openPage(lab, '?lab=count');
  assert.match(await page.textContent('.presets .muted'), /“Solve it by hand” loads a finished model instead/);
  await page.click('button[data-preset="by-hand"]');
  await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 30000 });
  assert.equal(await page.textContent('#weights-message'),
    'Loaded “Solve it by hand”: a One query model built by hand, not trained. Its attention is shown below; Play trains on from these weights.');
  assert.match(await page.textContent('#preset-text'), /^Solve it by hand: Loads weights built by hand, nothing trained/);
  assert.equal(await page.evaluate(() => window.__sent.includes('play')), false, 'nothing trains');
  assert.equal(await page.getAttribute('#progress-text', 'data-step'), '0');
  assert.deepEqual(problems, []);
  await page.close();
});
