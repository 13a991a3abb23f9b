// The One query lab's sizes (issue 45, item 2: notebook 05's embed_dim, att_dim and hidden 200 as
// settings), in the page: the link sets them and the lab trains at them; the "Check your build" section
// shows its steps in the model's shapes; a model file of other sizes, imported, brings its sizes with it;
// a size too large for the batch is refused in words, and the run is kept. Notebook 05's pipeline is drawn
// beside the build, in the model's shapes, with the step being checked outlined and a checked step marked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canvasPixels, openPage, setField, startLab, waitConfigured } from './support.mjs';
import { parseSafetensors, writeSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('?embedDim=8&attDim=3&hidden=18: the settings show them, the lab trains, the build\'s keys are (4, 10, 3)', async () => {
  const { page, problems } = await openPage(lab, '?lab=count&embedDim=8&attDim=3&hidden=18&checkStep=keys');
  await waitConfigured(page);
  assert.deepEqual(await Promise.all(['embedDim', 'attDim', 'hidden'].map((n) => page.inputValue(`#prop-${n}`))), ['8', '3', '18']);
  await page.waitForFunction(() => document.getElementById('section-build')?.dataset.state === 'shown', null, { timeout: 30000 });
  const caption = (id) => page.locator(`[data-figure="build-${id}"] figcaption`).first().textContent();
  assert.match(await caption('embedding'), /shape \(4, 10, 8\)$/);
  assert.match(await caption('keys'), /shape \(4, 10, 3\)$/);
  // The pipeline: every step in its place, in the model's shapes; the step being checked outlined.
  const pipeline = page.locator('canvas[data-figure="build-pipeline"]');
  const label = await pipeline.getAttribute('aria-label');
  assert.match(label, /^Notebook 05's AttentionModel, step by step: 1\. make_batch, shape \(4, 10\)/);
  assert.match(label, /3\. keys, shape \(4, 10, 3\): model\.WK\(model\.embed\(x\)\) \(from 2\. embedding\)/);
  assert.match(label, /5\. attention, shape \(4, 1, 10\): .* \(from query and 3\. keys\)/);
  assert.match(label, /query, shape \(1, 3\)/);
  assert.match(label, /Being checked: 3\. keys\.$/);
  const boxes = JSON.parse(await pipeline.getAttribute('data-boxes'));
  assert.ok(boxes.batch[1] < boxes.embedding[1] && boxes.embedding[1] < boxes.keys[1] && boxes.keys[1] < boxes.attention[1]
    && boxes.attention[1] < boxes.weighted[1] && boxes.weighted[1] < boxes.forward[1], JSON.stringify(boxes)); // in the order they run
  assert.equal(boxes.query[1], boxes.keys[1]);
  // The outline: the keys box's left edge is drawn thicker, in another colour than the values box's.
  const px = await canvasPixels(page, 'canvas[data-figure="build-pipeline"]');
  const scale = px.width / Number((await pipeline.evaluate((c) => c.style.width)).replace('px', ''));
  const at = ([x, y, , h]) => {
    const i = (Math.round((y + h / 2) * scale) * px.width + Math.round(x * scale)) * 4;
    return [...px.data.subarray(i, i + 3)];
  };
  assert.notDeepEqual(at(boxes.keys), at(boxes.values));
  // A checked step is marked in words, not by colour alone (its table says the same).
  await page.fill('#build-tensor-text', 'tensor([[1., 2.]])');
  await page.click('#build-tensor-check');
  await page.waitForFunction(() => /✗ 3\. keys/.test(document.querySelector('canvas[data-figure="build-pipeline"]')
    .getAttribute('aria-label')), null, { timeout: 10000 });
  await page.click('#play');
  await page.waitForFunction(() => Number(document.getElementById('progress-text').dataset.step) >= 200, null, { timeout: 30000 });
  await page.click('#play');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a model file of other sizes, imported, brings them; a size too large for the batch is refused and the run kept', async () => {
  const { page, problems } = await openPage(lab, '?lab=count');
  await waitConfigured(page);
  // The PyTorch fixture's model (embed_dim 8, att_dim 3, 18 hidden units), as a state_dict file.
  const f = parseSafetensors(readFileSync(path.join(FIXTURES, 'count_sizes_model.safetensors'))).tensors;
  const init = Object.fromEntries(Object.entries(f).filter(([k]) => k.startsWith('init/')).map(([k, t]) => [k.slice(5), t]));
  await page.setInputFiles('#weights-file', { name: 'resized.safetensors', mimeType: 'application/octet-stream',
    buffer: Buffer.from(writeSafetensors(init)) });
  await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
  assert.deepEqual(await Promise.all(['embedDim', 'attDim', 'hidden'].map((n) => page.inputValue(`#prop-${n}`))), ['8', '3', '18']);
  // Each in range, together too large: said at the field, nothing applied.
  await setField(page, 'batch', 10000);
  await setField(page, 'attDim', 64);
  await page.waitForFunction(() => /these settings need about \d+ MB to train; the lab allows 64 MB/.test(document.body.textContent), null, { timeout: 10000 });
  assert.deepEqual(problems, []);
  await page.close();
});
