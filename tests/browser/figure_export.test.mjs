// Figures for slides: the heatmaps and the charts export as vector SVG (rect cells, text labels, no
// embedded picture) and as PNG at twice their on-screen size, through the buttons on the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { openPage, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

async function save(page, button) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

/** Parses SVG text in the browser: -> {error, cells, rects, texts, paths, images, width, height} */
const inspectSvg = (page, text) => page.evaluate((svg) => {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const root = doc.documentElement;
  return {
    error: doc.querySelector('parsererror')?.textContent ?? null,
    root: root.localName,
    cells: doc.querySelectorAll('g.cells > rect').length,
    rects: doc.querySelectorAll('rect').length,
    texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
    paths: doc.querySelectorAll('path').length,
    images: doc.querySelectorAll('image, foreignObject').length,
    width: Number(root.getAttribute('width')), height: Number(root.getAttribute('height')),
  };
}, text);

test('heatmap SVG: one rect per cell, titles, ticks and legend as text; PNG at 2x', async () => {
  const { page, problems } = await openPage(lab, '?steps=10&speed=max');
  await trainToEnd(page);
  const svg = await save(page, '#export-svg');
  assert.equal(svg.name, 'attention-copy-step10-mean.svg');
  const s = await inspectSvg(page, svg.bytes.toString('utf8'));
  assert.equal(s.error, null);
  assert.equal(s.root, 'svg');
  assert.equal(s.cells, 16 * 16, 'a rect per cell');
  assert.equal(s.images, 0, 'vector, not a picture');
  for (const label of ['Head mean — step 10', 'key = input position', 'query = output position', '1.0', '0.0', '0: 28']) {
    assert.ok(s.texts.some((t) => t === label || (label === '0: 28' && /^0: \d+$/.test(t))), `text '${label}' in ${s.texts.slice(0, 8)}`);
  }
  const css = await page.locator('#heatmap-main').evaluate((c) => ({ width: c.offsetWidth, height: c.offsetHeight }));
  assert.deepEqual([s.width, s.height], [css.width, css.height], 'SVG at the on-screen size');
  const png = PNG.sync.read((await save(page, '#export-png')).bytes);
  assert.deepEqual([png.width, png.height], [2 * css.width, 2 * css.height]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('loss and accuracy charts, and your-input heatmap: SVG with paths and text, PNG at 2x', async () => {
  const { page, problems } = await openPage(lab, '?steps=60&speed=max');
  await trainToEnd(page);
  for (const id of ['loss', 'accuracy']) {
    const svg = await save(page, `#export-${id}-svg`);
    assert.match(svg.name, new RegExp(`^${id}-copy-step60\\.svg$`));
    const s = await inspectSvg(page, svg.bytes.toString('utf8'));
    assert.equal(s.error, null);
    assert.ok(s.paths >= 3, `${id}: lines and points as paths (${s.paths})`);
    for (const label of [id === 'loss' ? 'Loss' : 'Accuracy', 'training step', 'training batch', 'evaluation (1,024 fresh)']) {
      assert.ok(s.texts.includes(label), `${id}: text '${label}'`);
    }
    const css = await page.locator(`#chart-${id}`).evaluate((c) => ({ width: c.offsetWidth, height: c.offsetHeight }));
    const png = PNG.sync.read((await save(page, `#export-${id}-png`)).bytes);
    assert.deepEqual([png.width, png.height], [2 * css.width, 2 * css.height], `${id} PNG at 2x`);
  }
  await page.fill('#inspect-tokens', '3 1 4 1 5');
  await page.click('#inspect-submit');
  await page.waitForFunction(() => !document.getElementById('heatmap-inspect').parentElement.hidden);
  const s = await inspectSvg(page, (await save(page, '#export-inspect-svg')).bytes.toString('utf8'));
  assert.equal(s.cells, 5 * 5);
  assert.ok(s.texts.includes('Head mean — your input'));
  assert.deepEqual(problems, []);
  await page.close();
});
