// GPT-2's byte-level BPE tokenizer (web/tokenizers/gpt2_bpe.js, issue 26) against GPT2Tokenizer's
// algorithm written in Python (tests/fixtures/gpt2_reference.py; make_gpt2_fixtures.py wrote
// gpt2_bpe_cases.json with the tiny vocabulary of tests/fixtures/gpt2_tiny): the same tokens, ids, each
// token's own text and the decoded text on 300 strings (contractions, white space runs, emoji, CJK,
// combining marks, <|endoftext|>, and random mixes of them). Then the byte table, tokenizer.json, and
// the messages for broken files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Gpt2BpeTokenizer, bytesToUnicode, parseMerges, pretokenize, END_OF_TEXT } from '../../web/tokenizers/gpt2_bpe.js';
import { checkTokenizer } from '../../web/tokenizers/tokenizer.js';
import { FIXTURES } from './support.mjs';

const FOLDER = path.join(FIXTURES, 'gpt2_tiny', 'hub');
const vocabJson = readFileSync(path.join(FOLDER, 'vocab.json'), 'utf8');
const mergesText = readFileSync(path.join(FOLDER, 'merges.txt'), 'utf8');
const CASES = JSON.parse(readFileSync(path.join(FIXTURES, 'gpt2_bpe_cases.json'), 'utf8'));

test('gpt2 BPE: tokens, ids, token texts and decoding equal the Python reference on 300 strings', () => {
  const tok = checkTokenizer(Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText), 'GPT-2');
  assert.equal(CASES.strings.length, 300);
  let differ = [];
  CASES.strings.forEach((text, i) => {
    const { tokens, ids, texts } = tok.encode(text);
    const ok = JSON.stringify(tokens) === JSON.stringify(CASES.tokens[i]) && JSON.stringify(ids) === JSON.stringify(CASES.ids[i])
      && JSON.stringify(texts) === JSON.stringify(CASES.texts[i]) && tok.decode(ids, { skipSpecialTokens: false }) === CASES.decoded[i];
    if (!ok) differ.push({ text, ours: tokens, python: CASES.tokens[i] });
  });
  assert.deepEqual(differ.slice(0, 3), [], `${differ.length} of 300 strings differ`);
});

test('gpt2 BPE: the pre-tokenizer splits as GPT-2\'s pattern does', () => {
  assert.deepEqual(pretokenize("I'm here  now"), ['I', "'m", ' here', ' ', ' now']);
  assert.deepEqual(pretokenize(' \n\nx'), [' \n', '\n', 'x']);
  assert.deepEqual(pretokenize("they'RE 123abc"), ['they', "'", 'RE', ' 123', 'abc']);
  assert.deepEqual(pretokenize('e\u0301t\u00e9'), ['e', '\u0301', 't\u00e9']);  // a combining mark is not a letter
  assert.deepEqual(pretokenize('x\ufeffy'), ['x', '\ufeff', 'y']);  // U+FEFF: JS's \s, not White_Space
  assert.deepEqual(pretokenize('x\u0085y'), ['x', '\u0085', 'y']);
});

test('gpt2 BPE: the byte table, <|endoftext|>, token texts with their spaces, decoding without specials', () => {
  const table = bytesToUnicode();
  assert.equal(table[0x20], 'Ġ');
  assert.equal(table[0x0a], 'Ċ');
  assert.equal(table[0x41], 'A');
  assert.equal(new Set(table).size, 256);
  const tok = Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText);
  assert.equal(tok.size, 407);
  assert.equal(tok.eosId, 406);
  assert.equal(tok.tokenToId(END_OF_TEXT), 406);
  const { ids, texts } = tok.encode(`Hello world${END_OF_TEXT} again`);
  assert.equal(texts.join(''), `Hello world${END_OF_TEXT} again`);
  assert.ok(texts.includes(END_OF_TEXT));
  assert.ok(texts.some((t) => t.startsWith(' ')));  // a token's own leading space, as it is
  assert.equal(tok.decode(ids), 'Hello world again');
  assert.equal(tok.decode(ids, { skipSpecialTokens: false }), `Hello world${END_OF_TEXT} again`);
  // An emoji's four bytes as single-byte tokens: each shows U+FFFD on its own, the whole text the emoji.
  const emoji = tok.encode('🦙');
  assert.equal(tok.decode(emoji.ids), '🦙');
  assert.throws(() => tok.idToToken(407), /token id 407 is outside the vocabulary \[0, 407\)/);
});

test('gpt2 BPE: tokenizer.json gives the same ids; broken files are named', () => {
  const vocab = JSON.parse(vocabJson);
  const merges = parseMerges(mergesText);
  const json = JSON.stringify({ model: { type: 'BPE', vocab, merges: merges.map((m) => m.join(' ')) },
    added_tokens: [{ id: 406, content: END_OF_TEXT, special: true }] });
  const a = Gpt2BpeTokenizer.fromTokenizerJson(json), b = Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText);
  for (const text of CASES.strings.slice(0, 50)) assert.deepEqual(a.encode(text).ids, b.encode(text).ids);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles('{', mergesText), /vocab.json is not JSON/);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles('{"a": 0}', mergesText), /vocab.json lacks the byte token "Ā": is it a byte-level BPE \(GPT-2\) vocabulary\?/);
  assert.throws(() => parseMerges('#version: 0.2\na b c\n'), /merges.txt line 2 must be two tokens/);
  assert.throws(() => Gpt2BpeTokenizer.fromTokenizerJson('{"model": {"type": "WordPiece"}}'), /must be a BPE/);
});
