// tokenizer.json is checked before the tokenizers library sees it (issue 48, item 3; web/tokenizers/
// hf_tokenizer.js checkTokenizerJson): an added token's id far past the vocabulary (2^32 - 2 made the
// library walk every id: a hang), normalizer chains that grow the text without bound (32 Replace steps
// that each double it reached 3.6 GB), and a file far larger than config.json's vocab_size allows (3.3
// million entries took 19 s and 2.1 GB to parse before they were refused). Each is refused in one line
// naming the file and the field, at once; the real files of the fixtures still open. Through the CLI: exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { HfTokenizer, TOKENIZER_LIMITS } from '../../web/tokenizers/hf_tokenizer.js';

const LLAMA2 = JSON.parse(readFileSync(path.join(FIXTURES, 'tokenizers', 'llama2', 'tokenizer.json'), 'utf8'));
const open = (json, modelConfig = null) => HfTokenizer.fromFiles({ tokenizerJson: typeof json === 'string' ? json : JSON.stringify(json), modelConfig });
const replace = (from, to) => ({ type: 'Replace', pattern: { String: from }, content: to });

test('the fixtures\' tokenizer.json files open as before', () => {
  for (const name of ['llama2', 'llama3', 'qwen2', 'gpt2', 'wordpiece']) {
    const t = open(readFileSync(path.join(FIXTURES, 'tokenizers', name, 'tokenizer.json'), 'utf8'));
    assert.ok(t.size > 100, name);
  }
});

test('an added token\'s id past the vocabulary, and a negative or fractional one, are refused naming the entry', () => {
  const entries = Object.keys(LLAMA2.model.vocab).length, bound = entries + LLAMA2.added_tokens.length + 1; // the token added below counts
  for (const id of [2 ** 32 - 2, bound, -1, 3.5, '7']) {
    const json = { ...LLAMA2, added_tokens: [...LLAMA2.added_tokens, { id, content: '<|x|>', special: true }] };
    assert.throws(() => open(json), { message: `tokenizer.json: added_tokens[${LLAMA2.added_tokens.length}]'s id ${JSON.stringify(id)} is not a token id of this vocabulary (0 to ${bound - 1})` });
  }
  // config.json's vocab_size (room for tokens the file does not list) widens the range.
  const json = { ...LLAMA2, added_tokens: [...LLAMA2.added_tokens, { id: 1000, content: '<|x|>', special: true }] };
  assert.ok(open(json, { vocab_size: 1024 }).size > 0);
});

test('normalizer and pre-tokenizer chains: more than 16 steps, Sequences nested past 4, Replace steps growing the text past 8 times', () => {
  const doubling = Array.from({ length: 32 }, () => replace('a', 'aa'));
  assert.throws(() => open({ ...LLAMA2, normalizer: { type: 'Sequence', normalizers: doubling } }), { message: 'tokenizer.json: its normalizer has more than 16 steps' });
  assert.throws(() => open({ ...LLAMA2, normalizer: { type: 'Sequence', normalizers: [replace('a', 'aa'), replace('b', 'bbbbb')] } }),
    { message: `tokenizer.json: its normalizer's Replace steps could make a text more than ${TOKENIZER_LIMITS.growth} times longer` });
  let nested = { type: 'Whitespace' };
  for (let i = 0; i < 6; i++) nested = { type: 'Sequence', pretokenizers: [nested] };
  assert.throws(() => open({ ...LLAMA2, pre_tokenizer: nested }), { message: 'tokenizer.json: its pre_tokenizer nests Sequences more than 4 deep' });
  // Llama 2's own chain (Prepend, Replace ' ' by '▁': no growth) and a doubling or two are fine.
  assert.ok(open({ ...LLAMA2, normalizer: { type: 'Sequence', normalizers: [...LLAMA2.normalizer.normalizers, replace('a', 'aa'), replace('b', 'bb')] } }).size > 0);
});

