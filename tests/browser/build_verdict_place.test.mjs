// "Check your build" answers where the student pressed (issue 38, item 2, first bullet), at 1280x800
// and 390x844: the verdict's box is inside the viewport after Check, beside the button; the checked
// step's tensor is brought into view where it fits with the verdict (else a button under the verdict goes
// to it); "Checking keys.pt…" is gone once
// the verdict is shown; an old "✓ Matches" goes when a new paste cannot be read; the line that says
// which step to paste sits above the box. On the One query lab, with the notebook's model imported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, screenshotIfAsked, startLab } from './support.mjs';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const printed = JSON.parse(readFileSync(path.join(FIXTURES, 'build_steps', 'printed.json'), 'utf8'));

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const box = (page, selector) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height };
});

/** Waits for a verdict that is not "Checking …"; -> {status, text}. */
async function verdict(page) {
  await page.waitForFunction(() => {
    const v = document.getElementById('build-tensor-verdict');
    return /^(ok|bad)$/.test(v?.dataset.status ?? '') && !/^Checking/.test(v.textContent);
  }, null, { timeout: 20000 });
  return page.$eval('#build-tensor-verdict', (v) => ({ status: v.dataset.status, text: v.textContent }));
}

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`the verdict is where the student pressed Check, at ${viewport.width}x${viewport.height}`, async () => {
    const { page, problems } = await openPage(lab, '?lab=count&checkStep=keys', { viewport });
    await page.setInputFiles('#weights-file', path.join(FIXTURES, 'count_model.pt'));
    await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
    await page.waitForFunction(() => document.getElementById('section-build')?.dataset.state === 'shown', null, { timeout: 30000 });

    // The line that says what to paste is the box's own caption, right above it.
    assert.equal(await page.textContent('#build-tensor-caption'), 'Paste or open yours below: 3. Keys, model.WK(model.embed(x)), shape (4, 10, 5).');
    // Both boxes in one read: figures above them may still change height (the imported model's heatmap).
    const [caption, area] = await page.evaluate(() => ['build-tensor-caption', 'build-tensor-text'].map((id) => {
      const r = document.getElementById(id).getBoundingClientRect();
      return { top: r.top, bottom: r.bottom };
    }));
    assert.ok(caption.bottom <= area.top + 1 && area.top - caption.bottom < 24, `caption ${JSON.stringify(caption)} above the box ${JSON.stringify(area)}`);
    assert.equal(await page.$eval('[data-figure="build-keys"] .tensor-note', (n) => n.textContent).catch(() => ''), '', 'no "paste below" note far from the box');

    // A matching print: the verdict beside the button, in view; the keys' tensor marked and in view too.
    await page.fill('#build-tensor-text', printed.keys);
    await page.locator('#build-tensor-check').scrollIntoViewIfNeeded();
    await page.click('#build-tensor-check');
    let v = await verdict(page);
    assert.equal(v.status, 'ok', v.text);
    assert.match(v.text, /^Matches: shape \(4, 10, 5\)/);
    // One read for both (a figure above may still change height between two reads).
    let [seen, button] = await page.evaluate(() => ['build-tensor-verdict', 'build-tensor-check'].map((id) => {
      const r = document.getElementById(id).getBoundingClientRect();
      return { top: r.top, bottom: r.bottom };
    }));
    assert.ok(seen.top >= 0 && seen.bottom <= viewport.height, `verdict ${JSON.stringify(seen)} inside the ${viewport.height}px viewport`);
    assert.ok(seen.top - button.bottom < 60 && seen.top >= button.bottom - 1, `verdict ${JSON.stringify(seen)} just under the button ${JSON.stringify(button)}`);
    // The step's tensor: its title and first row at least (the page moves as far as the Check button stays in view).
    const keys = await box(page, '[data-figure="build-keys"]');
    assert.ok(keys.top >= 0 && keys.top + Math.min(keys.height, 60) <= viewport.height, `the keys' tensor ${JSON.stringify(keys)} in view`);
    const pressed = await box(page, '#build-tensor-check');
    assert.ok(pressed.top >= 0, `the Check button ${JSON.stringify(pressed)} still in view`);
    assert.equal(await page.$eval('[data-figure="build-keys"]', (f) => f.dataset.status), 'ok');

    // A paste that cannot be read: the refusal replaces the old "✓ Matches", beside the button and on the figures.
    await page.fill('#build-tensor-text', 'tensor([[0.1, ..., 0.3]])');
    await page.click('#build-tensor-check');
    await page.waitForFunction(() => document.getElementById('section-build').dataset.state === 'error');
    v = await page.$eval('#build-tensor-verdict', (n) => ({ status: n.dataset.status, text: n.textContent }));
    assert.equal(v.status, 'bad');
    assert.match(v.text, /^The pasted text was not read: the print is abbreviated/);
    assert.equal(await page.$$eval('#section-build [data-status="ok"]', (n) => n.length), 0, 'no ✓ left from the paste before');
    assert.ok(!(await page.textContent('#section-build')).includes('Matches'), 'no "Matches" left from the paste before');
    seen = await box(page, '#build-tensor-verdict');
    assert.ok(seen.top >= 0 && seen.bottom <= viewport.height, `refusal ${JSON.stringify(seen)} in view`);

    // A .pt of the last step, far below the box: "Checking forward.pt…" gives way to the verdict, which
    // stays in view while the page moves towards the step's tensor.
    await page.selectOption('#prop-checkStep', 'forward');
    await page.waitForFunction(() => document.getElementById('build-tensor-caption').textContent.startsWith('Paste or open yours below: 7. forward'));
    await page.locator('#build-tensor-check').scrollIntoViewIfNeeded();
    const before = await page.evaluate(() => window.scrollY);
    const forwardBefore = await box(page, '[data-figure="build-forward"]');
    await page.setInputFiles('#build-tensor-file', path.join(FIXTURES, 'build_steps', 'forward.pt'));
    v = await verdict(page);
    assert.equal(v.status, 'ok', v.text);
    assert.match(v.text, /^Matches: shape \(4, 1\)/);
    seen = await box(page, '#build-tensor-verdict');
    assert.ok(seen.top >= 0 && seen.bottom <= viewport.height, `verdict ${JSON.stringify(seen)} in view`);
    const forward = await box(page, '[data-figure="build-forward"]');
    const after = await page.evaluate(() => window.scrollY);
    if (forwardBefore.top + Math.min(forwardBefore.height, 100) > viewport.height) {
      assert.ok(after > before, `the page moved towards the forward step (${before} -> ${after})`);
      const check = await box(page, '#build-tensor-check');
      assert.ok(check.top >= 0, `the Check button ${JSON.stringify(check)} still in view`);
      assert.ok(forward.top + Math.min(forward.height, 60) <= viewport.height || check.top < 16,
        `the step ${JSON.stringify(forward)} in view, or the Check button ${JSON.stringify(check)} at the top: moved as far as it keeps the button and verdict`);
    }
    if (forward.top > viewport.height - 40) {
      // Still out of sight: a button under the verdict goes to it.
      assert.equal(await page.textContent('#build-tensor-jump'), 'Show 7. forward ↓');
      const jump = await box(page, '#build-tensor-jump');
      assert.ok(jump.top >= 0 && jump.bottom <= viewport.height, `the way to the step ${JSON.stringify(jump)} in view`);
      await screenshotIfAsked(page, `build-verdict-${viewport.width}x${viewport.height}.png`);
      await page.click('#build-tensor-jump');
      const shown = await box(page, '[data-figure="build-forward"]');
      assert.ok(shown.top >= -1 && shown.top < viewport.height / 2, `the forward step ${JSON.stringify(shown)} brought to the top`);
      assert.equal(await page.$eval('[data-figure="build-forward"]', (f) => f.dataset.status), 'ok');
    } else {
      assert.equal(await page.isVisible('#build-tensor-jump'), false, 'no button where the step is in view');
      await screenshotIfAsked(page, `build-verdict-${viewport.width}x${viewport.height}.png`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}
