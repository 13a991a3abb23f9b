// The attention maps' colour range (issue 45, item 2): "0 to the largest" (the default: dark is no
// attention) or "smallest to largest", as the notebooks' seaborn heatmaps and imshow stretch it. Read back
// from the Scaled lab's sentence heatmap at both sizes: in the default the smallest weight is as bright as
// its share of the largest; stretched, it is the palette's darkest and the largest its brightest. The
// setting redraws at once (no new computation), and the link carries it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab, readHeatmap, setField } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const HEATMAP = 'canvas[data-figure="sentence-0"]';
/** The heatmap's cells read back (0..1 along the palette), each row's padding left out. */
const cells = async (page) => (await readHeatmap(page, HEATMAP)).flat();

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`colour range at ${viewport.width}x${viewport.height}: 0 to the largest, then smallest to largest`, async () => {
    const { page, problems } = await openPage(lab, '?lab=scaled', { viewport });
    await page.waitForSelector(HEATMAP);
    const zero = await cells(page);
    const [least, most] = [Math.min(...zero), Math.max(...zero)];
    assert.ok(most > 0.97, `the largest weight is the brightest: ${most}`);
    assert.ok(least > 0.1, `from 0, the smallest weight is not dark: ${least}`);

    await setField(page, 'colourRange', 'data');
    await page.waitForFunction(() => new URL(location.href).searchParams.get('colourRange') === 'data');
    // The redraw comes with the next frame: read until it has (50 reads at most).
    let stretched;
    for (let tries = 0; tries < 50; tries++) {
      stretched = await cells(page);
      if (Math.min(...stretched) < 0.03) break;
      await page.waitForTimeout(100);
    }
    assert.ok(Math.min(...stretched) < 0.03, `stretched, the smallest weight is the darkest: ${Math.min(...stretched)}`);
    assert.ok(Math.max(...stretched) > 0.97);
    // The same order of cells: only the scale moved (every cell a linear map of its value from 0).
    const scale = (v) => (v - least) / (most - least);
    zero.forEach((v, i) => assert.ok(Math.abs(scale(v) - stretched[i]) < 0.03, `cell ${i}: ${scale(v)} vs ${stretched[i]}`));
    assert.deepEqual(problems, []);
    await page.close();
  });
}