test('a vocabulary larger than config.json\'s vocab_size is refused: by its length before it is parsed, by its entries after', () => {
  const text = JSON.stringify(LLAMA2);
  const padded = `${text.slice(0, -1)}${' '.repeat((4 << 20) + 100 * TOKENIZER_LIMITS.bytesPerToken)}}`;
  assert.throws(() => open(padded, { vocab_size: 100 }), {
    message: `tokenizer.json is ${padded.length.toLocaleString('en')} characters long: for config.json's vocab_size of 100 a tokenizer is at most `
      + `${(100 * TOKENIZER_LIMITS.bytesPerToken + (4 << 20)).toLocaleString('en')} (400 a token and 4 MB)` });
  assert.throws(() => open(text, { vocab_size: 100 }), {
    message: `tokenizer.json: its model.vocab has ${Object.keys(LLAMA2.model.vocab).length} entries but config.json's vocab_size is 100: they belong to different models` });
});

test('attnlab generate: a tokenizer.json with an added id of 2^32 - 2 exits 2 in one line naming it', () => {
  const folder = path.join(FIXTURES, 'gpt2_tiny', 'chat');
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-tokenizer-'));
  cpSync(folder, dir, { recursive: true });
  const json = JSON.parse(readFileSync(path.join(folder, 'tokenizer.json'), 'utf8'));
  json.added_tokens = [...json.added_tokens, { id: 2 ** 32 - 2, content: '<|huge|>', special: true }];
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), 'generate', '--model', dir, '--text', 'Hi'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: .*tokenizer\.json: added_tokens\[\d+\]'s id 4294967294 is not a token id of this vocabulary \(0 to \d+\)\n$/);
});

test('an end-of-text id that is not a token id is named by its file and field (it reached the module as "eosIds[0] must be a token id")', () => {
  const text = JSON.stringify(LLAMA2);
  for (const [generationConfig, said] of [[{ eos_token_id: 1e12 }, '1000000000000'], [{ eos_token_id: [2, -1] }, '-1'], [{ eos_token_id: 'x' }, '"x"']]) {
    assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: text, generationConfig }),
      { message: `generation_config.json's eos_token_id holds ${said}, not a token id (a whole number 0 or more)` });
  }
  assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: text, modelConfig: { eos_token_id: 2.5 } }),
    { message: 'config.json\'s eos_token_id holds 2.5, not a token id (a whole number 0 or more)' });
  assert.deepEqual(HfTokenizer.fromFiles({ tokenizerJson: text, generationConfig: { eos_token_id: [2, 3] } }).eosIds.slice(0, 2), [2, 3]);
});

// Issue 48, item 3: a tokenizer.json's own regular expressions run under a deadline (web/tokenizers/
// regex_guard.js). JavaScript cannot interrupt a regex on its own thread, so each pattern runs first in a
// worker while this thread waits; each test below ends by that deadline (REGEX_LIMITS.deadlineMs), not by
// a clock the test reads.
const LLAMA3 = JSON.parse(readFileSync(path.join(FIXTURES, 'tokenizers', 'llama3', 'tokenizer.json'), 'utf8'));
const withSplit = (regex) => {
  const json = structuredClone(LLAMA3);
  json.pre_tokenizer.pretokenizers[0].pattern.Regex = regex;
  return JSON.stringify(json);
};

test('a Split pattern that backtracks on an ordinary sentence is refused at opening, naming the field and the probe', async () => {
  await assert.rejects(HfTokenizer.fromFiles({ tokenizerJson: withSplit('(\\w+\\s?)+$') }).watchPatterns(), {
    name: 'PatternError',
    message: 'tokenizer.json: its pre_tokenizer\'s Split pattern "(\\\\w+\\\\s?)+$" took more than 2 s on an ordinary sentence: '
      + 'a pattern that backtracks without bound' });
  // A normalizer's Replace with a Regex is watched the same way, probed on long runs of one character.
  const json = structuredClone(LLAMA3);
  json.normalizer = { type: 'Replace', pattern: { Regex: '(a|aa)+b' }, content: '' };
  await assert.rejects(HfTokenizer.fromFiles({ tokenizerJson: JSON.stringify(json) }).watchPatterns(),
    { message: 'tokenizer.json: its normalizer\'s Replace pattern "(a|aa)+b" took more than 2 s on 48 characters ("a" repeated): '
      + 'a pattern that backtracks without bound' });
});

