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
