// The Writing lab with the Llama and Qwen 2 decoders (issue 37, item 5 and its page proof), one page for
// both (the CI budget): the tiny llama of tests/fixtures/make_llama_fixtures.py (4 query heads over 2
// key/value heads, BF16, TinyLlama's chat template) chosen as a user picks a folder's files, then the tiny
// qwen2 (3 over 1, a vocabulary padded past the tokenizer's) dropped on the same page. Against the
// fixture's PyTorch reference: the prompt's ids, the next-token bars read from their pixels
// (softmax of prompt.logits, padded ids left out), the logit lens table (prompt.lens_tokenizer), the
// head-role grids' pixels (roles.*, 20 random tokens, seed 7), one head's attention heatmap
// (prompt.attentions: query head 3 reads key/value head 1), the chat's prompt ids and greedy answer
// (chat.*), greedy writing (greedy.ids). The head grid brackets the heads that share a key/value head;
// the rotary section turns one pair and its score follows the distance m - n alone. Then a phone
// (390x844): nothing runs past the screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, openPage, waitConfigured, waitDrawn, setField, readHeatmap, readBars, dropFiles, writtenIds, screenshotIfAsked } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const TOKENIZER_SIZE = 407; // the fixtures' vocab.json: Qwen2's ids past it are padding, never shown
const KINDS = {
  llama: { files: ['config.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json', 'model.safetensors'], L: 2, H: 4, Hkv: 2, D: 12, theta: 10000,
    groups: [{ kv: 0, heads: [0, 1] }, { kv: 1, heads: [2, 3] }] },
  qwen2: { files: ['config.json', 'vocab.json', 'merges.txt', 'pytorch_model.bin'], L: 2, H: 3, Hkv: 1, D: 8, theta: 1000000,
    groups: [{ kv: 0, heads: [0, 1, 2] }] },
};
for (const [kind, k] of Object.entries(KINDS)) {
  const { tensors, metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, `${kind}_tiny_reference.safetensors`)));
  Object.assign(k, { ref: tensors, metadata, files: k.files.map((f) => path.join(FIXTURES, `${kind}_tiny`, f)),
    V: JSON.parse(readFileSync(path.join(FIXTURES, `${kind}_tiny`, 'config.json'), 'utf8')).vocab_size });
}
const PROMPT = KINDS.llama.metadata['prompt.text'];
const ints = (t) => Array.from(t.data);

/** softmax(z) over the tokenizer's ids, its ten likeliest (ties to the lower id): [{id, p}]. */
function topTen(z) {
  const row = Array.from(z).slice(0, TOKENIZER_SIZE);
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x, id) => ({ id, p: x / sum })).sort((a, b) => b.p - a.p || a.id - b.id).slice(0, 10);
}
const lastRow = (t, rows) => t.data.subarray((rows - 1) * (t.data.length / rows), t.data.length);

let lab, page, problems;
before(async () => {
  lab = await startLab();
  ({ page, problems } = await openPage(lab, `?lab=writing&temperature=1&topK=0&maxNewTokens=6&roleTokens=20&roleSeed=7&text=${encodeURIComponent(PROMPT)}`,
    { viewport: { width: 1280, height: 800 }, files: KINDS.llama.files }));
  await waitDrawn(page);
});
after(async () => { await lab?.close(); });

const idsOf = () => writtenIds(page);

/** The next-token bars against the ten likeliest of `logits`: each within two CSS px of its height. */
async function checkBars(logits, what) {
  const want = topTen(logits);
  const got = await readBars(page, 'canvas[data-figure="next-bars"]');
  const tolerance = (2 / got.plotH) * got.hi;
  const failures = want.flatMap((w, i) => (Math.abs(got.values[i] - w.p) <= tolerance ? [] : [`bar ${i} (id ${w.id}): ${got.values[i].toFixed(4)} vs ${w.p.toFixed(4)}`]));
  assert.deepEqual(failures, [], what);
  // The labels' order is the reference's: the text under the bars names the same ten.
  return want;
}

