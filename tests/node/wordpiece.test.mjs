// BERT's WordPiece tokenizer (web/tokenizers/wordpiece.js, issue 13) against @huggingface/tokenizers
// 0.2.0, an independent JS port of HF's Rust tokenizers: the same tokens, ids and token types on every
// sentence of tests/fixtures/wordpiece/corpus.mjs (hand-written ones per rule, then a seeded mix) in
// five settings (uncased, cased, uncased keeping accents, cased stripping accents, no CJK spacing), as
// single sentences and as pairs. Then vocab.txt parsing and its errors, the length limit, the options
// from config.json / tokenizer_config.json, and the bert_tiny fixture's ids from transformers.
//
// Where tokenizers.js 0.2.0 differs from HF's Python BertTokenizer and Rust BertTokenizerFast (which
// agree on all four), the reference's input gets a rewrite that changes nothing for HF and lets
// tokenizers.js give HF's answer; each is shown, with its case, in its own test below:
//   1. Astral CJK ideographs (U+20000 and up): tokenizers.js looks at UTF-16 units, never sees them,
//      and puts no spaces around them. Rewrite: put the spaces in first.
//   2. Unassigned code points (Cn, e.g. U+FFFF, U+0378): HF drops every C* character; tokenizers.js
//      drops Cc, Cf, Co, Cs only. Rewrite: U+0001 in their place (dropped by both; deleting the
//      character instead could join "[MASK" and "]" into a special token that HF never sees).
//   3. Final capital sigma when lowercasing: tokenizers.js lowercases whole strings, and JS applies the
//      final-sigma rule ("ΟΔΟΣ" -> "οδος"); HF lowercases one character at a time (Python's
//      PreTrainedTokenizer.tokenize maps "(.+?)" to lower(); Rust calls char::to_lowercase): "οδοσ".
//      Rewrite: "Σ" -> "σ" beforehand.
//   4. An empty second sentence: tokenizers.js treats text_pair "" as no pair; HF encodes
//      [CLS] A [SEP] [SEP]. Rewrite: pass " " (no tokens, but a pair).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import {
  WordPieceTokenizer, tokenizerOptions, wordPieces, basicTokenize, SPECIAL_TOKENS,
} from '../../web/tokenizers/wordpiece.js';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { buildVocab, RULE_SENTENCES, RULE_PAIRS, generatedSentences } from '../fixtures/wordpiece/corpus.mjs';
import { FIXTURES } from './support.mjs';

const VOCAB = buildVocab();
const SINGLES = [...RULE_SENTENCES, ...generatedSentences(420, 2024)];
const GENERATED_PAIRS = generatedSentences(300, 7);
const PAIRS = [...RULE_PAIRS];
for (let i = 0; i + 1 < GENERATED_PAIRS.length; i += 2) PAIRS.push([GENERATED_PAIRS[i], GENERATED_PAIRS[i + 1]]);

// name, our options, tokenizer.json's BertNormalizer fields
const SETTINGS = [
  ['uncased', { doLowerCase: true, stripAccents: null }, { lowercase: true, strip_accents: null, handle_chinese_chars: true }],
  ['cased', { doLowerCase: false, stripAccents: null }, { lowercase: false, strip_accents: null, handle_chinese_chars: true }],
  ['uncased, strip_accents false', { doLowerCase: true, stripAccents: false }, { lowercase: true, strip_accents: false, handle_chinese_chars: true }],
  ['cased, strip_accents true', { doLowerCase: false, stripAccents: true }, { lowercase: false, strip_accents: true, handle_chinese_chars: true }],
  ['uncased, tokenize_chinese_chars false', { doLowerCase: true, tokenizeChineseChars: false }, { lowercase: true, strip_accents: null, handle_chinese_chars: false }],
];

