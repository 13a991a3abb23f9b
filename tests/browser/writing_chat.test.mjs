// Chat on the Writing lab's page (issue 37, item 4): the tiny GPT-2 with SmolLM2's chat template
// (tests/fixtures/gpt2_tiny/chat, make_tokenizer_fixtures.py) dropped on the page as a user picks its
// files; a question typed in the Chat box. The prompt's ids are the Python reference's for the template's
// text (chat_cases.json's checkpoint), the template's own tokens (<|im_start|>) are in the token list and
// the attention heatmap's labels, the link carries the question (chat=...), and greedy writing writes
// what `attnlab generate --chat` writes (the same writer). The page imports @huggingface/tokenizers and
// @huggingface/jinja from public/build/node_modules (no request leaves the local server).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, openCheckpointIfAsked, waitConfigured, waitDrawn, setField, screenshotIfAsked, writtenIds } from './support.mjs';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const REPO = path.join(FIXTURES, '..', '..');
const CHAT = JSON.parse(readFileSync(path.join(FIXTURES, 'chat_cases.json'), 'utf8')).checkpoint;
const FOLDER = path.join(FIXTURES, CHAT.folder);
const FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'].map((f) => path.join(FOLDER, f));

let lab, page;
const problems = [];
before(async () => {
  lab = await startLab();
  page = await lab.context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  page.on('request', (r) => { if (!r.url().startsWith(lab.url) && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) problems.push(`left the server: ${r.url()}`); });
  await page.goto(`${lab.url}?lab=writing&temperature=0&maxNewTokens=3`);
  await openCheckpointIfAsked(page, FILES);
  await waitConfigured(page);
  await waitDrawn(page);
});
after(async () => { await lab?.close(); });

const idsOf = () => writtenIds(page);

test('a question in the Chat box is written into the model\'s chat template: the reference\'s ids, <|im_start|> in the token list and the heatmap', async () => {
  await setField(page, 'chat', CHAT.question);
  await page.waitForFunction((n) => /^ids: /.test(document.querySelector('[data-figure="written-ids"]')?.textContent ?? '')
    && document.querySelector('[data-figure="written-ids"]').textContent.split('·')[0].trim().split(' ').length - 1 === n, CHAT.ids.length, { timeout: 20000 });
  await waitDrawn(page);
  const { prompt } = await idsOf();
  assert.deepEqual(prompt, CHAT.ids);
  assert.match(await page.textContent('[data-figure="written-tokens"]'), /^Prompt \(110 tokens\): <\|im_start\|> \| s \| y \| s/);
  assert.match(page.url(), /[?&]chat=What(%20|\+)is(%20|\+)the(%20|\+)capital/, 'the link carries the question');
  // The attention heatmap's labels are the prompt's tokens, the template's first.
  const boxes = JSON.parse(await page.getAttribute('canvas[data-figure="attention-heatmap"]', 'data-label-boxes'));
  const ticks = boxes.filter((b) => b.axis === 'x').map((b) => b.text);
  assert.ok(ticks[0].startsWith('<|im_start|>'), `the heatmap's first column is the template's token, got ${JSON.stringify(ticks.slice(0, 3))}`);
  assert.equal(JSON.parse(await page.getAttribute('canvas[data-figure="attention-heatmap"]', 'data-layout')).rows, CHAT.ids.length, 'a row per prompt token');
  assert.deepEqual(problems, []);
});

