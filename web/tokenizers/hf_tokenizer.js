// Every tokenizer.json, read by the library written for it (issue 37, item 2): @huggingface/tokenizers,
// the JavaScript implementation of Hugging Face's `tokenizers` that transformers.js uses. This file only
// adapts it to the one interface of web/tokenizers/tokenizer.js and adds what a lab shows of a token:
//
//   styles read     byte-level BPE (GPT-2's, Llama 3's and Qwen 2's Split patterns, Qwen 2's NFC),
//                   SentencePiece-style BPE with byte fallback (Llama 2, TinyLlama), WordPiece, Unigram:
//                   whatever the file's normalizer, pre-tokenizer, model, post-processor and decoder say
//   special tokens  added_tokens cut out first; BOS/EOS added as the post-processor says (encode's
//                   addSpecialTokens, as transformers' add_special_tokens); bosId and eosIds as
//                   tokenizer_config.json and generation_config.json say (several EOS ids allowed)
//   token bytes     tokenBytes(id): a byte-level token's bytes (GPT-2's byte table), a byte-fallback
//                   piece's one byte (<0xE2>), a SentencePiece piece's text with "▁" as a space; null
//                   for a special token. web/labs/visible_text.js shows a part of a character as <0xE2>.
//
// The library is imported by a relative path into node_modules: public/build/ mirrors the repository's
// layout and scripts/build.sh copies the library's file there, so the page (offline too: the service
// worker's manifest lists it) and the CLI import the same file. No DOM, no Node API.
import { Tokenizer } from '../../node_modules/@huggingface/tokenizers/dist/tokenizers.mjs';
import { bytesToUnicode, checkBpe, gpt2TokenizerJson } from './gpt2_bpe.js';
import { PatternError, PROBE_TEXTS, watchPatterns } from './regex_guard.js';

const CHAR_TO_BYTE = new Map(bytesToUnicode().map((c, b) => [c, b]));
const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/** A token written in tokenizer_config.json: "<s>" or {"content": "<s>", ...} (AddedToken's form). */
const tokenContent = (value) => (typeof value === 'string' ? value : typeof value?.content === 'string' ? value.content : null);

/** The decoders a tokenizer.json's decoder is made of (a Sequence's, in order; none for null). */
function decoderTypes(decoder) {
  if (!decoder) return [];
  return decoder.type === 'Sequence' ? (decoder.decoders ?? []).flatMap(decoderTypes) : [decoder.type];
}

// ---- tokenizer.json checked before the library sees it (issue 48): an added token's id of 2^32 - 2 made
// the library walk every id up to it (a hang); 32 Replace normalizers that each double the text reached
// 3.6 GB; 3.3 million vocabulary entries took 19 s and 2.1 GB to parse before config.json's vocab_size
// refused them. The largest real files: Gemma's 256,000 entries in 33 MB; Llama 3's normalizer is none,
// Llama 2's two steps.
export const TOKENIZER_LIMITS = { vocab: 1 << 20, bytesPerToken: 400, chain: 16, growth: 8 };

/** A tokenizer.json's text length against config.json's vocab_size, before it is parsed: '' or why not. */
function sizeProblem(text, vocabSize, file) {
  if (!Number.isInteger(vocabSize) || vocabSize <= 0) return '';
  const most = vocabSize * TOKENIZER_LIMITS.bytesPerToken + (4 << 20);
  return text.length > most
    ? `${file} is ${text.length.toLocaleString('en')} characters long: for config.json's vocab_size of `
      + `${vocabSize.toLocaleString('en')} a tokenizer is at most ${most.toLocaleString('en')} `
      + `(${TOKENIZER_LIMITS.bytesPerToken} a token and 4 MB)`
    : '';
}

/** The steps of a normalizer or pre-tokenizer, a Sequence's flattened; or a problem naming the field. */
function chainSteps(part, field, file) {
  const steps = [];
  const walk = (p, depth) => {
    if (!p || typeof p !== 'object') return;
    if (depth > 4) throw new Error(`${file}: its ${field} nests Sequences more than 4 deep`);
    const inner = p.type === 'Sequence' ? (field === 'normalizer' ? p.normalizers : p.pretokenizers) : null;
    if (Array.isArray(inner)) inner.forEach((q) => walk(q, depth + 1));
    else steps.push(p);
    if (steps.length > TOKENIZER_LIMITS.chain) throw new Error(`${file}: its ${field} has more than `
      + `${TOKENIZER_LIMITS.chain} steps`);
  };
  walk(part, 0);
  return steps;
}

