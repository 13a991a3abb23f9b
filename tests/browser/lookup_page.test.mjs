// The Lookup lab's page, section by section, checked from what it draws: the database grid; hard
// attention retrieves an image pixel-for-pixel identical to the one asked for, on every kernel
// backend; soft attention's weights, tinted grid and blur follow the temperature; many queries give
// one retrieval each; the trained lookup beats chance and draws its query, retrieval and top 10; and a
// digit drawn on the pad is centred and looked up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { canvasPixels, openPage, setField, startLab, waitDrawn } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');

let lab, gpuLab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); await gpuLab?.close(); });

/** Waits until section `id` shows a result computed after `since` (a data-drawn stamp). */
async function shown(page, id, since = 0) {
  await page.waitForFunction(([s, t]) => {
    const node = document.getElementById(`section-${s}`);
    const canvas = node?.querySelector('canvas[data-drawn]');
    return node?.dataset.state === 'shown' && Number(canvas?.dataset.drawn) > t;
  }, [id, since], { timeout: 60000, polling: 100 });
}

const stamp = (page, id) => page.$eval(`#section-${id} canvas[data-drawn]`, (c) => Number(c.dataset.drawn));

/** A figure canvas's pixels in CSS px at devicePixelRatio 1: {width, height, data} */
const pixelsOf = (page, figure) => canvasPixels(page, `canvas[data-figure="${figure}"]`);

/** The number of distinct grey levels in the first image of an 'images' figure (title row skipped). */
function greyLevels(p, side) {
  const seen = new Set();
  for (let y = 20; y < 20 + side; y++) for (let x = 0; x < side; x++) seen.add(p.data[4 * (y * p.width + x)]);
  return seen.size;
}

/** The first image of two 'images' figures, compared pixel by pixel -> how many differ. */
function differing(a, b, side) {
  let n = 0;
  for (let y = 20; y < 20 + side; y++) {
    for (let x = 0; x < side; x++) {
      for (let c = 0; c < 3; c++) if (a.data[4 * (y * a.width + x) + c] !== b.data[4 * (y * b.width + x) + c]) n++;
    }
  }
  return n;
}

test('lookup page: the database grid, and hard attention retrieving exactly (pixels) for two queries', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&backend=simd');
  await shown(page, 'database');
  const grid = await pixelsOf(page, 'database-grid');
  assert.ok(greyLevels(grid, 56) > 20, 'the database grid shows digits, not a flat colour');
  await shown(page, 'hard');
  for (const query of [0, 37]) {
    if (query) {
      const before = await stamp(page, 'hard');
      await setField(page, 'query', query);
      await shown(page, 'hard', before);
    }
    const status = page.locator('[data-figure="hard-exact"]');
    assert.equal(await status.getAttribute('data-status'), 'ok', await status.textContent());
    assert.match(await status.textContent(), /all 784 pixels equal/);
    // The backend that computed it is kept as data; the caption does not repeat the badge (issue 29).
    assert.equal(await status.getAttribute('data-ran'), 'simd128');
    assert.doesNotMatch(await status.textContent(), / ran\b|SIMD128|auto:/);
    const original = await pixelsOf(page, 'hard-original'), retrieved = await pixelsOf(page, 'hard-retrieval');
    assert.ok(greyLevels(original, 112) > 10, 'the original is a digit');
    assert.equal(differing(original, retrieved, 112), 0, `query ${query}: the retrieved image is the original, pixel for pixel`);
  }
  assert.ok(page.url().includes('query=37'), 'the query is in the link');
  assert.deepEqual(problems, []);
  await page.close();
});

