// Every tokenizer.json through @huggingface/tokenizers (web/tokenizers/hf_tokenizer.js, issue 37 item 2)
// and chat templates through @huggingface/jinja (web/tokenizers/chat_template.js, item 4), against the
// plain Python references of tests/fixtures/make_tokenizer_fixtures.py: tokenizer_cases.json's ids for
// 300 strings in each style (GPT-2's byte-level BPE, Llama 3's and Qwen 2's Split patterns, Qwen 2's NFC,
// Llama 2's SentencePiece-style BPE with byte fallback, WordPiece), and chat_cases.json's templates
// (SmolLM2's and Qwen2.5's ChatML, Llama 3's) as Python's jinja2 renders them the way transformers does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { FIXTURES } from './support.mjs';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';
import { ChatError, chatPrompt, renderChat } from '../../web/tokenizers/chat_template.js';
import { checkTokenizer } from '../../web/tokenizers/tokenizer.js';
import { idsAsText, tokenAsText } from '../../web/labs/visible_text.js';

const CASES = JSON.parse(readFileSync(path.join(FIXTURES, 'tokenizer_cases.json'), 'utf8')).styles;
const CHAT = JSON.parse(readFileSync(path.join(FIXTURES, 'chat_cases.json'), 'utf8'));
const read = (folder, name) => {
  const file = path.join(folder, name);
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
};
const open = (folder) => checkTokenizer(HfTokenizer.fromFiles({ tokenizerJson: read(folder, 'tokenizer.json'),
  tokenizerConfig: read(folder, 'tokenizer_config.json'), generationConfig: read(folder, 'generation_config.json') }), folder);
const style = (name) => open(path.join(FIXTURES, 'tokenizers', name));

for (const name of ['gpt2', 'llama3', 'qwen2', 'llama2', 'wordpiece']) {
  test(`tokenizer.json [${name}]: ids equal the Python reference and the library's own on ${CASES[name].strings.length} strings`, () => {
    const { strings, ids } = CASES[name];
    assert.ok(strings.length >= 300);
    const ours = style(name);
    const folder = path.join(FIXTURES, 'tokenizers', name);
    const library = new Tokenizer(JSON.parse(read(folder, 'tokenizer.json')), JSON.parse(read(folder, 'tokenizer_config.json')));
    const differ = [];
    strings.forEach((text, i) => {
      const got = ours.encode(text).ids;
      if (JSON.stringify(got) !== JSON.stringify(ids[i]) || JSON.stringify(library.encode(text).ids) !== JSON.stringify(got)) {
        differ.push({ text, ours: got.map((id) => ours.idToToken(id)), python: ids[i].map((id) => ours.idToToken(id)) });
      }
    });
    assert.deepEqual(differ.slice(0, 3), [], `${differ.length} of ${strings.length} strings differ`);
  });
}

test('the strings reach each style\'s hard parts: byte pieces, BOS first, digits in threes, NFC, [UNK], special tokens whole', () => {
  const llama2 = style('llama2');
  const emoji = llama2.encode('😀');
  assert.deepEqual(emoji.tokens, ['<s>', '▁', '<0xF0>', '<0x9F>', '<0x98>', '<0x80>'], 'an emoji the vocabulary lacks: its four bytes');
  assert.equal(llama2.decode(emoji.ids), '😀');
  assert.deepEqual(emoji.ids.map((id) => tokenAsText(llama2, id)), ['<s>', ' ', '<0xF0>', '<0x9F>', '<0x98>', '<0x80>'], 'shown as bytes, never U+FFFD');
  assert.equal(idsAsText(llama2, emoji.ids.slice(1)), ' 😀', 'read together, the character');
  assert.ok(CASES.llama2.ids.flat().some((id) => /^<0x/.test(llama2.idToToken(id))));

  const llama3 = style('llama3');
  assert.equal(llama3.encode('x').tokens[0], '<|begin_of_text|>', 'the post-processor adds BOS');
  assert.equal(llama3.encode('x', { addSpecialTokens: false }).tokens[0], 'x');
  assert.deepEqual(llama3.hf.pre_tokenizer.pre_tokenize_text('1234567'), ['123', '456', '7'], 'Llama 3 splits digits in threes');
  assert.deepEqual(style('qwen2').hf.pre_tokenizer.pre_tokenize_text('1234'), ['1', '2', '3', '4'], 'Qwen 2 one by one');
  const qwen = style('qwen2');
  assert.deepEqual(qwen.encode('cafe\u0301').ids, qwen.encode('caf\u00e9').ids, 'NFC: e + combining acute = é');
  assert.deepEqual(qwen.encode('a<|im_start|>b').tokens, ['a', '<|im_start|>', 'b'], 'a special token is never split');

  const wp = style('wordpiece');
  assert.deepEqual(wp.encode('Hello ☃').tokens, ['[CLS]', 'h', '##el', '##l', '##o', '[UNK]', '[SEP]'], 'lower-cased, ## pieces, [UNK] for a word not covered');
  assert.deepEqual(wp.encode('The fox').tokens, ['[CLS]', 'the', 'fox', '[SEP]']);

  // A byte-level token holding part of a character shows its bytes (web/labs/visible_text.js).
  const gpt2 = style('gpt2');
  const dash = gpt2.encode('—', { addSpecialTokens: false });
  assert.deepEqual(dash.ids.map((id) => tokenAsText(gpt2, id)), ['<0xE2>', '<0x80>', '<0x94>']);
  assert.equal(idsAsText(gpt2, dash.ids), '—');
});