/** Everything the two kinds share: ids, bars, lens, the head grid's sharing, one head's heatmap, roles, rotary. */
async function checkModel(kind) {
  const k = KINDS[kind];
  const T = k.ref['prompt.input_ids'].data.length;
  assert.deepEqual((await idsOf()).prompt, ints(k.ref['prompt.input_ids']), `${kind}: the prompt's ids`);
  await checkBars(lastRow(k.ref['prompt.logits'], T), `${kind}: the first token's bars at temperature 1`);

  // The logit lens: every layer's top token at every position (the tokenizer's ids only).
  await page.waitForSelector('[data-figure="lens-table"] td');
  const cells = await page.$$eval('[data-figure="lens-table"] tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.id))));
  assert.deepEqual(cells.flat(), ints(k.ref['prompt.lens_tokenizer']), `${kind}: the logit lens`);

  // Grouped-query attention in the head grid: each group bracketed over its heads, inside the figure.
  const grid = await page.$eval('canvas[data-figure="attention-grid"]', (c) => ({ groups: JSON.parse(c.dataset.kvGroups ?? '[]'), cells: JSON.parse(c.dataset.cells),
    width: c.getBoundingClientRect().width, label: c.getAttribute('aria-label') }));
  assert.deepEqual(grid.groups.map((g) => ({ kv: g.kv, heads: g.heads })), k.groups, `${kind}: which query heads share a key/value head`);
  for (const g of grid.groups) {
    const first = grid.cells[g.heads[0]], last = grid.cells[g.heads.at(-1)];
    assert.ok(g.x <= first.x && g.x + g.w >= last.x + last.w && g.x + g.w <= grid.width, `${kind}: K/V ${g.kv}'s bracket spans its heads: ${JSON.stringify({ g, first, last })}`);
  }
  assert.match(grid.label, new RegExp(`heads ${k.groups[0].heads.join(', ')} read K/V 0`));
  assert.match(await page.textContent('[data-figure="attention-kv"]'), new RegExp(`^Grouped-query attention: this model has ${k.H} query heads but only ${k.Hkv} key/value head`));

  // The last head of the last layer (it reads the last key/value head): its heatmap is PyTorch's.
  await setField(page, 'layer', k.L - 1);
  await setField(page, 'head', k.H - 1);
  await page.waitForFunction((t) => document.querySelector('canvas[data-figure="attention-heatmap"]')?.getAttribute('aria-label')?.includes(t), `layer ${k.L - 1}, head ${k.H - 1}`);
  await waitDrawn(page);
  const heat = (await readHeatmap(page, 'canvas[data-figure="attention-heatmap"]')).flat();
  const a = k.ref['prompt.attentions'].data, base = ((k.L - 1) * k.H + k.H - 1) * T * T;
  const max = Math.max(...a.subarray(base, base + T * T));
  heat.forEach((x, i) => assert.ok(Math.abs(x - a[base + i]) <= 0.01 * max + 1e-6, `${kind} attention [${k.L - 1}, ${k.H - 1}] cell ${i}: ${x} vs ${a[base + i]}`));

  // Head roles: the grid's pixels are the reference's scores, for each of the three.
  for (const role of ['previous', 'first', 'induction']) {
    await setField(page, 'role', role);
    await page.waitForFunction((label) => document.querySelector('canvas[data-figure="roles-grid"]')?.getAttribute('aria-label').startsWith(label),
      { previous: 'previous-token', first: 'first-token', induction: 'induction' }[role]);
    await waitDrawn(page);
    const got = (await readHeatmap(page, 'canvas[data-figure="roles-grid"]')).flat();
    const want = Array.from(k.ref[`roles.${role}`].data);
    assert.equal(got.length, k.L * k.H);
    got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.01, `${kind} ${role} [${Math.floor(i / k.H)}, ${i % k.H}]: ${g.toFixed(3)} vs ${want[i].toFixed(3)}`));
  }

  // Rotary positions: shown, with this model's theta and head size.
  assert.equal(await page.isVisible('#section-rotary'), true, `${kind}: the rotary section is shown`);
  assert.match(await page.textContent('[data-figure="rotary-model"]'), new RegExp(`^This model: rope_theta θ = ${k.theta}, ${k.D} dimensions a head, so ${k.D / 2} pairs`));
}

