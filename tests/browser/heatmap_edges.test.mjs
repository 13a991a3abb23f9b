// The heatmap's frame at a device pixel ratio of 1 (projectors, embeds, slides; issue 45, item 4): the
// frame is drawn on the cells' own pixel grid, just outside them, so the last column and the last row are
// whole cells: their edge pixels are the cell's colour.
// Read back from the Scaled lab's sentence heatmap and the Alignment lab's main heatmap, on a 1x page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { canvasPixels, openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** The worst channel difference between the pixel at each edge of the last column / row and its cell's middle. */
async function edgeDifferences(page, selector) {
  const layout = await page.$eval(selector, (c) => JSON.parse(c.dataset.layout));
  const { width, data } = await canvasPixels(page, selector);
  const px = (x, y) => Array.from(data.subarray(4 * (y * width + x), 4 * (y * width + x) + 3));
  const worst = (a, b) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));
  const { x, y, cellW, cellH, rows, cols } = layout;
  const right = x + cols * cellW, bottom = y + rows * cellH;
  let edge = 0;
  for (let r = 0; r < rows; r++) {
    const cy = y + r * cellH + Math.floor(cellH / 2), mid = px(right - Math.ceil(cellW / 2), cy);
    edge = Math.max(edge, worst(px(right - 1, cy), mid));
  }
  for (let c = 0; c < cols; c++) {
    const cx = x + c * cellW + Math.floor(cellW / 2), mid = px(cx, bottom - Math.ceil(cellH / 2));
    edge = Math.max(edge, worst(px(cx, bottom - 1), mid));
  }
  return { edge };
}

for (const [query, selector, viewport] of [['?lab=scaled', 'canvas[data-figure="sentence-0"]', { width: 1280, height: 800 }],
  ['?lab=alignment', '.heatmap-large canvas', { width: 1280, height: 800 }],
  // An embed fits its heatmap to the frame: a scale that is not whole, where the rounding showed.
  ['?lab=alignment&embed=1', '.heatmap-large canvas', { width: 800, height: 450 }]]) {
  test(`${query} at ${viewport.width}x${viewport.height}, DPR 1: the last column and row are whole cells inside the frame`, async () => {
    const { page, problems } = await openPage(lab, query, { viewport });
    await page.waitForSelector(selector);
    await page.waitForFunction((s) => document.querySelector(s)?.dataset.layout, selector);
    assert.equal(await page.evaluate(() => devicePixelRatio), 1);
    const { edge } = await edgeDifferences(page, selector);
    assert.ok(edge <= 2, `the edge pixels are their cell's colour (worst difference ${edge})`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
