// The tokenizers' one interface (web/tokenizers/tokenizer.js): every kind's tokenizer, as its opener
// makes it from the fixture folders, has it; encode and decode agree with each other; a tokenizer that
// lacks part of it is refused by name. WordPiece's decode follows HF's BertTokenizer.decode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { checkTokenizer } from '../../web/tokenizers/tokenizer.js';
import { WordPieceTokenizer } from '../../web/tokenizers/wordpiece.js';
import { MarianTokenizer } from '../../web/tokenizers/sentencepiece.js';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';

const bertFolder = path.join(FIXTURES, 'bert_tiny', 'modern');
const marianFolder = path.join(FIXTURES, 'marian_tiny');
const bert = () => WordPieceTokenizer.fromVocabText(readFileSync(path.join(bertFolder, 'vocab.txt'), 'utf8'), { doLowerCase: true });
const marian = () => MarianTokenizer.fromFiles(readFileSync(path.join(marianFolder, 'source.spm')), readFileSync(path.join(marianFolder, 'target.spm')),
  readFileSync(path.join(marianFolder, 'vocab.json'), 'utf8'));

// The decoders' tokenizers: @huggingface/tokenizers reading GPT-2's vocab.json + merges.txt, and a Llama 3 style tokenizer.json.
const gpt2Folder = path.join(FIXTURES, 'gpt2_tiny', 'hub');
const gpt2 = () => HfTokenizer.fromGpt2Files(readFileSync(path.join(gpt2Folder, 'vocab.json'), 'utf8'), readFileSync(path.join(gpt2Folder, 'merges.txt'), 'utf8'));
const llama3 = () => HfTokenizer.fromFiles({ tokenizerJson: readFileSync(path.join(FIXTURES, 'tokenizers', 'llama3', 'tokenizer.json'), 'utf8') });

test('WordPiece, SentencePiece and the library\'s tokenizers have the one interface: size, encode -> {tokens, ids}, decode, tokenToId, idToToken', () => {
  for (const [name, tokenizer, text] of [['BERT', bert(), 'the cat sat on the mat .'], ['Marian', marian(), 'the cat sat on the mat.'],
    ['GPT-2', gpt2(), 'the cat sat on the mat.'], ['Llama 3 style', llama3(), 'the cat sat on the mat.']]) {
    checkTokenizer(tokenizer, name);
    const { tokens, ids } = tokenizer.encode(text);
    assert.equal(tokens.length, ids.length, name);
    assert.deepEqual(ids, tokens.map((t) => tokenizer.tokenToId(t)), `${name}: ids are the tokens' ids`);
    assert.deepEqual(ids.map((id) => tokenizer.idToToken(id)), tokens, `${name}: and back`);
    assert.ok(ids.every((id) => Number.isInteger(id) && id >= 0 && id < tokenizer.size), `${name}: ids inside the vocabulary`);
    assert.equal(typeof tokenizer.decode(ids), 'string');
  }
});

test('WordPiece decode: specials skipped, ## pieces glued, HF\'s clean-up of spaces before punctuation and contractions', () => {
  const t = new WordPieceTokenizer(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'play', '##ing', 'do', 'n', "'", 't', '.', 'it', 's', 'fun', '?']);
  const ids = (tokens) => tokens.map((token) => t.tokenToId(token));
  // "is" is not in this vocabulary: [UNK], a special token, skipped as HF skips it.
  assert.equal(t.decode(ids(['[CLS]', 'play', '##ing', 'is', 'fun', '.', '[SEP]'])), 'playing fun.');
  assert.equal(t.decode(ids(['do', 'n', "'", 't', 'play', '?'])), "don't play?");
  assert.equal(t.decode(ids(['it', "'", 's', 'fun'])), "it's fun");
  assert.equal(t.decode(ids(['[CLS]', 'fun', '[MASK]', '[SEP]']), { skipSpecialTokens: false }), '[CLS] fun [MASK] [SEP]');
  // The round trip on the fixture's vocabulary: lower-cased, the [MASK] dropped.
  const b = bert();
  assert.equal(b.decode(b.encode('The cat sat on the [MASK] .').ids), 'the cat sat on the.');
  assert.equal(b.encode('a dog', { pair: 'ran' }).typeIds.at(-1), 1, 'encode(text, {pair}) as encode(text, pair)');
});

test('a tokenizer that lacks part of the interface is refused by name', () => {
  assert.throws(() => checkTokenizer({ encode() {}, size: 3 }, 'GPT-2'), { message: 'the tokenizer of GPT-2 lacks decode, tokenToId, idToToken (web/tokenizers/tokenizer.js)' });
  assert.throws(() => checkTokenizer(null), /lacks encode, decode, tokenToId, idToToken, size/);
});
