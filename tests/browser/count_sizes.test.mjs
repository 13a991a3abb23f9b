// The One query lab's sizes (issue 45, item 2: notebook 05's embed_dim, att_dim and hidden 200 as
// settings), in the page: the link sets them and the lab trains at them; the "Check your build" section
// shows its steps in the model's shapes; a model file of other sizes, imported, brings its sizes with it;
// a size too large for the batch is refused in words, and the run is kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, setField, startLab, waitConfigured } from './support.mjs';
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
