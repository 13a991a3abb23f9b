// The Translation lab in the browser (issue 14): the tiny Marian checkpoint of make_marian_fixtures.py
// dropped on the page (its files, with WEIGHTS as the weights file), the default sentence translated
// with the checkpoint's 4 beams; the cross-attention heatmap has a row per generated token,
// its labels are the source and generated pieces and its pixels PyTorch's cross-attention
// (tests/fixtures/marian_tiny_reference.safetensors, "cat.beam.*", max_length 32 as there); the lines
// between the two sentences are as dark as the weights; the model view's thumbnails are the reference
// per layer and head and a click picks one; "Next word" adds a row, Play adds rows one at a time and
// Pause stops it; the beams and their scores show at each step; a click on a head of Switch heads off
// translates as PyTorch does with that head zeroed (ablation_reference.safetensors). One page for all, for the CI budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { logSections, sectionsAnswered, startLab, waitConfigured, waitDrawn, setField, readHeatmap, paletteValue, dropFiles, TINY_MARIAN } from './support.mjs';
import { PALETTES } from '../../web/shared/palette.js';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { tokenLabels } from '../../web/labs/05_pretrained_sections.js';
import { visibleToken } from '../../web/labs/visible_text.js';

// The weights file dropped, alone: pytorch_model.bin, the only weights file of most opus-mt folders (the
// fixture's model.safetensors holds the same weights; tests/node/marian.test.mjs checks them bit for bit).
const WEIGHTS = 'pytorch_model.bin';
const FILES = ['config.json', 'source.spm', 'target.spm', 'vocab.json', WEIGHTS].map((f) => path.join(TINY_MARIAN, f));
const { tensors: ref, metadata } = parseSafetensors(readFileSync(path.join(TINY_MARIAN, '..', 'marian_tiny_reference.safetensors')));
const vocab = JSON.parse(readFileSync(path.join(TINY_MARIAN, 'vocab.json'), 'utf8'));
const pieceOf = new Map(Object.entries(vocab).map(([piece, id]) => [id, piece]));
// "The cat sat on the mat." as the reference tokenised it, with the </s> Marian appends; the beams' output.
const SOURCE = [...JSON.parse(metadata['cat.source_pieces']), '</s>'];
const TARGET = Array.from(ref['cat.beam.ids'].data).slice(1).map((id) => pieceOf.get(id));
const S = SOURCE.length, T = TARGET.length, L = 2, H = 2;
const cross = ref['cat.beam.cross_attentions'].data; // [T, L, H, S]
const crossAt = (t, l, h, s) => cross[((t * L + l) * H + h) * S + s];
// The mean over the heads of layers from..L-1: from = L - 1 is notebook 04's figure, the page's first view.
const crossMean = (t, s, from = L - 1) => {
  let m = 0;
  for (let l = from; l < L; l++) for (let h = 0; h < H; h++) m += crossAt(t, l, h, s) / ((L - from) * H);
  return m;
};

let lab, page;
const problems = [];
before(async () => {
  lab = await startLab();
  page = await lab.context.newPage();
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.goto(`${lab.url}?lab=translation&maxLength=32`);
  await page.waitForSelector('#open-drop');
  // Before a checkpoint there is nothing to play or step through: the section's buttons are disabled.
  await page.waitForFunction(() => document.getElementById('section-translate')?.dataset.state === 'waiting');
  noCheckpointButtons = await page.$$eval('#section-translate .section-actions button', (bs) => bs.map((b) => [b.textContent, b.disabled]));
  await dropFiles(page, FILES);
  await waitConfigured(page);
  await waitDrawn(page);
});
after(async () => { await lab?.close(); });
let noCheckpointButtons = null;

