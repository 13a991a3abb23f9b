// The Weights panel never stays at "Reading…" (issue 16 §4): a file over the panel's limit is refused
// by its size before a byte is read, saying the limit; a file whose metadata asks for heads that do
// not divide the width gets a message; the model on screen is kept either way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage, startLab } from './support.mjs';
import { parseSafetensors, writeSafetensors } from '../../web/io/safetensors.js';

const MODEL = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'notebook_copy_model.safetensors');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

// Drops a File built in the page (the same path as the picker: WeightsPanel.read).
async function drop(page, { name, size, bytes }) {
  await page.evaluate(({ name, size, bytes }) => {
    const data = bytes ? new Uint8Array(bytes) : new Uint8Array(size); // zeros: sparse enough for a size test
    const transfer = new DataTransfer();
    transfer.items.add(new File([data], name));
    document.querySelector('.panel.weights').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, { name, size, bytes });
}

test('a 65 MB file is refused by its size, with the limit, before it is read; the model stays', async () => {
  const { page, problems } = await openPage(lab, '?task=reverse&seed=2');
  const before = await page.getAttribute('#heatmap-main', 'data-title');
  await drop(page, { name: 'huge.safetensors', size: 65 * 1024 * 1024 });
  await page.waitForFunction(() => /huge\.safetensors is 65 MB/.test(document.getElementById('weights-message').textContent), null, { timeout: 30000 });
  const message = await page.textContent('#weights-message');
  assert.match(message, /^huge\.safetensors is 65 MB: a weights file for this lab is at most 64 MB\. Nothing was loaded; the current model is kept\.$/);
  assert.equal(await page.inputValue('#prop-task'), 'reverse');
  assert.equal(await page.getAttribute('#heatmap-main', 'data-title'), before);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a file whose metadata says heads=5 for width 32 ends in a message, not a spinner; the model stays', async () => {
  const { page, problems } = await openPage(lab, '?task=copy&seed=2&heads=2');
  const { tensors, metadata } = parseSafetensors(readFileSync(MODEL));
  const bytes = writeSafetensors(tensors, { ...metadata, heads: '5' });
  await drop(page, { name: 'five-heads.safetensors', bytes: Array.from(bytes) });
  await page.waitForFunction(() => /five-heads\.safetensors was not loaded/.test(document.getElementById('weights-message').textContent), null, { timeout: 30000 });
  assert.doesNotMatch(await page.textContent('#weights-message'), /Reading/);
  assert.match(await page.textContent('#weights-message'), /five-heads\.safetensors was not loaded: heads must divide d_model \(32 is not divisible by 5\); the current model is kept\./);
  assert.equal(await page.inputValue('#prop-heads'), '2');
  assert.deepEqual(problems, []);
  await page.close();
});