/**
 * What a tokenizer.json would make the library do without bound, named by file and field: a vocabulary
 * larger than 1,048,576 entries or than config.json's vocab_size allows, an added token's id past the
 * vocabulary, normalizer or pre-tokenizer chains longer than 16 steps, or Replace steps that together
 * could make the text more than 8 times longer. Throws an Error; returns nothing.
 */
export function checkTokenizerJson(json, { file = 'tokenizer.json', vocabSize = null } = {}) {
  const vocab = json.model?.vocab;
  const entries = Array.isArray(vocab) ? vocab.length : vocab && typeof vocab === 'object' ? Object.keys(vocab).length : 0;
  const added = Array.isArray(json.added_tokens) ? json.added_tokens : [];
  const bound = Math.max(Number.isInteger(vocabSize) ? vocabSize : 0, entries + added.length);
  if (entries > TOKENIZER_LIMITS.vocab) throw new Error(`${file}: its model.vocab has ${entries.toLocaleString('en')} `
    + `entries: at most ${TOKENIZER_LIMITS.vocab.toLocaleString('en')} are read`);
  if (Number.isInteger(vocabSize) && vocabSize > 0 && entries > vocabSize) {
    throw new Error(`${file}: its model.vocab has ${entries.toLocaleString('en')} entries but config.json's vocab_size `
      + `is ${vocabSize.toLocaleString('en')}: they belong to different models`);
  }
  for (const [i, t] of added.entries()) {
    if (!Number.isInteger(t?.id) || t.id < 0 || t.id >= bound) {
      throw new Error(`${file}: added_tokens[${i}]'s id ${JSON.stringify(t?.id)?.slice(0, 30)} is not a token id of `
        + `this vocabulary (0 to ${(bound - 1).toLocaleString('en')})`);
    }
  }
  chainSteps(json.pre_tokenizer, 'pre_tokenizer', file);
  let growth = 1;
  for (const step of chainSteps(json.normalizer, 'normalizer', file)) {
    if (step.type !== 'Replace') continue;
    const from = step.pattern?.String ?? step.pattern?.Regex ?? '';
    const to = typeof step.content === 'string' ? step.content : '';
    growth *= Math.max(1, [...to].length / Math.max(1, step.pattern?.String !== undefined ? [...from].length : 1));
    if (growth > TOKENIZER_LIMITS.growth) {
      throw new Error(`${file}: its normalizer's Replace steps could make a text more than `
        + `${TOKENIZER_LIMITS.growth} times longer`);
    }
  }
}

/** A tokenizer.json's text, parsed, or an Error naming the file. vocabSize: config.json's, checked first. */
export function parseTokenizerJson(source, file = 'tokenizer.json', vocabSize = null) {
  let json = source;
  if (typeof source === 'string') {
    const tooLong = sizeProblem(source, vocabSize, file);
    if (tooLong) throw new Error(tooLong);
    try {
      json = JSON.parse(source);
    } catch (error) {
      throw new Error(`${file} is not JSON (${error.message})`);
    }
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file} must hold an object with a "model"`);
  if (!json.model || typeof json.model !== 'object') throw new Error(`${file} has no "model": is it a `
    + 'tokenizers library file?');
  checkTokenizerJson(json, { file, vocabSize });
  return json;
}

/**
 * A small JSON file's text (tokenizer_config.json, generation_config.json) -> object; null for none; an
 * Error naming it.
 */
export function parseConfigJson(source, file) {
  if (source == null) return null;
  if (typeof source === 'object') return source;
  let json;
  try {
    json = JSON.parse(source);
  } catch (error) {
    throw new Error(`${file} is not JSON (${error.message})`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file} must hold an object`);
  return json;
}

