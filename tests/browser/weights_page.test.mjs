// Weights on the page: the notebook's copy model, imported through the file input, shows PyTorch's
// attention; export -> import gives the same attention; a file that does not fit is refused with
// every problem listed, and the model on screen stays.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage, readHeatmap, startLab, trainToEnd } from './support.mjs';
import { parseSafetensors, writeSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const MODEL = path.join(FIXTURES, 'notebook_copy_model.safetensors');
const expected = parseSafetensors(readFileSync(path.join(FIXTURES, 'notebook_copy_expected.safetensors'))).tensors;

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const loaded = (page) => page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });

test("import: the notebook's copy model shows PyTorch's attention on its sample (pixels, 0.02 per cell)", async () => {
  const { page, problems } = await openPage(lab, '?heads=2&seed=3');
  await page.setInputFiles('#weights-file', MODEL);
  await loaded(page);
  assert.equal(await page.inputValue('#prop-heads'), '4', 'the controls follow the file: 4 heads');
  await page.fill('#inspect-tokens', Array.from(expected.tokens.data).join(', '));
  await page.click('#inspect-submit');
  await page.waitForFunction(() => !document.getElementById('heatmap-inspect').parentElement.hidden);
  const shown = await readHeatmap(page, '#heatmap-inspect');
  const T = 16, S = 16;
  let worst = 0;
  for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) worst = Math.max(worst, Math.abs(shown[t][s] - expected.weights_mean.data[t * S + s]));
  assert.ok(worst <= 0.02, `largest difference from PyTorch ${worst.toFixed(4)}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("import: the same model as the notebook saves it (torch.save, .pt) shows the same attention", async () => {
  const { page, problems } = await openPage(lab, '?seed=3');
  await page.setInputFiles('#weights-file', path.join(FIXTURES, 'notebook_copy_model.pt'));
  await loaded(page);
  assert.match(await page.textContent('#weights-message'), /notebook_copy_model\.pt/);
  await page.fill('#inspect-tokens', Array.from(expected.tokens.data).join(', '));
  await page.click('#inspect-submit');
  await page.waitForFunction(() => !document.getElementById('heatmap-inspect').parentElement.hidden);
  const shown = await readHeatmap(page, '#heatmap-inspect');
  let worst = 0;
  for (let t = 0; t < 16; t++) for (let s = 0; s < 16; s++) worst = Math.max(worst, Math.abs(shown[t][s] - expected.weights_mean.data[t * 16 + s]));
  assert.ok(worst <= 0.02, `largest difference from PyTorch ${worst.toFixed(4)}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('export -> import in a fresh page gives identical attention; file name and metadata', async () => {
  const { page, problems } = await openPage(lab, '?task=reverse&steps=15&seed=4&speed=max');
  await trainToEnd(page);
  const before = await readHeatmap(page, '#heatmap-main');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#weights-export')]);
  assert.equal(download.suggestedFilename(), 'alignment-reverse-step15.safetensors');
  const file = await download.path();
  const { metadata, tensors } = parseSafetensors(readFileSync(file));
  assert.deepEqual([metadata.task, metadata.heads, metadata.steps, metadata.seed, metadata.format], ['reverse', '4', '15', '4', 'pt']);
  assert.deepEqual(tensors['in_pos_emb.weight'].shape, [16, 32]);

  const other = await openPage(lab, '?task=copy&seed=9');
  await other.page.setInputFiles('#weights-file', file);
  await loaded(other.page);
  await other.page.waitForFunction(() => /step 0$/.test(document.getElementById('heatmap-main').dataset.title));
  // The fresh page's own model is also at step 0, and the page draws the imported one at its next
  // animation frame (later on a busy machine): read until that frame has come, for up to 10 s.
  let shown = await readHeatmap(other.page, '#heatmap-main');
  for (const t0 = Date.now(); !isDeepStrictEqual(shown, before) && Date.now() - t0 < 10_000;) {
    await other.page.waitForTimeout(100);
    shown = await readHeatmap(other.page, '#heatmap-main');
  }
  assert.deepEqual(shown, before, 'same attention after the round trip');
  assert.equal(await other.page.inputValue('#prop-task'), 'reverse');
  assert.equal(await other.page.inputValue('#prop-seed'), '4');
  assert.deepEqual([...problems, ...other.problems], []);
  await other.page.close();
  await page.close();
});

test('a file that does not fit lists every problem under the Import button, and the model stays', async () => {
  const { page, problems } = await openPage(lab);
  const before = await readHeatmap(page, '#heatmap-main');
  const { tensors, metadata } = parseSafetensors(readFileSync(MODEL));
  delete tensors['out.bias'];
  tensors['attn.bias_k'] = { shape: [1, 1, 32], data: new Float32Array(32) };
  tensors['out.weight'] = { shape: [32, 16], data: new Float32Array(512) };
  const bytes = Buffer.from(writeSafetensors(tensors, metadata));
  await page.setInputFiles('#weights-file', { name: 'broken.safetensors', mimeType: 'application/octet-stream', buffer: bytes });
  // Said where the student asked (issue 38), not in a notice at the top of the page.
  await page.waitForFunction(() => /was not loaded/.test(document.getElementById('weights-message').textContent));
  const text = await page.textContent('#weights-message');
  assert.match(text, /broken\.safetensors was not loaded; the current model is kept/);
  assert.match(text, /the weights do not fit this model:/);
  assert.match(text, /- missing keys: out\.bias/);
  assert.match(text, /- unexpected keys: attn\.bias_k/);
  assert.match(text, /- out\.weight: the model needs shape \[32, 32\], the file has \[32, 16\]/);
  assert.match(await page.getAttribute('#weights-message', 'class'), /\berror\b/);
  assert.equal(await page.getAttribute('#weights-message', 'role'), 'status');
  assert.equal(await page.locator('.notice[data-key="weights"]').count(), 0);
  assert.deepEqual(await readHeatmap(page, '#heatmap-main'), before, 'the model on screen is unchanged');
  // Dropped on the panel instead of picked: the same path (here a file that is not safetensors at all).
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.items.add(new File(['hello'], 'notes.txt', { type: 'text/plain' }));
    document.querySelector('.weights').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => /notes\.txt was not loaded.*not a safetensors file/s.test(document.getElementById('weights-message').textContent));
  // Not a safetensors file, through the picker.
  await page.setInputFiles('#weights-file', { name: 'notes2.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
  await page.waitForFunction(() => /notes2\.txt was not loaded.*not a safetensors file/s.test(document.getElementById('weights-message').textContent));
  assert.deepEqual(problems, []);
  await page.close();
});
