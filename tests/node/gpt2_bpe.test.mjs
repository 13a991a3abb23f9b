// GPT-2's byte-level BPE tokenizer: vocab.json + merges.txt made into the tokenizers library's model
// (web/tokenizers/gpt2_bpe.js's gpt2TokenizerJson, read by @huggingface/tokenizers through
// web/tokenizers/hf_tokenizer.js, issue 37) against GPT2Tokenizer's algorithm written in Python
// (tests/fixtures/gpt2_reference.py; make_gpt2_fixtures.py wrote gpt2_bpe_cases.json with the tiny
// vocabulary of tests/fixtures/gpt2_tiny): the same tokens, ids, each token's own text and the decoded
// text on 300 strings (contractions, white space runs, emoji, CJK, combining marks, <|endoftext|>, and
// random mixes of them). Then the byte table, tokenizer.json, and the messages for broken files.
// (Until issue 37 the BPE was ours: the tests of its pre-tokenizer and of its merge heap's rule and
// linear work went with it. The library's merging is checked by the 300 strings; the 1 MB word stays.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bytesToUnicode, gpt2TokenizerJson, parseMerges, END_OF_TEXT } from '../../web/tokenizers/gpt2_bpe.js';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';
import { checkTokenizer } from '../../web/tokenizers/tokenizer.js';
import { FIXTURES } from './support.mjs';

const FOLDER = path.join(FIXTURES, 'gpt2_tiny', 'hub');
const vocabJson = readFileSync(path.join(FOLDER, 'vocab.json'), 'utf8');
const mergesText = readFileSync(path.join(FOLDER, 'merges.txt'), 'utf8');
const CASES = JSON.parse(readFileSync(path.join(FIXTURES, 'gpt2_bpe_cases.json'), 'utf8'));
const Gpt2BpeTokenizer = {
  fromFiles: (vocab, merges) => HfTokenizer.fromGpt2Files(vocab, merges),
  fromTokenizerJson: (text) => HfTokenizer.fromFiles({ tokenizerJson: text }),
};

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
  // GPT-2's own tokenizer.json (merges in the older "a b" form): a ByteLevel pre-tokenizer and decoder.
  const own = gpt2TokenizerJson(vocabJson, mergesText);
  const json = JSON.stringify({ ...own, model: { ...own.model, vocab, merges: merges.map((m) => m.join(' ')) } });
  const a = Gpt2BpeTokenizer.fromTokenizerJson(json), b = Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText);
  for (const text of CASES.strings.slice(0, 50)) assert.deepEqual(a.encode(text).ids, b.encode(text).ids);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles('{', mergesText), /vocab.json is not JSON/);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles('{"a": 0}', mergesText), /vocab.json lacks the byte token "Ā": is it a byte-level BPE \(GPT-2\) vocabulary\?/);
  assert.throws(() => parseMerges('#version: 0.2\na b c\n'), /merges.txt line 2 must be two tokens/);
  assert.throws(() => Gpt2BpeTokenizer.fromTokenizerJson('{"vocab": {}}'), /^Error: tokenizer.json has no "model": is it a tokenizers library file\?$/);
  assert.throws(() => Gpt2BpeTokenizer.fromTokenizerJson('{"model": {"type": "Nonsense"}}'), /^Error: tokenizer.json: Unknown TokenizerModel type: Nonsense$/);
});

test('gpt2 BPE: 131,000 control characters and a 1 MB word end with their tokens, not a stack overflow (the library\'s BPE)', () => {
  const tok = Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText);
  const control = tok.encode('\x01'.repeat(131000));
  assert.equal(control.ids.length, 131000);
  assert.equal(tok.decode(control.ids), '\x01'.repeat(131000));
  const letters = Array.from({ length: 1 << 20 }, (_, i) => 'the quick brown fox'[i % 19]).join('').replace(/ /g, 'e');
  const { ids } = tok.encode(letters);
  assert.equal(tok.decode(ids), letters);
});

test('gpt2 BPE: broken tokenizer files are refused when they are read, naming the file', () => {
  const vocab = JSON.parse(vocabJson);
  const zeros = JSON.stringify(Object.fromEntries(Object.keys(vocab).map((t) => [t, 0])));
  assert.throws(() => Gpt2BpeTokenizer.fromFiles(zeros, mergesText), /^Error: vocab.json: "0" and "1" have the same id 0: each token needs its own$/);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles(vocabJson, `#version: 0.2\nh e\nq z\n`), /^Error: merges.txt: merge 2 \("q z"\) needs the token "qz", which vocab.json lacks$/);
  assert.throws(() => Gpt2BpeTokenizer.fromFiles(vocabJson, `#version: 0.2\nh e\n☃ e\n`), /^Error: merges.txt: merge 2 \("☃ e"\) needs the token "☃", which vocab.json lacks$/);
  const json = JSON.stringify({ model: { type: 'BPE', vocab, merges: ['h e', 'x y'] } });
  assert.throws(() => Gpt2BpeTokenizer.fromTokenizerJson(json), /^Error: tokenizer.json \(model.merges\): merge 2 \("x y"\) needs the token "xy", which tokenizer.json \(model.vocab\) lacks$/);
});