export class HfTokenizer {
  /**
   * json: tokenizer.json's object; tokenizerConfig: tokenizer_config.json's (or null);
   * generationConfig: generation_config.json's (or null); modelConfig: config.json's (or null: its
   * bos_token_id and eos_token_id are the last word on BOS/EOS, as generate() falls back to them).
   */
  constructor(json, { tokenizerConfig = null, generationConfig = null, modelConfig = null,
    file = 'tokenizer.json' } = {}) {
    // The library asks for all five parts; a file may leave out those it has none of.
    const full = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null,
      added_tokens: [], ...json };
    if (full.model.type === 'BPE') {
      // Checked as the Rust library's builder does, so a broken file is named when the folder opens.
      const merges = checkBpe(full.model.vocab, full.model.merges ?? [],
        { files: { vocab: `${file} (model.vocab)`, merges: `${file} (model.merges)` } });
      full.model = { ...full.model, merges };
    }
    try {
      this.hf = new Tokenizer(full, tokenizerConfig ?? {});
    } catch (error) {
      throw new Error(`${file}: ${error.message}`);
    }
    this.file = file;
    this.config = tokenizerConfig ?? {};
    this.vocab = this.hf.get_vocab(true);
    this.tokens = [];
    for (const [token, id] of this.vocab) this.tokens[id] = token;
    this.specials = new Map();
    for (const t of full.added_tokens ?? []) if (t?.special && typeof t.content === 'string' && Number.isInteger(t.id)) this.specials.set(t.content, t.id);
    const decoders = decoderTypes(full.decoder);
    // What a token's characters are: bytes through GPT-2's table, or text with <0xNN> byte pieces.
    this.byteLevel = decoders.includes('ByteLevel');
    this.byteFallback = Boolean(full.model.byte_fallback) || decoders.includes('ByteFallback');
    this.metaspace = decoders.includes('Metaspace') || (decoders.includes('Replace') && full.model.type !== 'WordPiece');

