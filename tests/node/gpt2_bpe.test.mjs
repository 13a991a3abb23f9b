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

// ---- the merge loop's cost and its rule (issue 35, item 5) ----

/** A byte-level vocabulary with `merges` ([a, b] in rank order) and every token they make. */
function synthetic(merges) {
  const vocab = {};
  for (const c of bytesToUnicode()) vocab[c] = Object.keys(vocab).length;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  return new Gpt2BpeTokenizer(vocab, merges);
}

/** GPT2Tokenizer's rule as written (gpt2_reference.py's bpe): rescan for the lowest rank, merge each occurrence left to right. */
function plainBpe(ranks, word) {
  let parts = [...word];
  for (;;) {
    let best = Infinity, at = -1;
    for (let k = 0; k + 1 < parts.length; k++) {
      const rank = ranks.get(`${parts[k]} ${parts[k + 1]}`);
      if (rank !== undefined && rank < best) { best = rank; at = k; }
    }
    if (at < 0) return parts;
    const [a, b] = [parts[at], parts[at + 1]];
    const merged = [];
    for (let k = 0; k < parts.length; k++) {
      if (k + 1 < parts.length && parts[k] === a && parts[k + 1] === b) { merged.push(a + b); k++; } else merged.push(parts[k]);
    }
    parts = merged;
  }
}

const pseudoRandom = (seed) => () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32; };
const LETTERS = 'abcd';
// Every pair of the four letters (16 merges), then every pair of those (256), in a shuffled order, plus
// overlapping and chained ones ("a a", "aa a", "a aa"): many ranks, so the plain rule rescans often.
function richMerges(random) {
  const pairs = [];
  for (const a of LETTERS) for (const b of LETTERS) pairs.push([a, b]);
  const twos = pairs.map(([a, b]) => a + b);
  for (const a of twos) for (const b of twos) pairs.push([a, b]);
  pairs.push(['aa', 'a'], ['a', 'aa'], ['aaa', 'a']);
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pairs[i], pairs[j]] = [pairs[j], pairs[i]];
  }
  // A pair's parts must come before it (as trained merges do): a two-letter token before a pair of them.
  const rank = new Map(pairs.map((p, i) => [p.join(' '), i]));
  return pairs.sort((x, y) => (x[0].length + x[1].length) - (y[0].length + y[1].length) || rank.get(x.join(' ')) - rank.get(y.join(' ')));
}

test('gpt2 BPE: the heap of pairs merges as GPT2Tokenizer\'s rescanning rule on 400 random words (overlaps, chains, ties)', () => {
  const random = pseudoRandom(7);
  for (let trial = 0; trial < 4; trial++) {
    const tok = synthetic(richMerges(random));
    for (let w = 0; w < 100; w++) {
      const length = 1 + Math.floor(random() * 40);
      const word = Array.from({ length }, () => (random() < 0.5 ? 'a' : LETTERS[Math.floor(random() * 4)])).join('');
      assert.deepEqual(tok.bpe(word), plainBpe(tok.ranks, word), word);
    }
  }
});

test('gpt2 BPE: the work is linear in the word by construction (at most 6 heap operations a character; twice the word, about twice the work)', () => {
  const tok = synthetic(richMerges(pseudoRandom(3)));
  const random = pseudoRandom(11);
  const word = Array.from({ length: 1 << 16 }, () => LETTERS[Math.floor(random() * 4)]).join('');
  const work = (n) => {
    tok.work = 0;
    tok.bpe(word.slice(0, n));
    return tok.work;
  };
  const sizes = [1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16];
  const counts = sizes.map(work);
  // Each character's pair is pushed once; each merge pops one pair and pushes at most two: <= n + 3n.
  sizes.forEach((n, i) => assert.ok(counts[i] <= 6 * n, `${n} characters: ${counts[i]} heap operations`));
  for (let i = 1; i < sizes.length; i++) {
    const ratio = counts[i] / counts[i - 1];
    assert.ok(ratio > 1.8 && ratio < 2.2, `${sizes[i - 1]} -> ${sizes[i]} characters: the work grew ${ratio.toFixed(2)}x`);
  }
});

test('gpt2 BPE: 131,000 control characters and a 1 MB word end with their tokens, not a stack overflow', () => {
  const tok = Gpt2BpeTokenizer.fromFiles(vocabJson, mergesText);
  const control = tok.encode('\x01'.repeat(131000));
  assert.equal(control.ids.length, 131000);
  assert.equal(tok.decode(control.ids), '\x01'.repeat(131000));
  tok.work = 0;
  const letters = Array.from({ length: 1 << 20 }, (_, i) => 'the quick brown fox'[i % 19]).join('').replace(/ /g, 'e');
  const { ids } = tok.encode(letters);
  assert.equal(tok.decode(ids), letters);
  assert.ok(tok.work <= 6 * letters.length, `${tok.work} heap operations for ${letters.length} characters`);
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
