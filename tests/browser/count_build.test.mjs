// The One query lab's "Check your build" section in the page (issue 28, item 2): with the notebook's
// model imported (count_model.pt), each step's tensor shows its shape and PyTorch's numbers as PyTorch
// prints them; a pasted print that matches is marked so, a wrong one says where it first differs, a
// torch.save file of one step is read and matches, and bad input is refused with the reason while the
// lab's tensors stay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, startLab } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { parsePrintedTensors } from '../../web/io/printed_tensor.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const STEPS_DIR = path.join(FIXTURES, 'build_steps');
const printed = JSON.parse(readFileSync(path.join(STEPS_DIR, 'printed.json'), 'utf8'));
const expected = parseSafetensors(readFileSync(path.join(STEPS_DIR, 'expected.safetensors'))).tensors;

let lab, page, problems;
before(async () => {
  lab = await startLab();
  ({ page, problems } = await openPage(lab, '?lab=count&checkStep=keys'));
  await page.setInputFiles('#weights-file', path.join(FIXTURES, 'count_model.pt'));
  await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
});
after(async () => { await lab?.close(); });

const figure = (id) => page.locator(`[data-figure="build-${id}"]`);
/** Waits for the section's check to say something matching `pattern`; -> its text. */
async function checked(pattern) {
  await page.waitForFunction((p) => new RegExp(p).test(document.getElementById('build-tensor-verdict')?.textContent ?? ''), pattern.source, { timeout: 20000 });
  return page.textContent('#build-tensor-verdict');
}