test('greedy answers on the page are attnlab generate --chat\'s', async () => {
  for (let k = 0; k < 3; k++) {
    await page.click('#action-step');
    await page.waitForFunction((n) => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().split(' ').filter(Boolean).length === n, k + 1, { timeout: 20000 });
  }
  const { written } = await idsOf();
  const cli = spawnSync(process.execPath, [path.join(REPO, 'web', 'cli', 'attnlab.mjs'), 'generate', '--model', FOLDER, '--chat', CHAT.question,
    '--temperature', '0', '--max-new-tokens', '3', '--json'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(written, JSON.parse(cli.stdout).generated.ids);
  for (const [w, h, name] of [[1280, 800, 'desktop'], [390, 844, 'phone']]) {
    await page.setViewportSize({ width: w, height: h });
    await page.locator('#prop-chat').scrollIntoViewIfNeeded();
    await screenshotIfAsked(page, `writing_chat_${name}.png`);
  }
  assert.deepEqual(problems, []);
});

// Issue 48, item 1, on the page: a template that would run without end (`range(100000000)`: the worker
// reached 3.6 GB and stayed stuck) is stopped in the section with its sentence, and the model stays open:
// the prompt box writes again at once.
test('a chat template past its budget is stopped in its section with one sentence; the model stays open and writes', async () => {
  const { cpSync, mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-chat-page-'));
  cpSync(FOLDER, dir, { recursive: true });
  const config = JSON.parse(readFileSync(path.join(FOLDER, 'tokenizer_config.json'), 'utf8'));
  writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ ...config, chat_template: '{% for i in range(100000000) %}{% endfor %}' }));
  const other = await lab.context.newPage();
  const seen = [];
  other.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  await other.goto(`${lab.url}?lab=writing&temperature=0&maxNewTokens=2`);
  await openCheckpointIfAsked(other, FILES.map((f) => path.join(dir, path.basename(f))));
  await waitConfigured(other);
  await setField(other, 'chat', 'Hi');
  await other.waitForFunction(() => /chat_template was stopped: range\(\) of 100,000,000 items, more than 100,000, far past what a chat needs/
    .test(document.querySelector('.lab-section[data-state="error"]')?.textContent ?? ''), null, { timeout: 30000 });
  // The model is still open: a prompt, not a chat, is written.
  await setField(other, 'chat', '');
  await setField(other, 'text', 'The dog');
  await other.click('#action-step');
  await other.waitForFunction(() => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().length > 0,
    null, { timeout: 30000 });
  assert.deepEqual(seen, []);
  await other.close();
});

// Issue 48, item 3, on the page: a tokenizer.json the library would hang on (an added token's id of
// 2^32 - 2: it walked every id) or blow up with (32 Replace steps that each double the text: 3.6 GB) is
// refused as it is opened, in one sentence naming the file and the field, and the model that was open
// stays open and writes (the page runs hf_tokenizer.js's checks, as tests/node/tokenizer_bounds does);
// so is a Split pattern that backtracks without bound.
test('a hostile tokenizer.json is refused at opening, naming the file and the field; the model that was open stays open', async () => {
  const { cpSync, mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const json = JSON.parse(readFileSync(path.join(FOLDER, 'tokenizer.json'), 'utf8'));
  const replace = { type: 'Replace', pattern: { String: 'a' }, content: 'aa' };
  const cases = [
    [{ ...json, added_tokens: [...json.added_tokens, { id: 2 ** 32 - 2, content: '<|huge|>', special: true }] },
      /tokenizer\.json: added_tokens\[\d+\]'s id 4294967294 is not a token id of this vocabulary \(0 to \d+\)/],
    [{ ...json, normalizer: { type: 'Sequence', normalizers: Array.from({ length: 32 }, () => replace) } },
      /tokenizer\.json: its normalizer has more than 16 steps/],
    // A Split pattern that backtracks without bound: probed in the page's worker under a deadline
    // (web/tokenizers/regex_guard.js), where it would have hung the worker for ever.
    [{ ...json, pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: '(\\w+\\s?)+$' },
      behavior: 'Isolated', invert: false }, json.pre_tokenizer] } },
      /tokenizer\.json: its pre_tokenizer's Split pattern "\(\\\\w\+\\\\s\?\)\+\$" took more than 2 s on an ordinary sentence: a pattern that backtracks without bound/],
  ];
  const other = await lab.context.newPage();
  const seen = [];
  other.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  await other.goto(`${lab.url}?lab=writing&temperature=0&maxNewTokens=2`);
  await openCheckpointIfAsked(other, FILES);
  await waitConfigured(other);
  for (const [hostile, said] of cases) {
    const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-tokenizer-page-'));
    cpSync(FOLDER, dir, { recursive: true });
    writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(hostile));
    await other.setInputFiles('#open-files', FILES.map((f) => path.join(dir, path.basename(f))));
    // This case's refusal (the one before it is 'bad' too, until this file is read).
    await other.waitForFunction((source) => document.getElementById('open-status')?.dataset.status === 'bad'
      && new RegExp(source).test(document.getElementById('open-status').textContent), said.source, { timeout: 30000 });
    const status = (await other.textContent('#open-status')).trim();
    assert.match(status, new RegExp(`^Not opened: ${said.source}\\. The checkpoint that was open is still open\\.$`));
    // The model that was open still writes, from a new prompt.
    const idsLine = () => document.querySelector('[data-figure="written-ids"]')?.textContent ?? '';
    const before = await other.evaluate(idsLine);
    await setField(other, 'text', `The dog ${cases.findIndex((c) => c[0] === hostile)}`);
    await other.waitForFunction((was) => {
      const now = document.querySelector('[data-figure="written-ids"]')?.textContent ?? '';
      return now.split('·')[0] !== was.split('·')[0];
    }, before, { timeout: 30000 });
    if (!(await other.evaluate(idsLine)).split('written:')[1]?.trim()) await other.click('#action-step');
    await other.waitForFunction(() => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().length > 0,
      null, { timeout: 30000 });
  }
  assert.deepEqual(seen, []);
  await other.close();
});

