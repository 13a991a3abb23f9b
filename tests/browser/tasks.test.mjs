// Reverse and pointer train on the page: reverse draws an anti-diagonal; pointer shows the Bayes
// ceiling, its explanation, and a peak on the key that matches the query. Short runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { brightestAt, metric, openPage, readHeatmap, startLab, trainToEnd } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('reverse[L=16,steps=100] trains to an anti-diagonal head mean', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&task=reverse&steps=100&speed=max');
  assert.match(await page.textContent('#intro'), /anti-diagonal/);
  await trainToEnd(page);
  assert.ok((await metric(page, 'accuracy')) >= 0.95);
  const matrix = await readHeatmap(page, '#heatmap-main');
  const anti = brightestAt(matrix, (r) => matrix.length - 1 - r);
  assert.ok(anti.ok, `not anti-diagonal:\n${anti.failures.join('\n')}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('pointer[M=12,K=12,duplicate keys,steps=100] shows the Bayes ceiling and a peak on the matching key', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&task=pointer&steps=100&speed=max');
  await trainToEnd(page);
  const ceiling = await metric(page, 'bayes-ceiling');
  const accuracy = await metric(page, 'accuracy');
  assert.ok(ceiling > 0.5 && ceiling < 1, `duplicate keys leave a ceiling below 1, got ${ceiling}`);
  assert.ok(accuracy <= ceiling + 0.02, `accuracy ${accuracy} cannot beat the ceiling ${ceiling} by more than noise`);
  const text = await page.textContent('#evaluation');
  assert.match(text, /Bayes ceiling/);
  assert.match(text, /split its weight between the matching keys/);
  assert.match(text, /Best head \d puts 0\.\d\d of its weight on keys that match the query/);
  // The peak: the brightest key column holds the query's key.
  const [row] = await readHeatmap(page, '#heatmap-main');
  const keys = await page.$$eval('#results tr[data-row="keys"] td', (tds) => tds.map((td) => td.textContent));
  const query = await page.textContent('#results tr[data-row="query"] td');
  assert.equal(keys[row.indexOf(Math.max(...row))], query, `peak at ${row.indexOf(Math.max(...row))}: ${row.map((v) => v.toFixed(2))}`);
  assert.deepEqual(problems, []);
  await page.close();
});
