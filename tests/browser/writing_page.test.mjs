// The Writing lab in the browser (issue 26): the tiny GPT-2 of tests/fixtures/make_gpt2_fixtures.py dropped
// on the page (tests/fixtures/gpt2_tiny/hub), the reference's prompt. The logit lens table's tokens are the
// reference's (prompt.lens); Play writes tokens one at a time and, greedy, writes the reference's
// continuation (greedy.ids), the attention heatmap growing a row per token; the next-token bars, read back
// from their pixels, are softmax(logits / T) of the reference's logits (greedy.logits), and move as the
// temperature slider moves; the head-role grid's pixels are the reference's scores (roles.*, 20 random
// tokens, seed 7) and a click on a cell opens that head. One page for all, for the CI budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, openPage, waitDrawn, setField, readHeatmap, readBars as readBarsOf } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const { tensors: ref, metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, 'gpt2_tiny_reference.safetensors')));
const PROMPT = metadata['prompt.text'];
const PROMPT_IDS = Array.from(ref['prompt.input_ids'].data);
const GREEDY = Array.from(ref['greedy.ids'].data); // 12 tokens
const T = PROMPT_IDS.length, V = 407, L = 2, H = 2;
const logitsRow = (r) => ref['greedy.logits'].data.subarray(r * V, (r + 1) * V);

/** softmax(z / temperature), its ten likeliest (ties to the lower id): [{id, p}]. */
function topTen(z, temperature) {
  const max = Math.max(...z);
  const e = Array.from(z, (x) => Math.exp((x - max) / temperature));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x, id) => ({ id, p: x / sum })).sort((a, b) => b.p - a.p || a.id - b.id).slice(0, 10);
}

let lab, page, problems;
before(async () => {
  lab = await startLab();
  // openPage opens the lab's tiny checkpoint (support.mjs's TINY_FILES) and waits for every section.
  ({ page, problems } = await openPage(lab, `?lab=writing&temperature=0&topK=0&maxNewTokens=12&roleTokens=20&roleSeed=7&text=${encodeURIComponent(PROMPT)}`));
  await waitDrawn(page);
});
after(async () => { await lab?.close(); });

const writtenIds = (p = page) => p.textContent('[data-figure="written-ids"]').then((t) => {
  const m = /written: ?([\d ]*)$/.exec(t.trim());
  return m[1].trim() ? m[1].trim().split(' ').map(Number) : [];
});
const rowsOf = (id) => page.$eval(`canvas[data-figure="${id}"]`, (c) => JSON.parse(c.dataset.layout).rows);

const readBars = () => readBarsOf(page, 'canvas[data-figure="next-bars"]');

function barsFailures(got, want) {
  const tolerance = (2 / got.plotH) * got.hi; // two CSS px of the plot
  return want.flatMap((w, i) => (Math.abs(got.values[i] - w.p) <= tolerance ? [] : [`bar ${i} (id ${w.id}): ${got.values[i].toFixed(4)} vs ${w.p.toFixed(4)}`]));
}

test('the prompt is tokenised as the reference; the logit lens table\'s tokens are the reference\'s (every layer, every position)', async () => {
  const ids = await page.textContent('[data-figure="written-ids"]');
  assert.match(ids, new RegExp(`^ids: ${PROMPT_IDS.join(' ')} · written:\\s*$`));
  await page.waitForSelector('[data-figure="lens-table"] td');
  const cells = await page.$$eval('[data-figure="lens-table"] tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.id))));
  assert.equal(cells.length, L + 1);
  assert.deepEqual(cells.flat(), Array.from(ref['prompt.lens'].data));
  // GPT-2 has a table of learned positions: the rotary section is not shown (tests/browser/writing_llama.test.mjs shows it).
  assert.equal(await page.$eval('#section-rotary', (s) => s.hidden && s.dataset.state), 'not-applicable');
  assert.deepEqual(problems, []);
});

test('the head-role grid\'s pixels are the reference\'s scores (induction, previous, first); a click on a cell opens that head', async () => {
  for (const role of ['induction', 'previous', 'first']) {
    if (role !== 'induction') {
      await setField(page, 'role', role);
      await page.waitForFunction((label) => document.querySelector('canvas[data-figure="roles-grid"]')?.getAttribute('aria-label').startsWith(label),
        { previous: 'previous-token', first: 'first-token' }[role]);
      await waitDrawn(page);
    }
    const got = (await readHeatmap(page, 'canvas[data-figure="roles-grid"]')).flat();
    const want = Array.from(ref[`roles.${role}`].data);
    assert.equal(got.length, L * H);
    got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.01, `${role} [${Math.floor(i / H)}, ${i % H}]: ${g.toFixed(3)} vs ${want[i].toFixed(3)}`));
  }
  const layout = JSON.parse(await page.getAttribute('canvas[data-figure="roles-grid"]', 'data-layout'));
  await page.locator('canvas[data-figure="roles-grid"]').click({ position: { x: layout.x + 1.5 * layout.cellW, y: layout.y + 1.5 * layout.cellH } });
  await page.waitForFunction(() => document.getElementById('prop-roleLayer').value === '1' && document.getElementById('prop-roleHead').value === '1');
  await page.waitForFunction(() => /^Layer 1, head 1 on the repeated sequence \(41 tokens\)/.test(document.querySelector('canvas[data-figure="roles-head"]')?.getAttribute('aria-label') ?? ''));
  assert.equal(await rowsOf('roles-head'), 41);
  assert.deepEqual(problems, []);
});