test('the checkpoint\'s num_beams and max_length are used, as generate() uses them, unless the link gives others', async () => {
  const config = JSON.parse(readFileSync(path.join(TINY_MARIAN, 'config.json'), 'utf8'));
  for (const [query, beams, maxLength] of [['', config.num_beams, config.max_length], ['&beams=2', 2, config.max_length]]) {
    const other = await lab.context.newPage();
    await other.goto(`${lab.url}?lab=translation${query}`);
    await other.waitForSelector('#open-drop');
    await dropFiles(other, FILES);
    await waitConfigured(other);
    assert.equal(await other.inputValue('#prop-beams'), String(beams), `${query || 'no link setting'}: beams`);
    assert.equal(await other.inputValue('#prop-maxLength'), String(maxLength), `${query || 'no link setting'}: max length`);
    assert.match(await other.textContent('#open-status'), new RegExp(`config: ${config.num_beams} beams, max length ${config.max_length} \\(used, as generate\\(\\) uses them, unless you choose others\\)`));
    await other.close();
  }
});

test('once open, at 1280x800 the cross-attention heatmap starts on the first screen under the translation; beams and max length are in the settings', async () => {
  // Issue 45, item 4: the first screen after opening was all text (the heatmap began at y = 1051; on a phone 1538).
  const other = await lab.context.newPage();
  await other.setViewportSize({ width: 1280, height: 800 });
  await other.goto(`${lab.url}?lab=translation`);
  await other.waitForSelector('#open-drop');
  await dropFiles(other, FILES);
  await waitConfigured(other);
  await other.waitForSelector('canvas[data-figure="cross-heatmap"]');
  await waitDrawn(other);
  const at = await other.evaluate(() => {
    window.scrollTo(0, 0);
    const top = (sel) => document.querySelector(sel).getBoundingClientRect().top;
    return { translation: top('[data-figure="translation"]'), heatmap: top('canvas[data-figure="cross-heatmap"]'), height: innerHeight,
      beamsInSettings: !!document.querySelector('section.settings #prop-beams'),
      maxLengthInSettings: !!document.querySelector('section.settings #prop-maxLength') };
  });
  assert.ok(at.translation < at.heatmap && at.heatmap + 60 < at.height, JSON.stringify(at));
  assert.ok(at.beamsInSettings && at.maxLengthInSettings, JSON.stringify(at));
  // The pieces and the beams are under the heatmap now, in the cross-attention's section.
  assert.equal(await other.$$eval('#section-cross [data-figure="pieces"], #section-cross [data-figure="beams"]', (n) => n.length), 2);
  // On a phone the cross-attention's section starts on the first screen, its heatmap just under it (y = 897 of 844).
  await other.setViewportSize({ width: 390, height: 844 });
  await waitDrawn(other);
  const phone = await other.evaluate(() => {
    window.scrollTo(0, 0);
    return { section: document.querySelector('#section-cross h2').getBoundingClientRect().bottom,
      heatmap: document.querySelector('canvas[data-figure="cross-heatmap"]').getBoundingClientRect().top, height: innerHeight };
  });
  assert.ok(phone.section < phone.height && phone.heatmap < 1.15 * phone.height, JSON.stringify(phone));
  await other.close();
});

test('before a checkpoint, Play, Next word and the other buttons of the translation are disabled; after it, enabled', async () => {
  assert.ok(noCheckpointButtons.length >= 3, JSON.stringify(noCheckpointButtons));
  assert.ok(noCheckpointButtons.every(([, disabled]) => disabled), JSON.stringify(noCheckpointButtons));
  const now = await page.$$eval('#section-translate .section-actions button', (bs) => bs.map((b) => b.disabled));
  assert.ok(now.every((disabled) => !disabled));
});

const rowsOf = (id, p = page) => p.$eval(`canvas[data-figure="${id}"]`, (c) => JSON.parse(c.dataset.layout).rows);
const waitRows = (id, rows) => page.waitForFunction(({ id, rows }) => {
  const c = document.querySelector(`canvas[data-figure="${id}"]`);
  return c && JSON.parse(c.dataset.layout).rows === rows;
}, { id, rows }, { timeout: 30000, polling: 50 });


