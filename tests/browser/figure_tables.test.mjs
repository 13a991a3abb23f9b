// Every reader of a figure (issue 45, item 5): under each canvas figure of a section, "Values as a table"
// opens from the keyboard (Tab to it, Enter) into a table with a caption and row and column headers, and
// its numbers are the figure's: the Scaled lab's sentence heatmap read back from its pixels is the table
// divided by its largest value; the flow graph's rows are its arrows (weights above the threshold); the
// Lookup lab's bars list their values; the Pretrained lab's model view has a row per layer, head and query
// (a chart's and the other kinds' tables: tests/node/figure_data.test.mjs). At both sizes;
// the page does not scroll sideways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab, readHeatmap, screenshotIfAsked } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Opens figure `id`'s table from the keyboard; -> {caption, columns, rows (header + cells)}. */
async function openTable(page, id) {
  const summary = page.locator(`[data-figure-data="${id}"] summary`);
  await summary.focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector(`[data-figure-data="${id}"] table`);
  return page.$eval(`[data-figure-data="${id}"] table`, (t) => ({
    caption: t.caption.textContent,
    columns: [...t.tHead.rows[0].cells].map((c) => c.textContent),
    rows: [...t.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent)),
    headers: [...t.querySelectorAll('th')].every((h) => ['row', 'col'].includes(h.scope)),
  }));
}

for (const size of SCREENS) {
  test(`figure tables at ${size.width}x${size.height}: keyboard-opened, headed, the figures' own numbers`, async () => {
    const { page, problems } = await openPage(lab, '?lab=scaled', { viewport: size });
    await page.waitForSelector('canvas[data-figure="sentence-0"]');
    const heat = await openTable(page, 'sentence-0');
    assert.ok(heat.headers);
    await screenshotIfAsked(page.locator('[data-figure-data="sentence-0"]').locator('xpath=..'), `figure-table-${size.width}.png`);
    assert.match(heat.caption, /^Self-attention weights.*: rows are query \(attending\), columns key \(attended to\)\.$/);
    assert.deepEqual(heat.columns.slice(1), heat.rows.map((r) => r[0]), 'the same tokens on both axes');
    const values = heat.rows.map((r) => r.slice(1).map(Number));
    const top = Math.max(...values.flat());
    const pixels = await readHeatmap(page, 'canvas[data-figure="sentence-0"]');
    values.forEach((row, r) => row.forEach((v, c) => assert.ok(Math.abs(v / top - pixels[r][c]) < 0.01,
      `cell ${r},${c}: table ${v} / ${top} against the pixel's ${pixels[r][c]}`)));
    values.forEach((row) => assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 0.002, 'each row of weights sums to 1'));

    const flow = await openTable(page, 'flow-0');
    assert.deepEqual(flow.columns, ['from (query)', 'to (key)', 'weight']);
    for (const [from, to, w] of flow.rows) {
      const r = heat.rows.findIndex((row) => row[0] === from), c = heat.columns.indexOf(to) - 1;
      assert.equal(Number(w), values[r][c], `${from} -> ${to}`);
      assert.ok(Number(w) > 0.1, 'only arrows above the threshold (0.1, the notebook\'s)');
    }
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll');
    assert.deepEqual(problems, []);
    await page.close();

    const lookup = await openPage(lab, '?lab=lookup', { viewport: size });
    await lookup.page.waitForSelector('canvas[data-figure="hard-scores"]');
    const bars = await openTable(lookup.page, 'hard-scores');
    const scores = bars.rows.map((r) => Number(r[1]));
    assert.equal(scores.filter((v) => v === 1).length, 1, 'hard attention: exactly one score of 1');
    assert.equal(scores.filter((v) => v === 0).length, scores.length - 1);
    assert.deepEqual(lookup.problems, []);
    await lookup.page.close();

    // BertViz's model view and head view (the tiny BERT open): a row per layer, head and query; per query.
    const bert = await openPage(lab, '?lab=pretrained', { viewport: size });
    await bert.page.waitForSelector('canvas[data-figure="model-grid"]');
    const grid = await openTable(bert.page, 'model-grid');
    const tokens = grid.columns.length - 1;
    assert.equal(grid.rows.length, 2 * 2 * tokens, 'the tiny BERT: 2 layers x 2 heads x each query');
    assert.match(grid.rows[0][0], /^0\.0 · /);
    grid.rows.forEach((row) => assert.ok(Math.abs(row.slice(1).reduce((a, v) => a + Number(v), 0) - 1) < 0.002, `${row[0]} sums to 1`));
    const lines = await openTable(bert.page, 'head-lines');
    assert.equal(lines.columns.length - 1, tokens);
    assert.deepEqual(bert.problems, []);
    await bert.page.close();
  });
}

// The training labs' learning curves have their table too: the loss per step as the chart draws it.
test('the loss chart\'s table: a row per step trained, the batch loss and the evaluations', async () => {
  const { trainToEnd } = await import('./support.mjs');
  const { page, problems } = await openPage(lab, '?lab=alignment&steps=20&speed=max');
  await trainToEnd(page);
  const t = await openTable(page, 'chart-loss');
  assert.equal(t.columns[0], 'training step');
  assert.ok(t.rows.length >= 20, String(t.rows.length));
  assert.equal(t.rows.at(-1)[0], '20');
  assert.ok(t.rows.every((r) => r[1] === '' || Number(r[1]) > 0), 'the batch losses are positive numbers');
  assert.deepEqual(problems, []);
  await page.close();
});
