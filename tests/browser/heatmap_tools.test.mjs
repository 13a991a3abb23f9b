// The heatmap's tools: the tooltip finds the right cell when CSS scales the canvas, the timeline
// scrubs back to an earlier step, PNG export is at 2x, and the timeline exports as WebM (or says why not).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { openPage, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Client coordinates of the centre of cell (row, col), from the canvas's box and its layout. */
function cellCentre(box, layout, css, row, col) {
  const scale = box.width / css.width;
  return { x: box.x + (layout.x + (col + 0.5) * layout.cellW) / css.dpr * scale, y: box.y + (layout.y + (row + 0.5) * layout.cellH) / css.dpr * scale };
}

test('tooltip under a CSS scale transform gives (query, key, token, weight) of the cell under the pointer', async () => {
  const { page, problems } = await openPage(lab);
  await page.evaluate(() => {
    const figure = document.querySelector('#heatmap-main').parentElement;
    figure.style.transform = 'scale(1.5)';
    figure.style.transformOrigin = '0 0';
    figure.style.zIndex = '10'; // the enlarged figure covers the head grid below it
  });
  const canvas = page.locator('#heatmap-main');
  await canvas.scrollIntoViewIfNeeded(); // the pointer only reaches what is in the viewport
  const layout = JSON.parse(await canvas.getAttribute('data-layout'));
  const css = await canvas.evaluate((c) => ({ width: c.offsetWidth, dpr: c.width / c.offsetWidth }));
  for (const [row, col] of [[0, 0], [3, 11], [15, 15], [9, 2]]) {
    const box = await canvas.boundingBox();
    const { x, y } = cellCentre(box, layout, css, row, col);
    await page.mouse.move(x, y);
    await page.waitForFunction(([r, c]) => {
      const t = document.querySelector('#heatmap-main + .tooltip');
      return !t.hidden && t.dataset.row === String(r) && t.dataset.col === String(c);
    }, [row, col]);
    const text = await page.textContent('#heatmap-main + .tooltip');
    assert.match(text, new RegExp(`^output position ${row} \\(target \\d+\\) · input position ${col}, token \\d+ · weight \\d\\.\\d{3}$`));
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('timeline scrubs to step 0 and back to live; PNG export is 2x; WebM export records the timeline', async (t) => {
  const { page, problems } = await openPage(lab, '?steps=20&speed=max');
  await trainToEnd(page);
  assert.match(await page.getAttribute('#heatmap-main', 'data-title'), /step 20$/);
  await page.locator('#timeline-slider').fill('0');
  await page.waitForFunction(() => /step 0$/.test(document.getElementById('heatmap-main').dataset.title));
  assert.equal(await page.isChecked('#timeline-live'), false);
  assert.match(await page.textContent('#timeline-step'), /^step 0 \(1 of 5 snapshots\)/);
  await page.check('#timeline-live');
  await page.waitForFunction(() => /step 20$/.test(document.getElementById('heatmap-main').dataset.title));

  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  const image = PNG.sync.read(readFileSync(await png.path()));
  const cssWidth = await page.locator('#heatmap-main').evaluate((c) => c.offsetWidth);
  assert.equal(image.width, 2 * cssWidth, 'PNG at 2x the on-screen size');
  assert.match(png.suggestedFilename(), /^attention-copy-step20-mean\.png$/);

  const supported = await page.isEnabled('#export-webm');
  if (!supported) {
    t.diagnostic(`WebM export unavailable here: ${await page.textContent('#export-message')}`);
    assert.match(await page.textContent('#export-message'), /unavailable: this browser/);
  } else {
    const [webm] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.click('#export-webm')]);
    const bytes = readFileSync(await webm.path());
    assert.ok(bytes.length > 100, `WebM of ${bytes.length} bytes`);
    assert.deepEqual([...bytes.subarray(0, 4)], [0x1a, 0x45, 0xdf, 0xa3], 'EBML (WebM) header');
    assert.match(webm.suggestedFilename(), /timeline\.webm$/);
  }
  assert.deepEqual(problems, []);
  await page.close();
});