test('BOS and EOS as tokenizer_config.json and generation_config.json say: several EOS ids, none where none is named', () => {
  const llama3 = style('llama3');
  const id = (t) => llama3.tokenToId(t);
  assert.equal(llama3.bosId, id('<|begin_of_text|>'));
  assert.deepEqual(llama3.eosIds, [id('<|end_of_text|>'), id('<|eot_id|>')], 'generation_config.json\'s list, then tokenizer_config.json\'s eos_token (already there)');
  const qwen = style('qwen2');
  assert.equal(qwen.bosId, null, 'Qwen 2 has no BOS');
  assert.deepEqual(qwen.eosIds, [qwen.tokenToId('<|im_end|>')]);
  const llama2 = style('llama2');
  assert.deepEqual([llama2.bosId, llama2.eosIds], [1, [2]]);
  const chat = open(path.join(FIXTURES, 'gpt2_tiny', 'chat'));
  assert.deepEqual(chat.eosIds, [chat.tokenToId('<|im_end|>'), chat.tokenToId('<|endoftext|>')]);
  // GPT-2's vocab.json + merges.txt, no configs: <|endoftext|>, as GPT2Tokenizer.
  const bare = HfTokenizer.fromGpt2Files(read(path.join(FIXTURES, 'gpt2_tiny', 'hub'), 'vocab.json'), read(path.join(FIXTURES, 'gpt2_tiny', 'hub'), 'merges.txt'));
  assert.deepEqual(bare.eosIds, [406]);
});

test('broken tokenizer files are named: not JSON, no model, a bad tokenizer_config.json', () => {
  assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: '{' }), /^Error: tokenizer.json is not JSON/);
  assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: '[]' }), /^Error: tokenizer.json must hold an object with a "model"$/);
  const json = read(path.join(FIXTURES, 'tokenizers', 'gpt2'), 'tokenizer.json');
  assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: json, tokenizerConfig: 'x' }), /^Error: tokenizer_config.json is not JSON/);
  assert.throws(() => HfTokenizer.fromFiles({ tokenizerJson: json, generationConfig: '7' }), /^Error: generation_config.json must hold an object$/);
  const tok = HfTokenizer.fromFiles({ tokenizerJson: json });
  assert.throws(() => tok.decode([0, tok.size]), new RegExp(`token id ${tok.size} is outside the vocabulary`));
  assert.equal(tok.decode([]), '');
});

test(`chat templates: @huggingface/jinja renders ${CHAT.cases.length} chats as transformers (Python jinja2) does: SmolLM2, Qwen2.5, Llama 3`, () => {
  const differ = [];
  for (const c of CHAT.cases) {
    const t = CHAT.templates[c.template];
    const text = renderChat(t.chat_template, c.messages, { addGenerationPrompt: c.add_generation_prompt, specialTokens: t.special_tokens });
    if (text !== c.text) differ.push({ template: c.template, ours: text, python: c.text });
  }
  assert.deepEqual(differ.slice(0, 2), []);
  assert.ok(CHAT.cases.some((c) => c.text.endsWith('<|im_start|>assistant\n')) && CHAT.cases.some((c) => c.text.startsWith('<|begin_of_text|>')));
});

test('chatPrompt: the template\'s own tokens begin the prompt, tokenized without a second BOS; no template or a broken one is named', () => {
  const chat = open(path.join(FIXTURES, 'gpt2_tiny', 'chat'));
  const prompt = chatPrompt(chat, 'What is the capital of France?');
  assert.equal(prompt.text, '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n'
    + '<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n');
  assert.equal(prompt.tokens[0], '<|im_start|>');
  assert.equal(prompt.tokens.filter((t) => t === '<|im_start|>').length, 3);
  assert.equal(prompt.tokens.at(-1), 'Ċ');
  const llama3 = style('llama3');
  const l = chatPrompt(llama3, 'Hi');
  assert.equal(l.tokens.filter((t) => t === '<|begin_of_text|>').length, 1, 'the template writes BOS; encode adds none');
  assert.throws(() => chatPrompt(style('gpt2'), 'Hi'), (e) => e instanceof ChatError && /this model has no chat template \(tokenizer_config.json's chat_template\)/.test(e.message));
  assert.throws(() => renderChat('{% for %}', []), /^ChatError: tokenizer_config.json's chat_template cannot be read/);
  assert.throws(() => renderChat('{{ raise_exception("only user and assistant roles") }}', []), /refused the chat: only user and assistant roles/);
});
