// A tap on a heatmap cell on a phone (issue 45, item 3: the caption said "Hover a cell" and a tap showed
// nothing, as a finger has no hover): with touch emulated in Chromium (CDP Input.dispatchTouchEvent, so
// the page gets the pointer events a finger makes), a tap outlines the cell and its readout stays after
// the finger lifts, naming the query, the key and the weight; a tap on another cell moves it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('a tap on the Alignment lab\'s heatmap at 390x844 shows the cell\'s weight and keeps it', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&steps=20&speed=max', { viewport: { width: 390, height: 844 } });
  try {
    await trainToEnd(page);
    assert.match(await page.textContent('#panel-attention, .attention-panel, body'), /Hover or tap a cell/);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
    const canvas = page.locator('#heatmap-main');
    await canvas.scrollIntoViewIfNeeded();
    const layout = JSON.parse(await canvas.getAttribute('data-layout'));
    const box = await canvas.boundingBox();
    const scale = box.width / (await canvas.evaluate((c) => c.width));
    const tap = async (row, col) => {
      const x = box.x + (layout.x + (col + 0.5) * layout.cellW) * scale, y = box.y + (layout.y + (row + 0.5) * layout.cellH) * scale;
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    };
    const tip = '#heatmap-main + .tooltip';
    for (const [row, col] of [[2, 3], [4, 1]]) {
      await tap(row, col);
      await page.waitForFunction(([sel, r, c]) => { const t = document.querySelector(sel); return t && !t.hidden
        && t.dataset.row === String(r) && t.dataset.col === String(c); }, [tip, row, col], { timeout: 5000 });
      await page.waitForTimeout(300); // the readout stays once the finger has lifted
      assert.equal(await page.isHidden(tip), false, `the readout of ${row}, ${col} stays`);
      assert.match(await page.textContent(tip), / · weight \d\.\d{3}$/);
    }
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
