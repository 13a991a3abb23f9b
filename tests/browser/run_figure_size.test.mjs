// The One query lab's attention figure while training (issue 38, item 1), at a laptop's 1280x800 and a
// phone's 390x844: the step count in the figure's title grows (step 0 ... step 5000), and the figure
// keeps its cell size, its height and stays inside its panel on every frame of the run. (On a phone its
// cells shrank from 17 to 4 CSS px and the canvas spilled 5 px past its panel once the title outgrew it.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Records, on every animation frame, each figure's cell (CSS px), height and right edge against its panel's content box. */
async function watchFigures(page, ids) {
  await page.evaluate((ids) => {
    const seen = { frames: [], on: true };
    window.__figures = seen;
    const tick = () => {
      if (!seen.on) return;
      const panel = document.querySelector('.panel.attention');
      const box = panel.getBoundingClientRect();
      const style = getComputedStyle(panel);
      const contentRight = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
      const frame = { step: Number(document.getElementById('progress-text').dataset.step), contentRight, innerWidth };
      for (const id of ids) {
        const canvas = document.getElementById(id);
        const r = canvas.getBoundingClientRect();
        const layout = JSON.parse(canvas.dataset.layout);
        frame[id] = { cell: layout.cellW / devicePixelRatio, right: r.right, height: r.height, title: canvas.dataset.title };
      }
      seen.frames.push(frame);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }, ids);
  return () => page.evaluate(() => { window.__figures.on = false; return window.__figures.frames; });
}

for (const size of SCREENS) {
  test(`count at ${size.width}x${size.height}: the attention figures keep their cells and height and stay in their panel for the whole run`, async () => {
    // The exercise's 5,001 steps at max speed: the title's step count goes from one digit to four.
    const { page, problems } = await openPage(lab, '?lab=count&speed=max', { viewport: size });
    const ids = ['heatmap-main', 'heatmap-extra-0'];
    const stop = await watchFigures(page, ids);
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 90000, polling: 100 });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const frames = await stop();
    const titles = new Set(frames.map((f) => f['heatmap-main'].title));
    assert.ok(titles.has('Attention of the query — step 0'), `the run starts at step 0: ${[...titles].slice(0, 3)}`);
    assert.ok([...titles].some((t) => /step \d{4}$/.test(t)), `the title reaches a four-digit step: ${[...titles].slice(-3)}`);
    const failures = [];
    for (const id of ids) {
      const first = frames[0][id];
      // A phone gives the cells what the panel's width allows (17 px); a laptop their largest (36 px).
      assert.ok(first.cell >= (size.width < 600 ? 16 : 30), `${id}: cells of ${first.cell} px at step 0`);
      for (const f of frames) {
        const at = `${id} at step ${f.step} ("${f[id].title}")`;
        if (f[id].cell !== first.cell) failures.push(`${at}: cell ${f[id].cell} px, was ${first.cell}`);
        if (Math.abs(f[id].height - first.height) > 0.5) failures.push(`${at}: ${f[id].height} px tall, was ${first.height}`);
        if (f[id].right > f.contentRight + 0.5) failures.push(`${at}: right edge ${f[id].right} past the panel's content edge ${f.contentRight}`);
        if (f[id].right > f.innerWidth) failures.push(`${at}: right edge ${f[id].right} past the screen's ${f.innerWidth}`);
      }
    }
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} frames of ${frames.length} went wrong`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