test('each step shows its shape and the numbers PyTorch printed for the notebook\'s model', async () => {
  await page.waitForFunction(() => document.getElementById('section-build')?.dataset.state === 'shown', null, { timeout: 30000 });
  for (const [id, shape] of [['batch', '(4, 10)'], ['embedding', '(4, 10, 5)'], ['keys', '(4, 10, 5)'], ['values', '(4, 10, 1)'], ['attention', '(4, 1, 10)'], ['weighted', '(4, 1)'], ['forward', '(4, 1)']]) {
    assert.match(await figure(id).locator('figcaption').first().textContent(), new RegExp(`shape \\${shape.replace(')', '\\)')}$`), id);
  }
  // The page's print of the embedding, read back as a student would copy it, is PyTorch's to 4 decimals.
  for (const id of ['embedding', 'keys', 'attention', 'forward']) {
    const [shown] = parsePrintedTensors(await figure(id).locator('pre').textContent());
    const want = expected[id];
    assert.deepEqual(shown.shape, want.shape, id);
    shown.data.forEach((v, i) => assert.ok(Math.abs(v - want.data[i]) <= 5.001e-5, `${id}[${i}]: ${v} vs ${want.data[i]}`));
  }
  assert.match(await page.textContent('[data-figure="build-input"]'), /x = torch\.tensor\(\[\[2, 4, 2, 1, 9, 6, 3, 0, 5, 2\], \[4, 4,/);
});

test('a matching print is marked; a wrong one says where it first differs; a .pt of one step is read', async () => {
  await page.fill('#build-tensor-text', printed.keys.replace(/\)$/, ', grad_fn=<ViewBackward0>)'));
  await page.click('#build-tensor-check');
  assert.match(await checked(/^Matches/), /all 200 numbers within 1e-4/);
  assert.equal(await figure('keys').getAttribute('data-status'), 'ok');
  // keys[0, 0, 1] printed 0.01 off, as a slip in the notebook would make it.
  const second = printed.keys.match(/-?\d+\.\d{4}/g)[1];
  const wrong = (Number(second) + 0.01).toFixed(4);
  await page.fill('#build-tensor-text', printed.keys.replace(second, wrong));
  await page.click('#build-tensor-check');
  assert.equal(await checked(/first differ/), `The shape (4, 10, 5) is right; the numbers first differ at [0, 0, 1]: yours ${wrong}, the lab's ${second}. `
    + 'Did your notebook load the same weights (your model.pt in this lab\'s Weights panel) and use this x?');
  assert.equal(await figure('keys').getAttribute('data-status'), 'bad');
  await page.selectOption('#prop-checkStep', 'attention');
  await page.setInputFiles('#build-tensor-file', path.join(STEPS_DIR, 'attention.pt'));
  assert.match(await checked(/^Matches: shape \(4, 1, 10\)/), /within 1e-5/);
  await page.selectOption('#prop-checkStep', 'batch');
  await page.fill('#build-tensor-text', 'tensor([[2, 2, 4, 0, 0, 0, 0, 0, 0, 0]]) tensor([[0.]])');
  await page.click('#build-tensor-check');
  assert.equal(await checked(/^Row 0/), 'Row 0 has 2 twos and 1 four: y[0] should be 1, yours is 0.');
});

test('bad input: an abbreviated print is refused with the way out, and the lab\'s tensors stay', async () => {
  await page.selectOption('#prop-checkStep', 'keys');
  await page.fill('#build-tensor-text', 'tensor([[0.1, ..., 0.3]])');
  await page.click('#build-tensor-check');
  await page.waitForFunction(() => document.getElementById('section-build').dataset.state === 'error');
  assert.match(await page.textContent('#section-build .section-status'), /The pasted text was not read: the print is abbreviated/);
  assert.equal(await figure('keys').isVisible(), true);
  assert.deepEqual(problems, []);
});

test('notebook 05\'s question sits with the steps, its answer closed until asked', async () => {
  assert.match(await page.textContent('#section-build #question-Embedding'), /Does the output dimension make sense\?/);
  assert.equal(await page.$eval('#question-Embedding details', (d) => d.open), false);
});

// Issue 45, item 2: the notebook's one-hot embedding (one_hot(x) through nn.Linear(10, 5)), on the page at
// both sizes. A student trains it with embedding=one-hot and imports their model (here the one-hot build's
// state_dict): PyTorch's right print of the embedding step matches (the section read the Linear's [5, 10]
// weight as a [10, 5] table and dropped its bias, so it said the numbers differed), and the paste box
// asks for the one-hot code.
for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`one-hot embedding at ${viewport.width}x${viewport.height}: PyTorch's right embedding step matches`, async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { writeSafetensors } = await import('../../web/io/safetensors.js');
    const { attentionModelOneHotBuild } = await import('../../web/labs/builds/attention_model.js');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-one-hot-')), 'model.safetensors');
    writeFileSync(file, writeSafetensors(Object.fromEntries(Object.entries(attentionModelOneHotBuild.stateDict)
      .map(([name, t]) => [name, { shape: t.shape, data: Float32Array.from(t.data) }]))));
    const { page: p, problems: seen } = await openPage(lab, '?lab=count&embedding=one-hot&checkStep=embedding', { viewport });
    await p.setInputFiles('#weights-file', file);
    await p.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
    const dir = path.join(FIXTURES, 'build_check', 'attention-model-one-hot');
    await p.waitForFunction(() => /model\.embed\(F\.one_hot\(x, 10\)\.float\(\)\)/.test(document.getElementById('section-build')?.textContent ?? ''), null, { timeout: 20000 });
    await p.fill('#build-tensor-text', readFileSync(path.join(dir, 'right_printed', 'embedding.txt'), 'utf8'));
    await p.click('#build-tensor-check');
    await p.waitForFunction(() => /^(Matches|The shape)/.test(document.getElementById('build-tensor-verdict')?.textContent ?? ''), null, { timeout: 20000 });
    assert.match(await p.textContent('#build-tensor-verdict'), /^Matches: shape \(4, 10, 5\), all 200 numbers within 1e-4/);
    assert.equal(await p.locator('[data-figure="build-embedding"]').getAttribute('data-status'), 'ok');
    // The step figures name the one-hot code too (drawn on the page from the worker's result).
    assert.match(await p.locator('[data-figure="build-keys"] figcaption').first().textContent(),
      /^3\. Keys: model\.WK\(model\.embed\(F\.one_hot\(x, 10\)\.float\(\)\)\)/);
    assert.deepEqual(seen, []);
    await p.close();
  });
}
