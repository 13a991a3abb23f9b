// The Scaled dot-product lab's page (issue 12), as a student uses it: editing a cell of K changes the
// matrices after it and not the ones before; hovering a score shows its arithmetic and lights its
// sources; the sqrt(d_k) demonstration (entropy falls without the scale as d_k grows); token labels of
// a 32-token sentence neither overlap nor leave the canvas; a padding mask blanks the padded rows;
// bad text gets a message and the page keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { logSections, openPage, screenshotIfAsked, sectionsAnswered, setField, startLab, waitConfigured, waitDrawn } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** The numbers a matrix shows, row by row (data-value on each cell). */
const matrix = (page, id) => page.$$eval(`[data-matrix="${id}"] tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td:not(.sum)')].map((td) => Number(td.dataset.value))));

/** Runs `action` (which asks the section again) and waits until the page shows the section's answer. */
async function recompute(page, sectionId, action) {
  const sent = await logSections(page, sectionId);
  await action();
  await sectionsAnswered(page, { section: sectionId, after: sent });
}

test('scaled: editing a cell of K changes QK^T in that column, the weights and the output; Q, V and the other columns stay', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  const before = { q: await matrix(page, 'q'), v: await matrix(page, 'v'), scores: await matrix(page, 'scores'), weights: await matrix(page, 'weights'), out: await matrix(page, 'out') };
  assert.equal(before.scores.length, 5);
  assert.equal(before.scores[0].length, 5);
  await recompute(page, 'steps', async () => {
    const cell = page.locator('[data-matrix="k"] td[data-row="2"][data-col="1"] input');
    await cell.fill('3.5');
    await cell.press('Tab');
  });
  const after = { q: await matrix(page, 'q'), k: await matrix(page, 'k'), v: await matrix(page, 'v'), scores: await matrix(page, 'scores'), weights: await matrix(page, 'weights'), out: await matrix(page, 'out') };
  assert.equal(after.k[2][1], 3.5);
  assert.deepEqual(after.q, before.q);
  assert.deepEqual(after.v, before.v);
  for (let t = 0; t < 5; t++) {
    assert.notEqual(after.scores[t][2], before.scores[t][2], `QK^T (${t}, 2) follows the edit`);
    assert.equal(after.scores[t][0], before.scores[t][0], `QK^T (${t}, 0) does not change`);
  }
  assert.notDeepEqual(after.weights, before.weights);
  assert.notDeepEqual(after.out, before.out);
  assert.ok(await page.$('[data-matrix="k"] td.edited[data-row="2"][data-col="1"]'), 'the edited cell is marked');
  // Row sums of the softmax are shown and are 1.
  const sums = await page.$$eval('[data-matrix="weights"] td.sum', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(sums, ['1.000', '1.000', '1.000', '1.000', '1.000']);
  // Hover a score: its arithmetic, with Q's row and K's row lit.
  await page.hover('[data-matrix="scores"] td[data-row="1"][data-col="2"]');
  const explain = await page.$eval('[data-figure="stages"] .matrix-explain', (p) => p.textContent);
  assert.match(explain, /^q1·k2 = .* = /);
  assert.equal(await page.$$eval('[data-matrix="q"] td.source', (tds) => tds.map((td) => td.dataset.row).join('')), '1111');
  assert.equal(await page.$$eval('[data-matrix="k"] td.source', (tds) => tds.map((td) => td.dataset.row).join('')), '2222');
  // A cell that is not a number is refused with a message; nothing is recomputed.
  const cell = page.locator('[data-matrix="q"] td[data-row="0"][data-col="0"] input');
  await cell.fill('abc');
  await cell.press('Tab');
  assert.equal(await page.getAttribute('[data-matrix="q"] td[data-row="0"][data-col="0"] input', 'aria-invalid'), 'true');
  assert.equal(await page.getAttribute('[data-matrix="q"] td[data-row="0"][data-col="0"] input', 'title'), "'abc' is not a number");
  // It does not look like a value (issue 45, item 4): the error colour, underlined, unlike its neighbour.
  const looks = (col) => page.$eval(`[data-matrix="q"] td[data-row="0"][data-col="${col}"] input`, (i) => {
    const s = getComputedStyle(i);
    return { color: s.color, line: s.textDecorationLine, style: s.textDecorationStyle };
  });
  const [bad, good] = [await looks(0), await looks(1)];
  assert.deepEqual([bad.line, bad.style], ['underline', 'wavy']);
  assert.notEqual(bad.color, good.color);
  assert.equal(good.line, 'none');
  await cell.focus();
  assert.match(await page.$eval('[data-figure="inputs"] .matrix-explain', (p) => p.textContent), /Not changed: 'abc' is not a number/);
  // New random Q, K, V: the edit belongs to the old draw.
  await recompute(page, 'steps', () => page.click('#action-reroll'));
  assert.equal(await page.$('[data-matrix="k"] td.edited'), null);
  assert.deepEqual(problems, []);
  await page.close();
});

test('scaled: without the sqrt(d_k) scale the softmax entropy falls as d_k grows; with it, it does not', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  const entropy = async () => Number(/mean over the \d+ rows: ([\d.]+) nats/.exec(await page.textContent('[data-figure="entropy"]'))[1]);
  const setDk = (dk) => recompute(page, 'steps', () => page.$eval('#prop-dk', (input, value) => {
    input.value = String(value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, dk));
  await recompute(page, 'steps', () => setField(page, 'scaled', false));
  await setDk(2);
  const small = await entropy();
  await setDk(256);
  const large = await entropy();
  assert.ok(large < 0.5 * small, `unscaled: entropy ${small} at d_k = 2, ${large} at d_k = 256`);
  assert.equal(await page.getAttribute('[data-figure="entropy"]', 'data-status'), 'bad');
  await recompute(page, 'steps', () => setField(page, 'scaled', true));
  const scaled = await entropy();
  assert.ok(scaled > 0.7 * Math.log(5), `scaled at d_k = 256: ${scaled} nats`);
  assert.match(page.url(), /dk=256/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('scaled: a short sentence\'s heatmap uses its room (large cells), not a small square beside empty space', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  await page.waitForSelector('canvas[data-figure="sentence-0"]');
  await waitDrawn(page);
  const width = await page.$eval('canvas[data-figure="sentence-0"]', (c) => c.getBoundingClientRect().width);
  assert.ok(width >= 250, `the sentence heatmap is ${width} px wide`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('scaled: a 32-token sentence labels every token on both axes, no two labels overlap, none leaves the canvas; the flow graph likewise', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  const words = 'the quick brown fox jumps over the lazy dog while a remarkably extraordinary hummingbird hovers above the garden , and everyone watching that afternoon agreed it was the most wonderful sight of'.split(' ');
  assert.equal(words.length, 32);
  await recompute(page, 'sentence', () => setField(page, 'text', words.join(' ')));
  const check = await page.$eval('canvas[data-figure="sentence-0"]', (c) => {
    const boxes = JSON.parse(c.dataset.labelBoxes);
    const w = c.getBoundingClientRect().width, h = c.getBoundingClientRect().height;
    const overlaps = [];
    for (const axis of ['x', 'y']) {
      const a = boxes.filter((b) => b.axis === axis);
      for (let i = 0; i < a.length; i++) for (let j = i + 1; j < a.length; j++) {
        const p = a[i], q = a[j];
        if (p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h) overlaps.push(`${p.text} / ${q.text}`);
      }
    }
    const outside = boxes.filter((b) => b.x < 0 || b.y < 0 || b.x + b.w > w + 0.5 || b.y + b.h > h + 0.5).map((b) => b.text);
    return { x: boxes.filter((b) => b.axis === 'x').map((b) => b.text), y: boxes.filter((b) => b.axis === 'y').map((b) => b.text), overlaps, outside };
  });
  assert.equal(check.x.length, 32, 'every key labelled');
  assert.equal(check.y.length, 32, 'every query labelled');
  assert.deepEqual(check.x.filter((t) => t.startsWith('the')), ['the₀', 'the₆', 'the₁₆', 'the₂₇']);
  assert.deepEqual(check.overlaps, []);
  assert.deepEqual(check.outside, []);
  const graph = await page.$eval('canvas[data-figure="flow-0"]', (c) => {
    const boxes = JSON.parse(c.dataset.labelBoxes);
    const w = parseFloat(c.style.width), h = parseFloat(c.style.height);
    let overlaps = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [ax, ay, aw, ah] = boxes[i], [bx, by, bw, bh] = boxes[j];
      if (ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah) overlaps++;
    }
    return { n: boxes.length, overlaps, outside: boxes.filter(([x, y, bw, bh]) => x < 0 || y < 0 || x + bw > w || y + bh > h).length };
  });
  assert.deepEqual(graph, { n: 32, overlaps: 0, outside: 0 });
  await screenshotIfAsked(page.locator('#section-sentence'), 'attnlab-scaled-32-tokens.png');
  assert.deepEqual(problems, []);
  await page.close();
});

test('scaled: a padding mask blanks the padded rows of the shorter sentence; bad text gets a message and the page keeps its figures', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  await recompute(page, 'sentence', () => setField(page, 'sentenceMask', 'padding'));
  assert.equal(await page.inputValue('#prop-text'), 'The cat sat on the mat | A dog barked');
  const rows = await page.$eval('canvas[data-figure="sentence-1"]', (c) => JSON.parse(c.dataset.labelBoxes).filter((b) => b.axis === 'y').map((b) => b.text));
  assert.deepEqual(rows, ['A', 'dog', 'barked', '[pad]₃', '[pad]₄', '[pad]₅']);
  // Bad text: the section says what is wrong; the figures of the last good text stay; fixing it recovers.
  await setField(page, 'text', Array(40).fill('word').join(' '));
  await page.waitForFunction(() => document.getElementById('section-sentence').dataset.state === 'error');
  assert.match(await page.textContent('#section-sentence .section-status'), /Sentence 1 has 40 tokens: at most 32/);
  assert.ok(await page.$('canvas[data-figure="sentence-1"]'), 'the last figures stay');
  await setField(page, 'text', 'Attention is all you need');
  await page.waitForFunction(() => document.getElementById('section-sentence').dataset.state === 'shown');
  await waitConfigured(page);
  assert.equal(await page.$('canvas[data-figure="sentence-1"]'), null);
  assert.deepEqual(problems, []);
  await page.close();
});