test('lookup page: soft attention blurs at temperature 1 and picks one image at 0.02; 3 queries, 3 retrievals', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&backend=scalar');
  await shown(page, 'soft');
  const spread = async () => Number(/spread over about ([\d.]+) images/.exec(await page.textContent('[data-figure="soft-why"]'))[1]);
  const warm = await spread();
  assert.equal(await page.getAttribute('[data-figure="soft-why"]', 'data-ran'), 'scalar');
  assert.doesNotMatch(await page.textContent('[data-figure="soft-why"]'), / ran\b|scalar/);
  assert.ok(warm > 5, `random weights spread over ${warm} images`);
  const blurry = await pixelsOf(page, 'soft-retrieval');
  const bars = await pixelsOf(page, 'soft-weights');
  assert.ok(new Set(Array.from(bars.data).filter((_, i) => i % 4 === 2)).size > 3, 'the weights chart is drawn');
  let before = await stamp(page, 'soft');
  await setField(page, 'temperature', 0.02);
  await shown(page, 'soft', before);
  const cold = await spread();
  assert.ok(cold < 1.5, `at temperature 0.02 one image takes over (spread ${cold})`);
  assert.ok(differing(blurry, await pixelsOf(page, 'soft-retrieval'), 112) > 1000, 'the retrieval changes from a blur to a digit');
  before = await stamp(page, 'multi');
  await setField(page, 'queries', 3);
  await shown(page, 'multi', before);
  assert.match(await page.getAttribute('canvas[data-figure="multi-retrievals"]', 'aria-label'), /\(3 images\)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('lookup page: the trained lookup after 300 steps beats chance and draws query, retrieval and top 10', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&steps=300&backend=simd&speed=max');
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 120000, polling: 100 });
  await waitDrawn(page);
  await page.waitForFunction(() => /step 300/.test(document.querySelector('canvas[data-figure="trained-retrieval"]')?.getAttribute('aria-label') ?? ''),
    null, { timeout: 30000 });
  const top1 = Number(await page.getAttribute('#evaluation [data-metric="top1"]', 'data-value'));
  const chance = Number(await page.getAttribute('#evaluation [data-metric="chance"]', 'data-value'));
  assert.ok(top1 > 2 * chance, `top-1 ${top1} against chance ${chance}`);
  assert.ok(greyLevels(await pixelsOf(page, 'trained-retrieval'), 112) > 10, 'the retrieval is drawn');
  assert.match(await page.getAttribute('canvas[data-figure="trained-top10"]', 'aria-label'), /\(10 images\)/);
  assert.match(await page.getAttribute('canvas[data-figure="pairs-grid"]', 'aria-label'), /\(32 images\)/);
  // The notebook's "Minimum MSE loss": the lowest training-batch loss of the run and its step, which the
  // CLI's run of the same seed, on the same build and backend, reports step by step.
  const cli = await new Promise((resolve, reject) => execFile(process.execPath, [CLI, 'train', '--lab', 'lookup', '--steps', '300', '--every', '1',
    '--json', '--build', 'simd', '--backend', 'simd'], { encoding: 'utf8', maxBuffer: 16 << 20, timeout: 120000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))));
  const losses = cli.trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.type === 'progress').map((r) => r.loss);
  const lowest = Math.min(...losses);
  assert.equal(await page.textContent('#lowest-loss'),
    `Minimum MSE loss (as the notebook prints it): ${Math.fround(lowest).toPrecision(4)} (training batch of step ${losses.indexOf(lowest) + 1})`);
  // Your own digit: a "1" drawn on the pad with the mouse is centred, looked up, and its matches drawn.
  assert.match(await page.textContent('#section-own .section-status'), /Draw a digit on the pad/);
  const pad = await page.$eval('#section-own canvas.draw-pad', (c) => { c.scrollIntoView(); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
  await page.mouse.move(pad.x + pad.w * 0.3, pad.y + pad.h * 0.2);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++) await page.mouse.move(pad.x + pad.w * 0.3, pad.y + pad.h * (0.2 + (0.6 * i) / 12));
  await page.mouse.up();
  await page.waitForSelector('canvas[data-figure="own-top10"]', { timeout: 30000 });
  const drawn = await pixelsOf(page, 'own-query');
  assert.ok(greyLevels(drawn, 112) >= 3, 'the drawing is the query');
  // Centred: the stroke drawn at 30% of the width is moved to the middle column.
  const row = 20 + 56; // the query image's middle row (title 20 px, 112 px image)
  const brightest = [...Array(112).keys()].reduce((best, x) => (drawn.data[4 * (row * drawn.width + x)] > drawn.data[4 * (row * drawn.width + best)] ? x : best), 0);
  assert.ok(Math.abs(brightest - 56) <= 8, `the stroke is centred: brightest at x = ${brightest} of 112`);
  assert.match(await page.getAttribute('canvas[data-figure="own-top10"]', 'aria-label'), /\(10 images\)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('lookup page on WebGPU (SwiftShader): hard attention is exact and soft attention runs there', async () => {
  gpuLab = await startLab({ webgpu: true });
  const { page, problems } = await openPage(gpuLab, '?lab=lookup&backend=webgpu&query=12');
  await shown(page, 'hard');
  const status = page.locator('[data-figure="hard-exact"]');
  assert.equal(await status.getAttribute('data-status'), 'ok', await status.textContent());
  assert.equal(await status.getAttribute('data-ran'), 'webgpu');
  await shown(page, 'soft');
  assert.equal(await page.getAttribute('[data-figure="soft-why"]', 'data-ran'), 'webgpu');
  assert.deepEqual(problems, []);
  await page.close();
});