test(`${WEIGHTS} opens; the cross-attention heatmap has a row per generated token, labelled with the pieces, its pixels PyTorch's`, async () => {
  assert.match(await page.textContent('#open-status'), /^Open: checkpoint: 2 \+ 2 layers, 2 heads, d_model 32, vocabulary 649/);
  assert.equal(await rowsOf('cross-heatmap'), T);
  const boxes = JSON.parse(await page.getAttribute('canvas[data-figure="cross-heatmap"]', 'data-label-boxes'));
  // The pieces themselves; a piece that occurs twice carries its position ("▁₃"), as every token label does.
  assert.deepEqual(boxes.filter((b) => b.axis === 'x').map((b) => b.text), tokenLabels(SOURCE));
  assert.deepEqual(boxes.filter((b) => b.axis === 'y').map((b) => b.text), tokenLabels(TARGET));
  assert.deepEqual(await crossHeatmapFailures(page), []);
  assert.deepEqual(problems, []);
});

/** The cross-attention heatmap's cells that differ from PyTorch's by more than 2% of its colour scale (on a
 *  scale from 0 to the largest weight). want(t, s): by default the last layer's mean over heads (notebook 04); rows: the tokens shown. */
async function crossHeatmapFailures(p, want = crossMean, rows = T) {
  const got = await readHeatmap(p, 'canvas[data-figure="cross-heatmap"]');
  assert.equal(got.length, rows, 'a row per generated token');
  let max = 0;
  for (let t = 0; t < rows; t++) for (let s = 0; s < S; s++) max = Math.max(max, want(t, s));
  const failures = [];
  got.forEach((row, t) => row.forEach((g, s) => {
    if (Math.abs(g * max - want(t, s)) > 0.02 * max) failures.push(`[${t}, ${s}]: ${(g * max).toFixed(3)} vs ${want(t, s).toFixed(3)}`);
  }));
  return failures;
}

test('notebook 04\'s figure first (the last layer, its heads averaged); every layer\'s mean and one head a click away; the notebook\'s failing cell explained', async () => {
  assert.match(await page.getAttribute('canvas[data-figure="cross-heatmap"]', 'aria-label'), /last layer \(1\), mean of its 2 heads/);
  assert.equal(await page.isVisible('#prop-layer'), false, 'layer and head apply to one head only');
  const note = await page.textContent('[data-figure="cross-notebook"]');
  assert.match(note, /returns only the token ids/);
  assert.match(note, /English tokenizer/);
  // Each change is waited for by the figure's title, which names the view: a redraw, not the old one.
  const titled = (pattern) => page.waitForFunction((p) => new RegExp(p).test(document.querySelector('canvas[data-figure="cross-heatmap"]')?.getAttribute('aria-label') ?? ''),
    pattern.source, { timeout: 20000 });
  const shown = async (view, title, want) => {
    await page.selectOption('#prop-crossView', view);
    await titled(title);
    assert.deepEqual(await crossHeatmapFailures(page, want), [], view);
  };
  await shown('all', /mean of all 2 layers × 2 heads/, (t, s) => crossMean(t, s, 0));
  await shown('one', /layer 0, head 0/, (t, s) => crossAt(t, 0, 0, s));
  await setField(page, 'head', '1');
  await titled(/layer 0, head 1/);
  assert.deepEqual(await crossHeatmapFailures(page, (t, s) => crossAt(t, 0, 1, s)), []);
  await setField(page, 'head', '0');
  await titled(/layer 0, head 0/);
  await shown('last', /last layer \(1\), mean of its 2 heads/, crossMean);
});

