// Accessibility: axe-core finds no serious or critical violation on the lab page, the embed page and
// the example slide deck; the heatmap reads as a table of numbers; a head is chosen by keyboard;
// under prefers-reduced-motion the timeline replay jumps without animating.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage, startLab, trainToEnd } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', 'axe-core', 'axe.min.js');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** axe-core's serious and critical violations on the page (iframes are scanned as pages of their own). */
async function seriousViolations(page) {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => (await window.axe.run(document, { iframes: false })).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`));
  return violations;
}

for (const [name, query] of [['lab page', '?lab=alignment'], ['lab page, dark, pointer', '?task=pointer&theme=dark'], ['embed page', '?embed=1'], ['embed page, controls=min', '?embed=1&controls=min']]) {
  test(`axe: no serious or critical violations on the ${name}`, async () => {
    const { page, problems } = await openPage(lab, query);
    if (await page.isVisible('#heatmap-table-toggle')) await page.check('#heatmap-table-toggle'); // scan the table too
    assert.deepEqual(await seriousViolations(page), []);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('axe: no serious or critical violations on the example slide deck', async () => {
  const page = await lab.context.newPage();
  await page.goto(`${lab.url}examples/slides.html`);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.getElementById('deck').dataset.slide === '1');
  assert.deepEqual(await seriousViolations(page), []);
  await page.close();
});

test('the heatmap as a table of values; a head chosen with the keyboard; focus is visible', async () => {
  const { page, problems } = await openPage(lab);
  await page.focus('#heatmap-table-toggle');
  await page.keyboard.press('Space');
  const table = await page.evaluate(() => {
    const t = document.querySelector('#heatmap-table table');
    return { rows: t.tBodies[0].rows.length, cols: t.tBodies[0].rows[0].cells.length, caption: t.caption.textContent, first: t.tBodies[0].rows[0].cells[1].textContent };
  });
  assert.equal(table.rows, 16);
  assert.equal(table.cols, 17, 'a row header and 16 values');
  assert.match(table.caption, /^Head mean — step 0: rows are query = output position/);
  assert.match(table.first, /^\d\.\d\d$/);
  await page.focus('#head-grid canvas');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('#heatmap-select'), 'head-0', 'the first head, numbered from 0 as the CLI numbers it');
  assert.notEqual(outline, 'none', 'a visible focus ring');
  assert.deepEqual(problems, []);
  await page.close();
});

test('prefers-reduced-motion: Replay shows the last snapshot at once, without stepping through', async () => {
  const { page, problems } = await openPage(lab, '?steps=20&speed=max');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await trainToEnd(page);
  await page.locator('#timeline-slider').fill('0');
  await page.click('#timeline-replay');
  assert.match(await page.textContent('#timeline-step'), /^step 20 \(5 of 5 snapshots\)/);
  assert.deepEqual(problems, []);
  await page.close();
});

// Issue 45, item 5: axe on every lab at both sizes, with its figures drawn: a training lab after a few
// steps, a lab of sections (the checkpoint labs with their tiny model open) once every section has shown
// (or waits for the student's own input: the Lookup lab's digit to draw).
const TRAINED = new Set(['alignment', 'lookup', 'count', 'induction']);
// Contrast in both themes: the dark one at the larger size.
for (const id of ['alignment', 'lookup', 'count', 'scaled', 'pretrained', 'translation', 'writing', 'induction']) {
  for (const [size, theme] of [...SCREENS.map((s) => [s, '']), [SCREENS[0], 'dark']]) {
    test(`axe: no serious or critical violations on the ${id} lab at ${size.width}x${size.height}${theme ? `, ${theme}` : ''}, figures drawn`, async () => {
      const query = `?lab=${id}${TRAINED.has(id) ? '&steps=5&speed=max' : ''}${theme ? `&theme=${theme}` : ''}`;
      const { page, problems } = await openPage(lab, query, { viewport: size });
      if (TRAINED.has(id)) await trainToEnd(page);
      await page.waitForFunction(() => [...document.querySelectorAll('.lab-section')]
        .every((s) => ['shown', 'not-applicable', 'error', 'waiting'].includes(s.dataset.state) || s.hidden), null, { timeout: 60000 });
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}
