// A tokenizer.json's own regular expression on a cross-origin isolated page (issue 48, item 3;
// web/tokenizers/regex_guard.js). There the page's worker can wait on another thread, so each text runs
// the file's pattern first in a watcher worker under a deadline: a text the pattern backtracks on without
// bound is refused under the field in one sentence naming the field, the figures of the last text stay
// (marked "Not updated"), and the next text is written. (A page that is not isolated probes the pattern
// when it opens: tests/browser/writing_chat.test.mjs.) The test ends by the watcher's deadline, not by a
// clock it reads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLab, openCheckpointIfAsked, waitConfigured, setField, writtenIds } from './support.mjs';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const FOLDER = path.join(FIXTURES, 'gpt2_tiny', 'chat');
const NAMES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'];

let lab;
before(async () => { lab = await startLab({ serviceWorker: true }); });
after(async () => { await lab?.close(); });

test('isolated page: a text the Split pattern backtracks on is refused naming the pattern; the next text is written', async () => {
  // The tiny GPT-2 with a Split in front whose (x+x+)+y passes every probe but backtracks on a run of x's.
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-patterns-'));
  cpSync(FOLDER, dir, { recursive: true });
  const json = JSON.parse(readFileSync(path.join(FOLDER, 'tokenizer.json'), 'utf8'));
  json.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: '(x+x+)+y|\\S+|\\s+' },
    behavior: 'Isolated', invert: false }, json.pre_tokenizer] };
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));

  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${lab.url}?lab=writing&temperature=0&maxNewTokens=2`);
  // A first visit runs without threads and installs the site's worker; the next load is isolated.
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.reload();
  await page.waitForFunction(() => crossOriginIsolated, null, { timeout: 60000 });
  await openCheckpointIfAsked(page, NAMES.map((f) => path.join(dir, f)));
  await waitConfigured(page);
  assert.match(await page.textContent('#open-status'), /^Open: /);

  await setField(page, 'text', 'x'.repeat(44));
  const refusal = await page.waitForFunction(() => {
    const section = [...document.querySelectorAll('.lab-section')].find((s) => s.dataset.state === 'error');
    return section && /Split pattern/.test(section.textContent) ? section.textContent : null;
  }, null, { timeout: 60000 }).then((h) => h.jsonValue());
  assert.match(refusal, /tokenizer\.json: its pre_tokenizer's Split pattern "\(x\+x\+\)\+y\|\\\\S\+\|\\\\s\+" took more than 2 s on a text of 44 characters: a pattern that backtracks without bound; the text was not tokenized/);
  assert.match(refusal, /Not updated: fix the input above/);

  // The worker lives and the model is still open: the next prompt is split and written.
  await setField(page, 'text', 'hello there');
  const expected = HfTokenizer.fromFiles({ tokenizerJson: JSON.stringify(json),
    tokenizerConfig: readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8') }).encode('hello there').ids;
  await page.waitForFunction((want) => ![...document.querySelectorAll('.lab-section')].some((s) => s.dataset.state === 'error')
    && (document.querySelector('[data-figure="written-ids"]')?.textContent ?? '').startsWith(`ids: ${want} ·`), expected.join(' '), { timeout: 60000 });
  await page.click('#action-step');
  await page.waitForFunction(() => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().length > 0,
    null, { timeout: 30000 });
  assert.deepEqual((await writtenIds(page)).prompt, expected);
  assert.deepEqual(problems, []);
  await page.close();
});