test('on WebGPU (SwiftShader): the attention shown runs there, the badge says so and that the decoding loop ran on the CPU; the pixels are still PyTorch\'s', async () => {
  const gpuLab = await startLab({ webgpu: true });
  try {
    const p = await gpuLab.context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${gpuLab.url}?lab=translation&maxLength=32&backend=webgpu`);
    await p.waitForSelector('#open-drop');
    await dropFiles(p, FILES);
    await waitConfigured(p);
    await waitDrawn(p);
    assert.match(await p.textContent('#badge-backend'), /^WebGPU ran$/);
    assert.match(await p.textContent('#badge-reason'), /ran the attention shown, and the decoding loop \(choosing each word\) ran the SIMD128 CPU kernel/);
    assert.equal(await rowsOf('cross-heatmap', p), T);
    assert.deepEqual(await crossHeatmapFailures(p), []);
    assert.deepEqual(errors, []);
  } finally {
    await gpuLab.close();
  }
});

test('the lines between the sentences: a generated token\'s lines are as dark as its weights', async () => {
  const query = 11; // its weights run from 0.01 to 0.40
  const points = JSON.parse(await page.getAttribute('canvas[data-figure="cross-lines"]', 'data-token-points'));
  assert.deepEqual([points.query.length, points.key.length], [T, S]);
  await page.locator('canvas[data-figure="cross-lines"]').click({ position: { x: points.query[query][0], y: points.query[query][1] } });
  await page.waitForFunction(() => /Showing only the lines of generated/.test(document.querySelector('canvas[data-figure="cross-lines"]').getAttribute('aria-label')));
  const darkness = await page.$eval('canvas[data-figure="cross-lines"]', (canvas, { points, query }) => {
    const k = canvas.width / canvas.getBoundingClientRect().width;
    const ctx = canvas.getContext('2d');
    const background = Array.from(ctx.getImageData(2, Math.floor(canvas.height / 2), 1, 1).data.slice(0, 3));
    return points.key.map((p) => {
      const x = Math.round(((points.query[query][0] + p[0]) / 2) * k), y = Math.round(((points.query[query][1] + p[1]) / 2) * k);
      let best = 0; // the darkest pixel near the midpoint (a 2 px line may fall between pixel centres)
      for (let dy = -2; dy <= 2; dy++) {
        const [r, g, b] = ctx.getImageData(x, y + dy, 1, 1).data;
        best = Math.max(best, Math.abs(background[0] - r) + Math.abs(background[1] - g) + Math.abs(background[2] - b));
      }
      return best;
    });
  }, { points, query });
  const weights = Array.from({ length: S }, (_, s) => crossMean(query, s));
  const failures = [];
  for (let a = 0; a < S; a++) for (let b = 0; b < S; b++) {
    if (weights[a] > weights[b] + 0.08 && !(darkness[a] > darkness[b])) failures.push(`source ${a} (${weights[a].toFixed(2)}) vs ${b} (${weights[b].toFixed(2)})`);
  }
  assert.deepEqual(failures, []);
  assert.equal(darkness.indexOf(Math.max(...darkness)), weights.indexOf(Math.max(...weights)), 'the darkest line goes to the strongest source token');
  assert.deepEqual(problems, []);
});

test('the lines and the model view export: SVG with the tokens as text and the lines as paths, PNG at 2x', async () => {
  const save = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
  };
  const svg = await save('#export-cross-lines-svg');
  assert.equal(svg.name, 'translation-cross-cross-lines.svg');
  const s = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return { error: doc.querySelector('parsererror')?.textContent ?? null, texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      paths: doc.querySelectorAll('path').length };
  }, svg.bytes.toString('utf8'));
  assert.equal(s.error, null);
  assert.ok(s.paths >= 1, 'the lines are paths');
  for (const label of ['generated', 'source', ...tokenLabels(SOURCE)]) assert.ok(s.texts.includes(label), `text '${label}'`);
  for (const [id, png] of [['cross-lines', '#export-cross-lines-png'], ['views-grid', '#export-views-grid-png']]) {
    const bytes = (await save(png)).bytes;
    const css = await page.$eval(`canvas[data-figure="${id}"]`, (c) => c.getBoundingClientRect().width);
    assert.ok(Math.abs(bytes.readUInt32BE(16) - 2 * css) <= 2, `${id}: PNG width ${bytes.readUInt32BE(16)} is twice ${css}`);
  }
  assert.deepEqual(problems, []);
});

test('the model view (cross): L x H thumbnails of generated x source, PyTorch\'s per head; a click picks the layer and head', async () => {
  await setField(page, 'side', 'cross');
  await page.waitForFunction(() => /^Cross-attention: 2 layers/.test(document.querySelector('canvas[data-figure="views-grid"]')?.getAttribute('aria-label') ?? ''));
  const { cells, pixels } = await page.$eval('canvas[data-figure="views-grid"]', (canvas, { T, S }) => {
    const cells = JSON.parse(canvas.dataset.cells);
    const k = canvas.width / canvas.getBoundingClientRect().width;
    const ctx = canvas.getContext('2d');
    const pixels = cells.map((c) => Array.from({ length: T * S }, (_, i) => {
      const x = Math.floor((c.x + ((i % S) + 0.5) * (c.w / S)) * k), y = Math.floor((c.y + (Math.floor(i / S) + 0.5) * (c.h / T)) * k);
      return Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3));
    }));
    return { cells, pixels };
  }, { T, S });
  assert.deepEqual(cells.map((c) => [c.layer, c.head]), [[0, 0], [0, 1], [1, 0], [1, 1]]);
  assert.ok(cells.every((c) => c.w * T === c.h * S), 'a thumbnail is S wide and T high, in square cells');
  cells.forEach((c, i) => {
    const got = pixels[i].map((p) => paletteValue(PALETTES.viridis, p));
    const worst = Math.max(...got.map((g, j) => Math.abs(g - crossAt(Math.floor(j / S), c.layer, c.head, j % S))));
    assert.ok(worst <= 0.02, `layer ${c.layer} head ${c.head}: pixels differ from the weights by up to ${worst}`);
  });
  const target = cells.find((c) => c.layer === 1 && c.head === 1);
  await page.locator('canvas[data-figure="views-grid"]').click({ position: { x: target.x + target.w / 2, y: target.y + target.h / 2 } });
  await page.waitForFunction(() => document.getElementById('prop-viewLayer').value === '1' && document.getElementById('prop-viewHead').value === '1');
  await page.waitForFunction(() => /^Cross-attention, layer 1, head 1/.test(document.querySelector('canvas[data-figure="views-lines"]')?.getAttribute('aria-label') ?? ''));
  // The encoder's and the decoder's self-attention: their own grids, over the source and over the decoder's inputs.
  await setField(page, 'side', 'encoder');
  await page.waitForFunction((S) => new RegExp(`^Encoder self-attention: 2 layers.* over ${S} tokens`).test(document.querySelector('canvas[data-figure="views-grid"]')?.getAttribute('aria-label') ?? ''), S);
  await setField(page, 'side', 'decoder');
  await page.waitForFunction((T) => new RegExp(`^Decoder self-attention: 2 layers.* over ${T} tokens`).test(document.querySelector('canvas[data-figure="views-grid"]')?.getAttribute('aria-label') ?? ''), T);
  assert.deepEqual(problems, []);
});

// Switch heads off (issue 39, item 4), against tests/fixtures/make_ablation_fixtures.py: PyTorch's Marian with
// cross-attention head 0.1's z zeroed before out_proj (the ids tests/node/ablation_cli.test.mjs checks headless).
test('Switch heads off: a click on cross-attention head 0.1 translates as PyTorch does with it zeroed (4 beams, then greedy, its cross-attention too)', async () => {
  const ablation = parseSafetensors(readFileSync(path.join(TINY_MARIAN, '..', 'ablation_reference.safetensors'))).tensors;
  const piecesOf = (key) => Array.from(ablation[key].data).slice(1).map((id) => pieceOf.get(id));
  const generated = (pieces) => page.waitForFunction((want) => document.querySelector('[data-figure="pieces"]')?.textContent.endsWith(want),
    `· generated (${pieces.length}): ${pieces.join(' ')}`, { timeout: 20000 });
  await page.click('#action-all');
  await generated(TARGET); // the whole model's, as PyTorch's beams
  assert.deepEqual(piecesOf('marian.none.beam.ids'), TARGET);
  const whole = await page.textContent('[data-figure="translation"]');
  assert.equal(await page.textContent('[data-figure="ablate-off"]'), 'Every head is on: click a head above to switch it off.');
  const grid = page.locator('canvas[data-figure="ablate-grid"]');
  await grid.scrollIntoViewIfNeeded();
  const cell = JSON.parse(await grid.getAttribute('data-cells')).find((c) => c.layer === 0 && c.head === 1);
  const k = await grid.evaluate((c) => c.getBoundingClientRect().width / parseFloat(c.style.width));
  await grid.click({ position: { x: k * (cell.x + cell.w / 2), y: k * (cell.y + cell.h / 2) } });
  await page.waitForFunction(() => document.getElementById('prop-ablate').value === '0.1');
  await page.waitForFunction(() => document.querySelector('[data-figure="ablate-off"]')?.textContent.startsWith('Heads switched off (1): 0.1'), null, { timeout: 20000 });
  const off = piecesOf('marian.l0h1.beam.ids');
  assert.notDeepEqual(off, TARGET);
  await generated(off);
  assert.match(page.url(), /[?&]ablate=0\.1(&|$)/);
  // The section says what the switch changed: this translation, and the whole model's.
  const said = await page.textContent('[data-figure="ablate-translation"]');
  const now = await page.textContent('[data-figure="translation"]');
  assert.equal(said, `With the heads off: ${now} · with every head: ${whole}`);
  // Greedy: the ids and every generated token's cross-attention (the heatmap: the last layer's mean) are PyTorch's.
  await setField(page, 'beams', 1);
  const greedy = piecesOf('marian.l0h1.greedy.ids');
  await generated(greedy);
  const cross0 = ablation['marian.l0h1.greedy.cross_attentions'].data; // [N, L, H, S]
  const offMean = (t, s) => (cross0[((t * L + 1) * H + 0) * S + s] + cross0[((t * L + 1) * H + 1) * S + s]) / H;
  await page.waitForFunction((n) => JSON.parse(document.querySelector('canvas[data-figure="cross-heatmap"]').dataset.layout).rows === n, greedy.length);
  assert.deepEqual(await crossHeatmapFailures(page, offMean, greedy.length), []);
  // The chosen token's logit: where the greedy translations part (token p), the whole model's token and the
  // one written instead, each with every head -> with 0.1 off, as PyTorch's greedy step p logits (the text's 3 decimals).
  const wholeIds = Array.from(ablation['marian.none.greedy.ids'].data), offIds = Array.from(ablation['marian.l0h1.greedy.ids'].data);
  let p = 1;
  while (wholeIds[p] === offIds[p]) p++;
  const on = ablation['marian.none.greedy.logits'].data, offLogits = ablation['marian.l0h1.greedy.logits'].data, V = on.length / (wholeIds.length - 1);
  const want = [wholeIds[p], offIds[p]].map((id) => [on[(p - 1) * V + id], offLogits[(p - 1) * V + id]]);
  const close = (numbers) => numbers.length === 2
    && numbers.every((pair, i) => pair.every((x, j) => Math.abs(x - want[i][j]) <= 5e-4 + 1e-5));
  const numbersOf = (line) => [...line.matchAll(/(-?\d+\.\d{3}) → (-?\d+\.\d{3}) \([+−]\d+\.\d{3}\)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  // The section answers after the translation's pieces do (each section computes on its own): the 4 beams'
  // line can still be there a moment after the greedy pieces show, so the line is read until it is the
  // greedy run's (or 20 s have passed), then judged.
  let logitLine = '';
  for (const until = Date.now() + 20000; Date.now() < until;) {
    logitLine = await page.textContent('[data-figure="ablate-logit"]').catch(() => '') ?? '';
    if (logitLine.startsWith(`Token ${p}, where the translations part: `) && close(numbersOf(logitLine))) break;
    await page.waitForTimeout(100);
  }
  assert.ok(logitLine.startsWith(`Token ${p}, where the translations part: `), logitLine);
  const numbers = numbersOf(logitLine);
  assert.equal(numbers.length, 2, logitLine);
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) assert.ok(Math.abs(numbers[i][j] - want[i][j]) <= 5e-4 + 1e-5, `${logitLine} vs torch ${want}`);
  assert.ok(logitLine.includes(`“${visibleToken(pieceOf.get(wholeIds[p]))}”`) && logitLine.includes(`“${visibleToken(pieceOf.get(offIds[p]))}”`), logitLine);
  // Every head on again, 4 beams: the whole model's translation back.
  await page.click('#action-ablate-none');
  await setField(page, 'beams', 4);
  await generated(TARGET);
  assert.equal(await page.inputValue('#prop-ablate'), '');
  assert.deepEqual(problems, []);
});

test('word by word: "Next word" adds a row; Play adds rows one at a time and Pause stops it; the beams and their scores show', async () => {
  await page.click('#action-restart');
  await waitRows('cross-heatmap', 1);
  await page.click('#action-step');
  await waitRows('cross-heatmap', 2);
  assert.equal(await page.inputValue('#prop-shown'), '2');
  // Every figure follows "Tokens shown": the lines and the decoder's grid too.
  await page.waitForFunction(() => JSON.parse(document.querySelector('canvas[data-figure="cross-lines"]').dataset.tokenPoints).query.length === 2);
  // The beams after step 2, with their summed log-probabilities (the reference's, in any order).
  const beams = await page.textContent('[data-figure="beams"]');
  assert.match(beams, /^Beams after step 2 \(summed log-probability\): (“[^”]*” -?\d+\.\d\d( · )?){4}/);
  const scores = [...beams.matchAll(/” (-?\d+\.\d\d)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
  const want = Array.from(ref['cat.beam.step_scores'].data.subarray(4, 8)).map((x) => Number(x.toFixed(2))).sort((a, b) => a - b);
  assert.deepEqual(scores, want);

  // Play: every row count the heatmap shows (a MutationObserver sees each draw), until 5; then Pause.
  // The pace itself (a token every 600 ms, none queued while computing) is checked on a mocked clock in
  // tests/node/section_play.test.mjs: here, in rows, not milliseconds.
  await logSections(page);
  await page.click('#action-play');
  assert.equal(await page.getAttribute('#action-play', 'aria-pressed'), 'true');
  const seen = await page.evaluate(() => new Promise((resolve) => {
    const rowsNow = () => JSON.parse(document.querySelector('canvas[data-figure="cross-heatmap"]').dataset.layout).rows;
    const seen = [rowsNow()];
    const observer = new MutationObserver(() => {
      const rows = rowsNow();
      if (seen.at(-1) !== rows) seen.push(rows);
      if (rows >= 5) { observer.disconnect(); resolve(seen); }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-layout'] });
  }));
  assert.deepEqual(seen, [2, 3, 4, 5], 'one row at a time');
  await page.click('#action-play'); // Pause
  assert.equal(await page.getAttribute('#action-play', 'aria-pressed'), 'false');
  assert.equal(await page.textContent('#action-play'), '▶ Play');
  const paused = await rowsOf('cross-heatmap');
  // Pause cleared the play's timer (web/ui/panels/section_play.js stop(), which unpresses the button), so
  // only a request already in flight could still add a row: once every one is answered and drawn, none can.
  await sectionsAnswered(page);
  assert.equal(await rowsOf('cross-heatmap'), paused, 'Pause stopped it');
  assert.equal(await page.inputValue('#prop-shown'), String(paused), 'the tokens shown are the rows drawn');

  // Play to the end: it stops by itself with the whole translation shown.
  await setField(page, 'shown', T - 1);
  await waitRows('cross-heatmap', T - 1);
  await page.click('#action-play');
  await waitRows('cross-heatmap', T);
  await page.waitForFunction(() => document.getElementById('action-play').getAttribute('aria-pressed') === 'false', null, { timeout: 30000 });

  // From the whole translation, Play starts again at the first token; a new sentence stops it.
  await page.click('#action-play');
  await waitRows('cross-heatmap', 1);
  await setField(page, 'text', 'The dog sat.');
  await page.waitForFunction(() => document.getElementById('action-play').getAttribute('aria-pressed') === 'false', null, { timeout: 30000 });
  await page.waitForFunction(() => !/▁cat/.test(document.querySelector('[data-figure="pieces"]').textContent));
  // The play has stopped (the button above), so once the new sentence's requests are answered and drawn
  // nothing changes the rows: they are the tokens shown.
  await sectionsAnswered(page);
  assert.equal(await page.getAttribute('#action-play', 'aria-pressed'), 'false', 'nothing plays after a new sentence');
  assert.equal(String(await rowsOf('cross-heatmap')), await page.inputValue('#prop-shown'));
  assert.deepEqual(problems, []);
});