/** A tokenizer.json for tokenizers.js as HF writes it for BERT, over `vocab` (id -> token). */
function hfTokenizerJson(vocab, normalizer) {
  const ids = Object.fromEntries(vocab.map((t, i) => [t, i]));
  return {
    version: '1.0',
    added_tokens: SPECIAL_TOKENS.filter((t) => t in ids).map((t) => ({
      id: ids[t], content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, ...normalizer },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

// ---- The rewrites for tokenizers.js 0.2.0 (see the top) ----
// 1: the astral ones of HF's CJK ranges (Python's tokenization_bert.py _is_chinese_char), written out
// here rather than taken from wordpiece.js, so that the reference does not lean on the code it checks.
const ASTRAL_CJK = [[0x20000, 0x2A6DF], [0x2A700, 0x2B73F], [0x2B740, 0x2B81F], [0x2B820, 0x2CEAF], [0x2F800, 0x2FA1F]];
const spaceAstralCjk = (s) => s.replace(/[\u{10000}-\u{10FFFF}]/gu, (ch) => {
  const cp = ch.codePointAt(0);
  return ASTRAL_CJK.some(([lo, hi]) => cp >= lo && cp <= hi) ? ` ${ch} ` : ch;
});
const unassignedToControl = (s) => s.replace(/\p{Cn}/gu, '\u0001'); // 2
const noFinalSigma = (s) => s.replaceAll('Σ', 'σ'); // 3

function referenceInput(text, normalizer) {
  let s = unassignedToControl(text);
  if (normalizer.handle_chinese_chars) s = spaceAstralCjk(s);
  if (normalizer.lowercase) s = noFinalSigma(s);
  return s;
}

/** tokenizers.js's encoding of text (and pair), after the rewrites; pair '' -> ' ' (4). */
function reference(hf, normalizer, text, pair = null) {
  const p = pair === null ? null : (pair === '' ? ' ' : referenceInput(pair, normalizer));
  const e = hf.encode(referenceInput(text, normalizer), { text_pair: p, return_token_type_ids: true });
  return { tokens: e.tokens, ids: e.ids, typeIds: e.token_type_ids };
}

const show = (s) => JSON.stringify(s).slice(0, 160);

for (const [name, options, normalizer] of SETTINGS) {
  test(`WordPiece vs @huggingface/tokenizers [${name}]: ${SINGLES.length} sentences and ${PAIRS.length} pairs, tokens, ids and token types`, () => {
    const ours = new WordPieceTokenizer(VOCAB, options);
    const hf = new Tokenizer(hfTokenizerJson(VOCAB, normalizer), {});
    let unk = 0, continued = 0, rewritten = 0;
    for (const s of SINGLES) {
      const got = ours.encode(s);
      assert.deepEqual(got, reference(hf, normalizer, s), `sentence ${show(s)}`);
      unk += got.tokens.filter((t) => t === '[UNK]').length;
      continued += got.tokens.filter((t) => t.startsWith('##')).length;
      if (referenceInput(s, normalizer) !== s) rewritten++;
    }
    for (const [a, b] of PAIRS) assert.deepEqual(ours.encode(a, b), reference(hf, normalizer, a, b), `pair ${show(a)} / ${show(b)}`);
    // The corpus exercises what it should: many [UNK]s and "##" pieces, and the rewrites stay rare.
    assert.ok(unk > 200, `only ${unk} [UNK] tokens`);
    assert.ok(continued > 1000, `only ${continued} ## pieces`);
    assert.ok(rewritten < SINGLES.length / 4, `${rewritten} of ${SINGLES.length} sentences rewritten for the reference`);
  });
}

test('the corpus: over 500 sentences, and the rules each appear in it', () => {
  assert.ok(SINGLES.length >= 500, `${SINGLES.length} sentences`);
  const all = SINGLES.join('\n');
  for (const [rule, re] of [
    ['accents', /[éïåł]/u], ['CJK', /\p{Script=Han}/u], ['Hangul', /\p{Script=Hangul}/u], ['kana', /\p{Script=Hiragana}/u],
    ['Unicode punctuation', /[«»—…¿¡、。]/u], ['controls', /\p{Cc}/u], ['format chars', /\p{Cf}/u], ['odd whitespace', /[\u00A0\u3000\u2028]/u],
    ['emoji', /\p{Extended_Pictographic}/u], ['digits', /\d/u], ['specials', /\[MASK\]/u], ['long words', /\p{L}{101}/u],
  ]) assert.match(all, re, rule);
});

// ---- The deviations of tokenizers.js 0.2.0, one case each (ours follows HF Python and Rust) ----

test('tokenizers.js deviation 1: astral CJK ideographs (Extension B, U+20000) get no spaces there; HF splits them', () => {
  const ours = new WordPieceTokenizer(VOCAB);
  const hf = new Tokenizer(hfTokenizerJson(VOCAB, SETTINGS[0][2]), {});
  assert.deepEqual(ours.tokenize('a𠀀b'), ['a', '𠀀', 'b']); // U+20000 is in the vocabulary
  assert.deepEqual(hf.tokenize('a𠀀b'), ['[UNK]']); // one word "a𠀀b"
  // U+2B820..U+2B91F: Python's range (ours); Rust's starts at U+2B920. Spaced here.
  assert.deepEqual(basicTokenize('x\u{2B820}y'), ['x', '\u{2B820}', 'y']);
  assert.deepEqual(basicTokenize('x\u{2CEB0}y'), ['x\u{2CEB0}y']); // past every range: a letter like any other
});

test('tokenizers.js deviation 2: unassigned code points (Cn) stay there; HF drops them with the other C* characters', () => {
  const ours = new WordPieceTokenizer(VOCAB);
  const hf = new Tokenizer(hfTokenizerJson(VOCAB, SETTINGS[0][2]), {});
  assert.deepEqual(ours.tokenize('non\uFFFFchar'), ours.tokenize('nonchar'));
  assert.deepEqual(hf.tokenize('non\uFFFFchar'), ['[UNK]']);
  // Dropping happens after the special tokens are cut out: "[MASK\uFFFF]" is not [MASK] (as HF).
  assert.deepEqual(ours.tokenize('[MASK\uFFFF]'), ['[', 'mask', ']']);
});

test('tokenizers.js deviation 3: a final capital sigma lowercases to ς there, to σ in HF (one character at a time)', () => {
  const ours = new WordPieceTokenizer(VOCAB);
  const hf = new Tokenizer(hfTokenizerJson(VOCAB, SETTINGS[0][2]), {});
  assert.deepEqual(ours.tokenize('ΟΔΟΣ'), ['ο', '##δ', '##ο', '##σ']);
  assert.deepEqual(hf.tokenize('ΟΔΟΣ'), hf.tokenize('οδος'));
  assert.deepEqual(hf.tokenize('ΟΔΟΣ'), ['ο', '##δ', '##ο', '##ς']); // the vocabulary tells σ from ς
});

test('tokenizers.js deviation 4: an empty second sentence is dropped there; HF (and ours) encode [CLS] a [SEP] [SEP]', () => {
  const ours = new WordPieceTokenizer(VOCAB);
  const hf = new Tokenizer(hfTokenizerJson(VOCAB, SETTINGS[0][2]), {});
  assert.deepEqual(ours.encode('a', '').tokens, ['[CLS]', 'a', '[SEP]', '[SEP]']);
  assert.deepEqual(ours.encode('a', '').typeIds, [0, 0, 0, 1]);
  assert.deepEqual(hf.encode('a', { text_pair: '' }).tokens, ['[CLS]', 'a', '[SEP]']);
  assert.deepEqual(ours.encode('a', null).tokens, ['[CLS]', 'a', '[SEP]']);
});

// ---- Rules, by hand ----

test('WordPiece: greedy longest match first, ## continuations, [UNK] for a word not fully covered or over 100 characters', () => {
  const vocab = new Set(['un', '##aff', '##able', 'a', '##a', 'aa', '##b']);
  assert.deepEqual(wordPieces('unaffable', vocab), ['un', '##aff', '##able']);
  assert.deepEqual(wordPieces('aaa', vocab), ['aa', '##a']); // longest first, not a ##a ##a
  assert.deepEqual(wordPieces('unaffablex', vocab), ['[UNK]']); // never partly known
  assert.deepEqual(wordPieces('a'.repeat(100), vocab).length, 99); // aa ##a ##a ... (no "##aa")
  assert.deepEqual(wordPieces('a'.repeat(101), vocab), ['[UNK]']);
  assert.deepEqual(wordPieces('ba', vocab), ['[UNK]']); // "b" only as a continuation
});

test('basic tokenization: cleaning, whitespace, punctuation, CJK, accents', () => {
  assert.deepEqual(basicTokenize('Hello, World!'), ['hello', ',', 'world', '!']);
  assert.deepEqual(basicTokenize('Hello, World!', { doLowerCase: false }), ['Hello', ',', 'World', '!']);
  assert.deepEqual(basicTokenize('a\u0000b\u200Bc\u00A0d\te\u000Bf'), ['abc', 'd', 'ef']); // \v is a control: dropped, not a space
  assert.deepEqual(basicTokenize('5€ $5 a+b'), ['5€', '$', '5', 'a', '+', 'b']); // € is a symbol (Sc), $ and + are ASCII punctuation
  assert.deepEqual(basicTokenize('¿Qué?'), ['¿', 'que', '?']);
  assert.deepEqual(basicTokenize('¿Qué?', { doLowerCase: false }), ['¿', 'Qué', '?']);
  assert.deepEqual(basicTokenize('Qué', { doLowerCase: true, stripAccents: false }), ['qué']);
  assert.deepEqual(basicTokenize('Qué', { doLowerCase: false, stripAccents: true }), ['Que']);
  assert.deepEqual(basicTokenize('我爱NLP'), ['我', '爱', 'nlp']);
  assert.deepEqual(basicTokenize('我爱NLP', { tokenizeChineseChars: false }), ['我爱nlp']);
  assert.deepEqual(basicTokenize('한국어 日本語'), ['한국어'.normalize('NFD'), '日', '本', '語']); // Hangul: not CJK, and NFD splits it into jamo
});

test('special tokens: looked up by string; typed ones stay whole, case-sensitive, anywhere', () => {
  // [CLS] last, [PAD] absent: ids come from the vocabulary, not from BERT's usual 101/102.
  const tok = new WordPieceTokenizer(['the', '[MASK]', '[UNK]', '[SEP]', 'cat', '[', ']', 'mask', '##s', '[CLS]']);
  assert.deepEqual(tok.specialIds, { '[CLS]': 9, '[SEP]': 3, '[UNK]': 2, '[MASK]': 1 });
  assert.deepEqual(tok.encode('The [MASK] cats'), { tokens: ['[CLS]', 'the', '[MASK]', 'cat', '##s', '[SEP]'], ids: [9, 0, 1, 4, 8, 3], typeIds: [0, 0, 0, 0, 0, 0] });
  assert.deepEqual(tok.tokenize('cat[MASK]the'), ['cat', '[MASK]', 'the']);
  assert.deepEqual(tok.tokenize('[mask]'), ['[', 'mask', ']']);
  assert.deepEqual(tok.tokenize('[PAD]'), ['[', '[UNK]', ']']); // not in this vocabulary: plain text
  assert.deepEqual(tok.encode('the', 'cat'), { tokens: ['[CLS]', 'the', '[SEP]', 'cat', '[SEP]'], ids: [9, 0, 3, 4, 3], typeIds: [0, 0, 0, 1, 1] });
});

// ---- vocab.txt ----

test('fromVocabText: one token per line, id = line number; \\n, \\r\\n, \\r; a final newline adds nothing; repeats keep the last id', () => {
  const lines = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'hello', '##s'];
  for (const [what, text] of [
    ['\\n, final newline', lines.join('\n') + '\n'], ['\\n, none', lines.join('\n')],
    ['\\r\\n', lines.join('\r\n') + '\r\n'], ['\\r', lines.join('\r') + '\r'],
  ]) {
    const tok = WordPieceTokenizer.fromVocabText(text);
    assert.equal(tok.size, 7, what);
    assert.deepEqual(tok.encode('Hellos').ids, [2, 5, 6, 3], what);
  }
  const dup = WordPieceTokenizer.fromVocabText('[UNK]\n[CLS]\n[SEP]\nhi\n\nhi\n');
  assert.equal(dup.size, 6);
  assert.equal(dup.tokenToId('hi'), 5); // as Python's dict: the later line wins
  assert.equal(dup.tokenToId(''), 4); // an empty line is a token too (its id is kept)
  assert.equal(dup.idToToken(3), 'hi');
});

test('fromVocabText: empty or incomplete vocab.txt -> an Error naming the file and the missing tokens', () => {
  for (const text of ['', '\n', '\r\n\r\n']) {
    assert.throws(() => WordPieceTokenizer.fromVocabText(text), /vocab\.txt is empty/);
  }
  assert.throws(() => WordPieceTokenizer.fromVocabText('[PAD]\n[UNK]\nhello\n'), /vocab\.txt has no \[CLS\], \[SEP\] \(of 3 tokens\)/);
  assert.throws(() => WordPieceTokenizer.fromVocabText('[CLS]\n[SEP]\n'), /vocab\.txt has no \[UNK\]/);
  assert.throws(() => WordPieceTokenizer.fromVocabText(new Uint8Array(3)), TypeError);
});

test('maxLength (max_position_embeddings): a longer input throws with both numbers; no silent truncation', () => {
  const tok = new WordPieceTokenizer(VOCAB, { maxLength: 8 });
  assert.equal(tok.encode('one two three four five six').tokens.length, 8); // exactly the limit: fine
  assert.throws(() => tok.encode('one two three four five six ten'),
    { message: 'The text is 9 tokens long with [CLS] and [SEP], but this model reads at most 8 (max_position_embeddings): shorten it by 1 token.' });
  assert.throws(() => tok.encode('one two three', 'four five six'), /is 9 tokens long with \[CLS\] and \[SEP\] \(both sentences\), but this model reads at most 8/);
  assert.throws(() => new WordPieceTokenizer(VOCAB, { maxLength: 0 }), /maxLength must be a positive integer/);
  assert.throws(() => new WordPieceTokenizer(VOCAB, { doLowerCase: 'yes' }), /doLowerCase must be true or false/);
});

// ---- Options from the checkpoint's files ----

test('tokenizerOptions: tokenizer_config.json first, then a "cased" name, then HF defaults; each with its source', () => {
  const config = { max_position_embeddings: 512, _name_or_path: 'bert-base-uncased' };
  let o = tokenizerOptions(config, { do_lower_case: false, strip_accents: true, tokenize_chinese_chars: false });
  assert.deepEqual([o.doLowerCase, o.stripAccents, o.tokenizeChineseChars, o.maxLength], [false, true, false, 512]);
  assert.match(o.notes.doLowerCase, /tokenizer_config\.json: do_lower_case false/);
  assert.match(o.notes.maxLength, /config\.json: max_position_embeddings 512/);

  o = tokenizerOptions(JSON.stringify(config), null); // text is fine too; no tokenizer_config.json
  assert.deepEqual([o.doLowerCase, o.stripAccents, o.tokenizeChineseChars], [true, null, true]);
  assert.match(o.notes.doLowerCase, /default true.*no tokenizer_config\.json/);
  assert.match(o.notes.stripAccents, /follows do_lower_case/);

  for (const name of ['bert-base-cased', 'bert-base-multilingual-cased', 'my_cased_model', 'Cased']) {
    assert.equal(tokenizerOptions({ _name_or_path: name }, null).doLowerCase, false, name);
    assert.equal(tokenizerOptions({}, {}, name).doLowerCase, false, `${name} as the folder name`);
  }
  for (const name of ['bert-base-uncased', 'showcased', 'bert-tiny']) assert.equal(tokenizerOptions({ _name_or_path: name }, null).doLowerCase, true, name);
  assert.equal(tokenizerOptions({ _name_or_path: 'bert-base-cased' }, { do_lower_case: true }).doLowerCase, true); // the file wins
  assert.equal(tokenizerOptions({}, { name_or_path: 'bert-base-cased' }).doLowerCase, false);
  o = tokenizerOptions(null, null);
  assert.equal(o.maxLength, null);
  assert.match(o.notes.maxLength, /no limit/);
  assert.throws(() => tokenizerOptions('{oops', null), /config\.json is not valid JSON/);

  // The options go straight into the tokenizer (notes ignored).
  const tok = new WordPieceTokenizer(VOCAB, tokenizerOptions({ max_position_embeddings: 4 }, { do_lower_case: false }));
  assert.deepEqual(tok.tokenize('The'), ['The']);
  assert.throws(() => tok.encode('a b c'), /5 tokens long.*at most 4/);
});

// ---- The tiny checkpoints' reference ids (tests/fixtures/make_bert_fixtures.py) ----

const REFERENCE = path.join(FIXTURES, 'bert_tiny_reference.safetensors');
const TINY = ['modern', 'legacy', 'bf16'].map((f) => path.join(FIXTURES, 'bert_tiny', f));
const haveTiny = existsSync(REFERENCE) && TINY.every((d) => existsSync(path.join(d, 'vocab.txt')));
// The texts of make_bert_fixtures.py's CASES (the safetensors stores only their tokens and ids).
const TINY_CASES = { single: ['The quick brown fox jumps over the lazy dog', null], pair: ['the cat sat on the [MASK] .', 'a dog ran .'] };

test('bert_tiny {modern, legacy, bf16}: encode() reproduces the fixture\'s tokens, input_ids and token_type_ids, options from its files', { skip: haveTiny ? false : 'tests/fixtures/bert_tiny/ and bert_tiny_reference.safetensors not written yet (make_bert_fixtures.py)' }, () => {
  const { tensors, metadata } = parseSafetensors(readFileSync(REFERENCE));
  for (const dir of TINY) {
    const read = (f) => (existsSync(path.join(dir, f)) ? readFileSync(path.join(dir, f), 'utf8') : null);
    const options = tokenizerOptions(read('config.json'), read('tokenizer_config.json'), path.basename(dir));
    assert.equal(options.maxLength, 64, `${dir}: max_position_embeddings`);
    const tok = WordPieceTokenizer.fromVocabText(read('vocab.txt'), options);
    const hf = new Tokenizer(hfTokenizerJson(tok.tokens, { lowercase: options.doLowerCase, strip_accents: options.stripAccents, handle_chinese_chars: options.tokenizeChineseChars }), {});
    for (const [kind, [text, pair]] of Object.entries(TINY_CASES)) {
      const want = {
        tokens: JSON.parse(metadata[`${kind}.tokens`]),
        ids: Array.from(tensors[`${kind}.input_ids`].data, Number),
        typeIds: Array.from(tensors[`${kind}.token_type_ids`].data, Number),
      };
      assert.deepEqual(tok.encode(text, pair), want, `${dir} ${kind}`);
      assert.deepEqual(reference(hf, {}, text, pair), want, `${dir} ${kind}: tokenizers.js agrees`);
    }
  }
});