    const idOf = (value) => {
      const content = tokenContent(value);
      return content === null ? null : this.vocab.get(content) ?? null;
    };
    // A file's end-of-text or start id(s): a number or a list, each a token id; anything else is named by
    // its file and field (it reached the module as "eosIds[0] must be a token id": issue 48).
    const ids = (value, where) => {
      const list = Array.isArray(value) ? value : value == null ? [] : [value];
      for (const id of list) {
        if (!Number.isInteger(id) || id < 0 || id >= 2 ** 31) throw new Error(`${where} holds `
          + `${JSON.stringify(id)?.slice(0, 30)}, not a token id (a whole number 0 or more)`);
      }
      return list;
    };
    this.bosId = idOf(this.config.bos_token) ?? ids(generationConfig?.bos_token_id,
      'generation_config.json\'s bos_token_id')[0]
      ?? ids(modelConfig?.bos_token_id, 'config.json\'s bos_token_id')[0] ?? null;
    // generate() stops at any of generation_config.json's eos_token_id (a number or a list), which
    // transformers takes over config.json's; tokenizer_config.json's eos_token joins them (a chat
    // template's end of turn, <|im_end|>, is often only there). GPT-2's files name none: <|endoftext|>.
    const eos = [...ids(generationConfig?.eos_token_id, 'generation_config.json\'s eos_token_id')];
    if (!eos.length) eos.push(...ids(modelConfig?.eos_token_id, 'config.json\'s eos_token_id'));
    const configEos = idOf(this.config.eos_token) ?? (tokenizerConfig ? null : this.vocab.get('<|endoftext|>') ?? null);
    if (configEos !== null) eos.push(configEos);
    this.eosIds = [...new Set(eos)];
    this.eosId = this.eosIds[0] ?? null;
    this.unkId = idOf(this.config.unk_token) ?? (typeof full.model.unk_token === 'string' ? this.vocab.get(full.model.unk_token) ?? null : null);
    // A chat template (issue 37, item 4): one string, or a list of {name, template} where "default" is it.
    this.chatTemplate = pickChatTemplate(this.config.chat_template);
  }

  /**
   * From the files' texts (or parsed objects): tokenizer.json, and tokenizer_config.json /
   * generation_config.json / config.json where there.
   */
  static fromFiles({ tokenizerJson, tokenizerConfig = null, generationConfig = null, modelConfig = null }) {
    const model = parseConfigJson(modelConfig, 'config.json');
    const vocabSize = Number.isInteger(model?.vocab_size) ? model.vocab_size : null;
    return new HfTokenizer(parseTokenizerJson(tokenizerJson, 'tokenizer.json', vocabSize), {
      tokenizerConfig: parseConfigJson(tokenizerConfig, 'tokenizer_config.json'),
      generationConfig: parseConfigJson(generationConfig, 'generation_config.json'),
      modelConfig: model,
    });
  }

  /**
   * Puts the file's own regular expressions (a Split's, a Replace's "Regex") under a deadline, each
   * probed once now (web/tokenizers/regex_guard.js): a pattern that backtracks without bound is refused
   * here, naming its field, before any text of the user's reaches it. -> this.
   */
  async watchPatterns() {
    this.watchedPatterns = await watchPatterns(this.hf, this.file);
    // A sentence through every part, so a part the library cannot run (a post-processor whose special
    // token has no id: found by tests/node/fuzz_tokenizer_json.test.mjs) is named now, not at a text.
    const { ids } = this.encode(PROBE_TEXTS[0]);
    if (ids.length) this.decode(ids);
    return this;
  }

  /** GPT-2's vocab.json and merges.txt (a folder without tokenizer.json), as the library's BPE. */
  static fromGpt2Files(vocabJson, mergesText, options = {}) {
    return new HfTokenizer(gpt2TokenizerJson(vocabJson, mergesText), { ...options, file: 'vocab.json and merges.txt' });
  }

  get size() { return this.tokens.length; }

  /**
   * text -> {tokens, ids, texts (each token's own text)}; addSpecialTokens as transformers'
   * add_special_tokens (BOS/EOS by the post-processor).
   */
  encode(text, { addSpecialTokens = true } = {}) {
    return this.named(() => {
      const { ids, tokens } = this.hf.encode(String(text), { add_special_tokens: addSpecialTokens });
      return { tokens, ids, texts: ids.map((id) => this.tokenText(id)) };
    });
  }

  /**
   * f() with a failure of the library's named by the file it read: a part it cannot run is the file's
   * problem ("Cannot use 'in' operator" alone names nothing). A watched pattern's refusal already says it.
   */
  named(f) {
    try {
      return f();
    } catch (error) {
      if (error instanceof PatternError) throw error;
      throw new Error(`${this.file}: the tokenizers library cannot tokenize with it (${error?.message ?? error})`);
    }
  }

  /** ids -> text, as the library's decode (special tokens left out unless skipSpecialTokens is false). */
  decode(ids, { skipSpecialTokens = true } = {}) {
    for (const id of ids) this.idToToken(id);  // an id outside the vocabulary is named, not decoded as ""
    if (ids.length === 0) return '';  // the library refuses an empty list
    // transformers cleans up spaces before punctuation (" 's" -> "'s") only where tokenizer_config.json
    // asks (clean_up_tokenization_spaces); the library's default is to clean, which changes the text.
    return this.named(() => this.hf.decode(ids,
      { skip_special_tokens: skipSpecialTokens,
        clean_up_tokenization_spaces: this.config.clean_up_tokenization_spaces ?? false }));
  }

  /** The id of a token (an unknown one: the unknown token's id, else the first EOS, as GPT-2's unk_token). */
  tokenToId(token) { return this.vocab.get(token) ?? this.unkId ?? this.eosId; }

  idToToken(id) {
    if (!Number.isInteger(id) || id < 0 || id >= this.tokens.length || this.tokens[id] === undefined) {
      throw new RangeError(`token id ${id} is outside the vocabulary [0, ${this.tokens.length})`);
    }
    return this.tokens[id];
  }

  isSpecial(id) { return this.specials.has(this.idToToken(id)); }

  /**
   * A token's own bytes (Uint8Array), or null for a special token or a WordPiece piece (their text is
   * what they show): byte-level tokens through GPT-2's byte table; <0xE2> byte pieces as that byte;
   * SentencePiece pieces as their text with "▁" a space.
   */
  tokenBytes(id) {
    const token = this.idToToken(id);
    if (this.specials.has(token)) return null;
    if (this.byteLevel) return Uint8Array.from([...token].map((c) => CHAR_TO_BYTE.get(c) ?? 0x3f));
    const byte = this.byteFallback ? BYTE_PIECE.exec(token) : null;
    if (byte) return Uint8Array.of(parseInt(byte[1], 16));
    if (this.metaspace) return utf8.encode(token.replace(/▁/g, ' '));
    return null;
  }

  /** A token's own text: its bytes read as UTF-8 (a piece of a character shows as U+FFFD), else the token. */
  tokenText(id) {
    const bytes = this.tokenBytes(id);
    return bytes ? text.decode(bytes) : this.idToToken(id);
  }
}

/** tokenizer_config.json's chat_template: a string, or [{name, template}] (the "default" one), or null. */
export function pickChatTemplate(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.find((t) => t?.name === 'default')?.template ?? null;
  return null;
}
