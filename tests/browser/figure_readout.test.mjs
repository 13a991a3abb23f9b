// What a figure's tooltip says, for a keyboard and a finger too (issue 45, item 5: WCAG 2.1 2.1.1, a
// focused figure reads its values; a tap, as a finger has no hover). The canvas figures other than the
// heatmaps and the pickable ones (images, bars, graph, pipeline, phase timeline): the arrows step through
// their spots (each image, bar, token, step) with the tooltip saying each, Home and End go to the ends,
// Escape hides it; a tap shows what is under the finger and keeps it once the finger lifts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { canvasPixels, openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const tipOf = (page, id) => page.locator(`canvas[data-figure="${id}"] + .tooltip`);
async function said(page, id) {
  const tip = tipOf(page, id);
  return (await tip.isHidden()) ? null : tip.textContent();
}

test('the keyboard: the Lookup pairs (images) and the One query pipeline say each spot in turn', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup', { viewport: { width: 1280, height: 800 } });
  const grid = page.locator('canvas[data-figure="pairs-grid"]');
  await grid.waitFor();
  await grid.focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await said(page, 'pairs-grid'), /^held-out query \d+, label \d$/);
  await page.keyboard.press('ArrowRight');
  assert.match(await said(page, 'pairs-grid'), /^its retrieval; top match a \d \((same|another) label\)$/);
  await page.keyboard.press('End');
  assert.match(await said(page, 'pairs-grid'), /^its retrieval/); // the last of 32 images: a retrieval
  await page.keyboard.press('Escape');
  assert.equal(await said(page, 'pairs-grid'), null);
  // Bars: section 4's softmax weights over the database, one bar after another.
  const bars = page.locator('canvas[data-figure="soft-weights"]');
  await bars.scrollIntoViewIfNeeded();
  await page.waitForSelector('canvas[data-figure="soft-weights"][data-drawn]');
  await bars.focus();
  await page.keyboard.press('ArrowRight');
  const first = await said(page, 'soft-weights');
  await page.keyboard.press('ArrowRight');
  const second = await said(page, 'soft-weights');
  assert.match(first, /^database image 0, label \d: weight \d\.\d{4}$/);
  assert.match(second, /^database image 1, label \d: weight \d\.\d{4}$/);
  // The largest weight's bar is marked by a triangle over it, not by its colour alone; its label says so.
  const geometry = JSON.parse(await bars.getAttribute('data-bars'));
  const px = await canvasPixels(page, 'canvas[data-figure="soft-weights"]');
  const k = px.width / Number((await bars.evaluate((c) => c.style.width)).replace('px', ''));
  const dark = (i) => {
    // Just above the bar's top (its value's y, the largest at geometry.top): the triangle's pixels, or the background.
    const x = Math.round((geometry.left + (i + 0.5) * geometry.barW) * k), y = Math.round((geometry.top - 3) * k);
    const o = (y * px.width + x) * 4;
    return px.data[o] + px.data[o + 1] + px.data[o + 2] < 3 * 128;
  };
  assert.equal(dark(geometry.highlight), true, 'a dark triangle over the marked bar');
  assert.equal(dark(geometry.highlight === 0 ? 1 : 0), false, 'nothing over another');
  assert.match(await bars.getAttribute('aria-label'), /\. Marked ▼: database image \d+, label \d: weight \d\.\d{4}$/);
  assert.deepEqual(problems, []);
  await page.close();

  // A graph: the Scaled lab's flow of a sentence, token after token.
  const scaled = await openPage(lab, '?lab=scaled', { viewport: { width: 1280, height: 800 } });
  const flow = scaled.page.locator('canvas[data-figure="flow-0"]');
  await flow.scrollIntoViewIfNeeded();
  await scaled.page.waitForSelector('canvas[data-figure="flow-0"][data-drawn]');
  await flow.focus();
  await scaled.page.keyboard.press('ArrowRight');
  assert.match(await said(scaled.page, 'flow-0'), /^The₀ (attends to .* \d\.\d{2}|: no weight above the threshold)/);
  await scaled.page.keyboard.press('ArrowRight');
  assert.match(await said(scaled.page, 'flow-0'), /^cat /);
  assert.deepEqual(scaled.problems, []);
  await scaled.page.close();

  const count = await openPage(lab, '?lab=count', { viewport: { width: 390, height: 844 } });
  const pipeline = count.page.locator('canvas[data-figure="build-pipeline"]');
  await pipeline.waitFor();
  await pipeline.focus();
  const steps = [];
  for (let i = 0; i < 8; i++) {
    await count.page.keyboard.press('ArrowDown');
    steps.push(await said(count.page, 'build-pipeline'));
  }
  assert.deepEqual(steps.map((t) => t.split(',')[0]), ['1. make_batch', '2. embedding', 'query', '3. keys', '4. values',
    '5. attention', '6. weighted', '7. forward']);
  assert.match(steps[5], /^5\. attention, shape \(4, 1, 10\): model\.attention\(model\.embed\(x\)\)$/);
  await count.page.keyboard.press('ArrowDown'); // past the last: stays there
  assert.equal((await said(count.page, 'build-pipeline')).split(',')[0], '7. forward');
  await count.page.keyboard.press('Tab'); // leaving the figure hides it
  assert.equal(await said(count.page, 'build-pipeline'), null);
  assert.deepEqual(count.problems, []);
  await count.page.close();
});

test('a tap at 390x844: the Lookup pair under the finger is named, and stays named once it lifts', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup', { viewport: { width: 390, height: 844 } });
  const grid = page.locator('canvas[data-figure="pairs-grid"]');
  await grid.waitFor();
  await grid.scrollIntoViewIfNeeded();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  const box = await grid.boundingBox();
  // The first image of the grid: the first held-out query (its top-left corner, a few px in).
  const x = box.x + 12, y = box.y + 40;
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => !document.querySelector('canvas[data-figure="pairs-grid"] + .tooltip').hidden, null, { timeout: 5000 });
  await page.waitForTimeout(300);
  assert.match(await said(page, 'pairs-grid'), /^held-out query \d+, label \d$/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a long bars title wraps to the figure\'s width, none of it cut (the Pretrained lab\'s five likeliest tokens at 390x844)', async () => {
  const { page, problems } = await openPage(lab, `?lab=pretrained&text=${encodeURIComponent('The quick brown fox jumps over the extraordinarily lazy dog near the riverbank')}`,
    { viewport: { width: 390, height: 844 } });
  await page.click('text=Mask a word');
  const bars = page.locator('canvas[data-figure="mask-0"]');
  await bars.waitFor();
  await page.waitForSelector('canvas[data-figure="mask-0"][data-drawn]');
  const seen = await bars.evaluate((c) => {
    const lines = JSON.parse(c.dataset.titleLines);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `600 13px ${getComputedStyle(document.documentElement).getPropertyValue('--canvas-font')}`;
    return { lines, widest: Math.max(...lines.map((l) => ctx.measureText(l).width)), width: parseFloat(c.style.width),
      title: c.getAttribute('aria-label').split('. Marked')[0] };
  });
  assert.ok(seen.lines.length >= 2, JSON.stringify(seen));
  assert.equal(seen.lines.join(' '), seen.title);
  assert.ok(seen.widest <= seen.width - 2, JSON.stringify(seen));
  assert.deepEqual(problems, []);
  await page.close();
});