test('Play writes one token at a time, greedy: the reference\'s continuation; the attention heatmap grows a row per token', async () => {
  assert.equal(await rowsOf('attention-heatmap'), T);
  await page.click('#action-step');
  await page.waitForFunction(() => /written: \d+$/.test(document.querySelector('[data-figure="written-ids"]').textContent.trim()));
  assert.deepEqual(await writtenIds(), GREEDY.slice(0, 1));
  await page.click('#action-play');
  // What the page shows, sampled in the page every 20 ms until it stops.
  const seen = await page.evaluate(() => new Promise((resolve) => {
    const seen = [];
    const look = () => {
      const count = document.querySelector('[data-figure="written-ids"]').textContent.trim().split('written:')[1].trim().split(' ').filter(Boolean).length;
      if (seen.at(-1) !== count) seen.push(count);
      if (count >= 12 && document.getElementById('action-play').getAttribute('aria-pressed') === 'false') resolve(seen);
      else setTimeout(look, 20);
    };
    look();
  }));
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'one token at a time');
  assert.deepEqual(await writtenIds(), GREEDY);
  await waitDrawn(page);
  assert.equal(await rowsOf('attention-heatmap'), T + 12);
  assert.match(await page.textContent('[data-figure="written"]'), /\(stopped: the maximum of new tokens\)$/);
  // Greedy: all the mass on the token written, which is marked.
  const bars = await readBars();
  assert.equal(bars.highlight, 0);
  assert.ok(Math.abs(bars.values[0] - 1) < 0.02 && bars.values.slice(1).every((x) => x < 0.02), JSON.stringify(bars.values));
  assert.deepEqual(problems, []);
});

test('the bars are softmax(logits / T) of the reference\'s logits, and follow the temperature slider at once; the drawn token is marked', async () => {
  // Back to token 5's bars: the distribution it was drawn from (row T - 1 + 4 of the logits).
  await setField(page, 'shown', 5);
  await page.waitForFunction(() => /^Token 5:/.test(document.querySelector('canvas[data-figure="next-bars"]').getAttribute('aria-label')));
  for (const temperature of [1, 2, 0.5]) {
    await setField(page, 'temperature', temperature);
    await page.waitForFunction((t) => document.querySelector('[data-figure="next-top"]').textContent.includes(`(temperature ${t})`), temperature);
    await waitDrawn(page);
    const want = topTen(logitsRow(T - 1 + 4), temperature);
    const got = await readBars();
    assert.deepEqual(barsFailures(got, want), [], `temperature ${temperature}`);
    // The token written (greedy's fifth) is marked in its own colour.
    const at = want.findIndex((w) => w.id === GREEDY[4]);
    assert.equal(got.highlight, at >= 0 ? at : null);
    if (at >= 0) assert.ok(got.colours.every((c, i) => (i === at) === (c === got.colours[at])), JSON.stringify(got.colours));
  }
  // The tokens shown stayed; those written past them, with the old temperature, were forgotten.
  assert.deepEqual(await writtenIds(), GREEDY.slice(0, 5));
  assert.deepEqual(problems, []);
});

test('on a phone (390x844) the logit lens table scrolls in its own box: the page does not scroll sideways', async () => {
  const { page: phone } = await openPage(lab, `?lab=writing&text=${encodeURIComponent(PROMPT)}`, { viewport: { width: 390, height: 844 } });
  await phone.locator('[data-figure="lens-table"]').scrollIntoViewIfNeeded();
  const widths = await phone.evaluate(() => ({ page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
    box: document.querySelector('[data-figure="lens-table"] .figure-table-scroll').getBoundingClientRect().right }));
  assert.ok(widths.page <= widths.view, JSON.stringify(widths));
  assert.ok(widths.box <= widths.view, JSON.stringify(widths));
  await phone.close();
});