// Issue 45, item 3: a base model (no chat_template) has nothing to put a question in. The Chat box is
// off, saying why beside it; a link that carries chat= still writes the prompt (every section answers,
// none stuck in an error), and a model with a template turns the box back on.
test('the Chat box of a model without a chat template is off with its reason; the prompt is written; a chat model turns it on', async () => {
  const { TINY_GPT2_FILES } = await import('./support.mjs');
  const other = await lab.context.newPage();
  const seen = [];
  other.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  await other.goto(`${lab.url}?lab=writing&temperature=0&maxNewTokens=2&chat=Hi%20there`);
  await openCheckpointIfAsked(other, TINY_GPT2_FILES);
  await waitConfigured(other);
  await other.waitForFunction(() => document.getElementById('prop-chat')?.disabled === true, null, { timeout: 30000 });
  assert.equal((await other.textContent('#prop-chat-note')).trim(), 'No chat template in this model (its '
    + 'tokenizer_config.json has no chat_template): the prompt above is written as it is.');
  assert.equal(await other.inputValue('#prop-chat'), 'Hi there', 'the link\'s question is kept, for a model that can take it');
  assert.match(await other.getAttribute('#prop-chat', 'aria-describedby'), /prop-chat-note/);
  // The field holds the link's question, so the reason is under it; an empty field carries it inside.
  assert.equal(await other.isVisible('#prop-chat-note'), true);
  assert.match(await other.getAttribute('#prop-chat', 'placeholder'), /^No chat template in this model/);
  // The prompt is written, and no section is left in an error.
  await other.waitForFunction(() => /^ids: /.test(document.querySelector('[data-figure="written-ids"]')?.textContent ?? ''),
    null, { timeout: 30000 });
  assert.match(await other.textContent('[data-figure="written-tokens"]'), /^Prompt \(\d+ tokens\): The/);
  assert.equal(await other.locator('.lab-section[data-state="error"]').count(), 0);
  // A model with a chat template: the box is on again, and the question goes into the template.
  await other.setInputFiles('#open-files', FILES);
  await other.waitForFunction(() => document.getElementById('prop-chat')?.disabled === false, null, { timeout: 30000 });
  assert.equal(await other.isHidden('#prop-chat-note'), true);
  await other.waitForFunction(() => /<\|im_start\|>/.test(document.querySelector('[data-figure="written-tokens"]')?.textContent ?? ''),
    null, { timeout: 30000 });
  assert.deepEqual(seen, []);
  await other.close();
});