/** The rotary figure's score now, and the two "further on" scores, read from its text. */
async function rotaryScores() {
  const text = await page.textContent('[data-figure="rotary-score"]');
  const share = Number(/share of the score: (-?\d+\.\d+)/.exec(text)[1]);
  const further = [...text.matchAll(/m = \d+, n = \d+: (-?\d+\.\d+)/g)].map((m) => Number(m[1]));
  return { share, further, text };
}

test('llama: the prompt\'s bars, lens, roles and head heatmap are PyTorch\'s; the head grid brackets the heads sharing each key/value head', async () => {
  await checkModel('llama');
  assert.deepEqual(problems, []);
});

test('llama: the rotary pair turns by its position, and its score follows the distance m - n alone', async () => {
  const { D, theta } = KINDS.llama;
  await setField(page, 'ropePair', 1);
  await page.waitForFunction(() => document.querySelector('canvas[data-figure="rotary-pair"]')?.getAttribute('aria-label').startsWith('Pair 1 (dimensions 1 and 7)'));
  const before = await rotaryScores();
  assert.ok(before.further.length === 2 && before.further.every((s) => s === before.share), before.text);
  // The arrows as drawn: the query's tip is (start + (m - n) omega) from the key's, around the plane's centre.
  // omega: PyTorch's inv_freq after the config's rope_scaling (llama3, factor 8), which slows pair 1.
  const omega = KINDS.llama.ref['rotary.inv_freq'].data[1];
  const slowed = theta ** (-2 / D) / omega;
  assert.ok(slowed > 1.5, `the fixture's scaling slows pair 1 (${slowed})`);
  assert.match(await page.textContent('[data-figure="rotary-model"]'),
    new RegExp(`rope_scaling slows pairs 1 to ${D / 2 - 1} \\(up to 8\\.00 times\\).*: pair 1 turns ${slowed.toFixed(2)} times slower than θ\\^\\(−2i/D\\), and ω above is after it\\.`));
  const { tips, origin } = await page.$eval('canvas[data-figure="rotary-pair"]', (c) => ({ tips: JSON.parse(c.dataset.tips), origin: JSON.parse(c.dataset.origin) }));
  const angle = (t) => Math.atan2(-(t.y - origin.y), t.x - origin.x); // y grows downwards on the screen
  const at = (label) => tips.find((t) => t.label.startsWith(label));
  const drawn = ((angle(at('q at')) - angle(at('k at'))) * 180 / Math.PI + 540) % 360 - 180;
  const want = ((-40 + 3 * omega * 180 / Math.PI) + 540) % 360 - 180; // the example pair starts 40 degrees before the key; distance 3
  assert.ok(Math.abs(drawn - want) < 1, `the drawn angle ${drawn.toFixed(2)} vs ${want.toFixed(2)}`);
  // Another key position, the same distance: the same score (both arrows turned further).
  await setField(page, 'ropeKey', 30);
  await page.waitForFunction(() => /n = 30/.test(document.querySelector('canvas[data-figure="rotary-pair"]')?.getAttribute('aria-label')));
  const moved = await rotaryScores();
  assert.equal(moved.share, before.share, 'moving n keeps the score');
  // Another distance: another score.
  await setField(page, 'ropeDistance', 9);
  await page.waitForFunction(() => /m = 39, n = 30/.test(document.querySelector('canvas[data-figure="rotary-pair"]')?.getAttribute('aria-label')));
  const further = await rotaryScores();
  const expected = Math.cos((40 * Math.PI) / 180 - 9 * omega) * 0.8; // |q| |k| cos(angle between): 1 x 0.8
  assert.ok(Math.abs(further.share - expected) < 1e-4, `distance 9: ${further.share} vs ${expected}`);
  assert.deepEqual(problems, []);
});