test('a pattern that passes the probes but backtracks on one text refuses that text; the tokenizer goes on with the next', async () => {
  const t = await HfTokenizer.fromFiles({ tokenizerJson: withSplit('(x+x+)+y|\\S+|\\s+') }).watchPatterns();
  assert.equal(t.watchedPatterns, 1);
  const before = t.encode('still works').ids;
  assert.throws(() => t.encode('x'.repeat(40)), {
    name: 'PatternError',
    message: 'tokenizer.json: its pre_tokenizer\'s Split pattern "(x+x+)+y|\\\\S+|\\\\s+" took more than 2 s on a text of 40 '
      + 'characters: a pattern that backtracks without bound; the text was not tokenized' });
  assert.deepEqual(t.encode('still works').ids, before);
});

test('Llama 3\'s own pattern is watched and tokenizes exactly as without the watcher', async () => {
  const watched = await HfTokenizer.fromFiles({ tokenizerJson: JSON.stringify(LLAMA3) }).watchPatterns();
  const plain = HfTokenizer.fromFiles({ tokenizerJson: JSON.stringify(LLAMA3) });
  assert.equal(watched.watchedPatterns, 1);
  for (const text of ['The quick brown fox', 'It\'s 3:45 pm,\n\n  we\'ve 12,000 words!', '   ', 'é中😀 a1 _.']) {
    assert.deepEqual(watched.encode(text), plain.encode(text), text);
  }
  // A text longer than the watcher reads is refused by its length, not run.
  assert.throws(() => watched.encode('a'.repeat((1 << 20) + 1)),
    { message: /^tokenizer\.json: its pre_tokenizer's Split pattern ".*" is run on at most 1,048,576 characters; this text has 1,048,577$/ });
});

/** The tiny GPT-2 chat model's folder copied, with a Split of `regex` in front of its pre-tokenizer. */
function folderWithSplit(regex) {
  const folder = path.join(FIXTURES, 'gpt2_tiny', 'chat');
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-tokenizer-'));
  cpSync(folder, dir, { recursive: true });
  const json = JSON.parse(readFileSync(path.join(folder, 'tokenizer.json'), 'utf8'));
  json.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, json.pre_tokenizer] };
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  return dir;
}

test('attnlab generate: a Split pattern that backtracks on the prompt exits 2 in one line naming it', () => {
  const dir = folderWithSplit('(\\w+\\s?)+$');
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), 'generate', '--model', dir, '--text', 'Hi'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: .*tokenizer\.json: its pre_tokenizer's Split pattern "\(\\\\w\+\\\\s\?\)\+\$" took more than 2 s on an ordinary sentence: a pattern that backtracks without bound\n$/);
});

test('attnlab generate: a --text the pattern backtracks on exits 2 in one line; another text writes', () => {
  const dir = folderWithSplit('(x+x+)+y|\\S+|\\s+');
  const generate = (text) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), 'generate', '--model', dir,
    '--text', text, '--max-new-tokens', '2', '--temperature', '0'], { encoding: 'utf8', timeout: 120_000 });
  const r = generate('x'.repeat(44));
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'attnlab: tokenizer.json: its pre_tokenizer\'s Split pattern "(x+x+)+y|\\\\S+|\\\\s+" took more than 2 s on a text of 44 characters: '
    + 'a pattern that backtracks without bound; the text was not tokenized\n');
  const ok = generate('hello there');
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /hello/);
});