test('llama: a question in the Chat box is written into TinyLlama\'s template; the page answers as PyTorch, greedy', async () => {
  const { ref, metadata } = KINDS.llama;
  const C = ref['chat.input_ids'].data.length;
  await setField(page, 'chat', metadata['chat.question']);
  await page.waitForFunction((n) => document.querySelector('[data-figure="written-ids"]')?.textContent.split('·')[0].trim().split(' ').length - 1 === n, C, { timeout: 20000 });
  await waitDrawn(page);
  assert.deepEqual((await idsOf()).prompt, ints(ref['chat.input_ids']));
  // The template's own tokens begin the prompt: <|user|> (as pieces of this small vocabulary), and <|endoftext|> ends the turn.
  assert.match(await page.textContent('[data-figure="written-tokens"]'), new RegExp(`^Prompt \\(${C} tokens\\): < \\| \\|`));
  assert.match(await page.textContent('[data-figure="written-tokens"]'), /<\|endoftext\|>/);
  await checkBars(lastRow(ref['chat.logits'], C), 'the answer\'s first token, temperature 1');
  await setField(page, 'temperature', 0);
  await setField(page, 'shown', 6);
  const answer = ints(ref['chat.greedy_ids']);
  await page.waitForFunction((n) => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().split(' ').filter(Boolean).length === n, answer.length, { timeout: 20000 });
  assert.deepEqual((await idsOf()).written, answer);
  await setField(page, 'chat', '');
  assert.deepEqual(problems, []);
});

test('qwen2, dropped on the same page: bars (padded ids left out), lens, roles, heatmap and one K/V head shared by three; greedy writing is PyTorch\'s', async () => {
  await setField(page, 'temperature', 1);
  await setField(page, 'shown', 0);
  await dropFiles(page, KINDS.qwen2.files);
  await page.waitForFunction(() => /3 query heads over 1 key\/value heads/.test(document.getElementById('open-status')?.textContent ?? '')
    || /3 query heads over 1 key\/value heads/.test(document.getElementById('panel-open')?.textContent ?? ''), null, { timeout: 30000 });
  await waitConfigured(page);
  await page.waitForFunction(() => /^Grouped-query attention: this model has 3 query heads/.test(document.querySelector('[data-figure="attention-kv"]')?.textContent ?? ''));
  await waitDrawn(page);
  await setField(page, 'ropePair', 0);
  await checkModel('qwen2');
  await setField(page, 'temperature', 0);
  await setField(page, 'shown', 6);
  await page.waitForFunction(() => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().split(' ').filter(Boolean).length === 6, null, { timeout: 20000 });
  assert.deepEqual((await idsOf()).written, ints(KINDS.qwen2.ref['greedy.ids']).slice(0, 6));
  assert.deepEqual(problems, []);
});

test('on a phone (390x844) the rotary and attention figures and the Hub suggestions fit the screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await waitDrawn(page);
  const outside = await page.evaluate(() => {
    const view = document.documentElement.clientWidth;
    const out = [];
    if (document.documentElement.scrollWidth > view) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${view}`);
    for (const node of document.querySelectorAll('#section-rotary canvas, #section-attention canvas[data-figure="attention-grid"], #section-rotary .figure-text, #hub-suggestions')) {
      const r = node.getBoundingClientRect();
      if (r.width <= 0 || r.left < 0 || r.right > view + 0.5) out.push(`${node.dataset.figure ?? node.id}: ${r.left.toFixed(1)}..${r.right.toFixed(1)} of ${view}`);
    }
    return out;
  });
  assert.deepEqual(outside, []);
  // The Hub suggestions name each model's download.
  assert.match(await page.textContent('#hub-suggestions'), /HuggingFaceTB\/SmolLM2-135M-Instruct \(257\u00a0MB\), Qwen\/Qwen2\.5-0\.5B-Instruct \(942\u00a0MB\), TinyLlama\/TinyLlama-1\.1B-Chat-v1\.0 \(2\.05\u00a0GB\)/);
  for (const id of ['rotary', 'attention']) {
    await page.locator(`#section-${id}`).scrollIntoViewIfNeeded();
    await screenshotIfAsked(page, `writing_llama_${id}_phone.png`);
  }
  assert.deepEqual(problems, []);
});
