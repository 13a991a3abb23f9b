// GPT-2's byte-level BPE tokenizer, as Hugging Face's GPT2Tokenizer does it (issue 26): text -> ids
// from vocab.json + merges.txt (or tokenizer.json). No DOM, no Node APIs: the Worker, the page and the
// CLI share it. The interface is web/tokenizers/tokenizer.js's.
//
//   1. special tokens   <|endoftext|> is cut out of the raw text first, never split (an added token)
//   2. pre-tokenize     GPT-2's pattern (below): contractions, letters, numbers, other marks, each with
//                       at most one leading space; runs of white space leave their last space to the
//                       word after them
//   3. bytes            each piece's UTF-8 bytes, each byte one printable character (bytes_to_unicode:
//                       so "Ġ" is a space, "Ċ" a newline)
//   4. BPE              merge the adjacent pair of lowest rank (merges.txt's line order), every occurrence
//                       left to right, until no pair has a rank
// Decoding joins the tokens' characters, maps them back to bytes and reads those as UTF-8; a byte that
// does not complete a character becomes U+FFFD (Python's errors="replace", TextDecoder's replacement:
// both the Unicode "maximal subpart" rule).
//
// The pattern is Python `regex`'s; its \s is Unicode's White_Space property, which JS's \s is not (JS
// adds U+FEFF and lacks U+0085), so the class is written out.

export const END_OF_TEXT = '<|endoftext|>';

const WS = '\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
export const GPT2_PATTERN = new RegExp(
  `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`, 'gu');

/** GPT-2's table: byte -> printable character (the printable Latin-1 bytes are themselves, the rest 256 + n). */
export function bytesToUnicode() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const table = new Array(256);
  for (const b of bs) table[b] = String.fromCharCode(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (table[b] === undefined) table[b] = String.fromCharCode(256 + n++);
  return table;
}

const BYTE_TO_CHAR = bytesToUnicode();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** The pre-tokenizer's pieces of `text` (no special tokens in it). */
export function pretokenize(text) {
  return text.match(GPT2_PATTERN) ?? [];
}

export class Gpt2BpeTokenizer {
  /**
   * vocab: {token: id} (vocab.json); merges: [[a, b], ...] in rank order; specials: the added tokens
   * cut out of the text first ({content: id}; <|endoftext|> from the vocabulary by default).
   */
  constructor(vocab, merges, { specials = null } = {}) {
    this.vocab = new Map(Object.entries(vocab));
    this.tokens = [];
    for (const [token, id] of this.vocab) {
      if (!Number.isInteger(id) || id < 0) throw new Error(`vocab.json: the id of ${JSON.stringify(token)} must be a whole number, got ${JSON.stringify(id)}`);
      this.tokens[id] = token;
    }
    this.ranks = new Map();
    merges.forEach(([a, b], rank) => { if (!this.ranks.has(`${a} ${b}`)) this.ranks.set(`${a} ${b}`, rank); });
    const added = specials ?? (this.vocab.has(END_OF_TEXT) ? { [END_OF_TEXT]: this.vocab.get(END_OF_TEXT) } : {});
    this.specials = new Map(Object.entries(added));
    for (const [content, id] of this.specials) { this.vocab.set(content, id); this.tokens[id] = content; }
    for (const c of BYTE_TO_CHAR) {
      if (!this.vocab.has(c)) throw new Error(`vocab.json lacks the byte token ${JSON.stringify(c)}: is it a byte-level BPE (GPT-2) vocabulary?`);
    }
    this.eosId = this.specials.get(END_OF_TEXT) ?? null;
    this.cache = new Map();
  }

  /** From vocab.json's and merges.txt's texts. */
  static fromFiles(vocabJson, mergesText) {
    let vocab;
    try {
      vocab = JSON.parse(vocabJson);
    } catch (error) {
      throw new Error(`vocab.json is not JSON (${error.message})`);
    }
    if (!vocab || typeof vocab !== 'object' || Array.isArray(vocab)) throw new Error('vocab.json must hold an object {token: id}');
    return new Gpt2BpeTokenizer(vocab, parseMerges(mergesText));
  }

  /** From tokenizer.json (the `tokenizers` library's file): its BPE model and its added tokens. */
  static fromTokenizerJson(text) {
    let json;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`tokenizer.json is not JSON (${error.message})`);
    }
    const model = json?.model;
    if (model?.type !== 'BPE' || !model.vocab || !Array.isArray(model.merges)) throw new Error('tokenizer.json: the model must be a BPE with vocab and merges');
    const merges = model.merges.map((m, i) => {
      const pair = Array.isArray(m) ? m : String(m).split(' ');
      if (pair.length !== 2) throw new Error(`tokenizer.json: merge ${i} must be two tokens, got ${JSON.stringify(m)}`);
      return pair;
    });
    const specials = {};
    for (const t of json.added_tokens ?? []) if (t?.special && typeof t.content === 'string' && Number.isInteger(t.id)) specials[t.content] = t.id;
    return new Gpt2BpeTokenizer(model.vocab, merges, { specials: Object.keys(specials).length ? specials : null });
  }

  get size() { return this.tokens.length; }

  /** A piece's byte characters -> its BPE tokens (cached: texts repeat their words). */
  bpe(word) {
    const hit = this.cache.get(word);
    if (hit) return hit;
    let parts = [...word];
    while (parts.length > 1) {
      let best = Infinity, at = -1;
      for (let k = 0; k + 1 < parts.length; k++) {
        const rank = this.ranks.get(`${parts[k]} ${parts[k + 1]}`);
        if (rank !== undefined && rank < best) { best = rank; at = k; }
      }
      if (at < 0) break;
      const [a, b] = [parts[at], parts[at + 1]];
      const merged = [];
      for (let k = 0; k < parts.length; k++) {
        if (k + 1 < parts.length && parts[k] === a && parts[k + 1] === b) { merged.push(a + b); k++; } else merged.push(parts[k]);
      }
      parts = merged;
    }
    if (this.cache.size < 100000) this.cache.set(word, parts);
    return parts;
  }

  /** text -> the vocabulary's tokens ("Ġthe"), special tokens kept whole. */
  tokenize(text) {
    const out = [];
    for (const { special, piece } of this.#segments(String(text))) {
      if (special) { out.push(piece); continue; }
      for (const word of pretokenize(piece)) {
        let chars = '';
        for (const b of encoder.encode(word)) chars += BYTE_TO_CHAR[b];
        out.push(...this.bpe(chars));
      }
    }
    return out;
  }

  // The text cut at its special tokens: [{special, piece}], in order.
  *#segments(text) {
    let at = 0;
    while (at <= text.length) {
      let next = -1, which = null;
      for (const s of this.specials.keys()) {
        const i = text.indexOf(s, at);
        if (i >= 0 && (next < 0 || i < next || (i === next && s.length > which.length))) { next = i; which = s; }
      }
      if (next < 0) { if (at < text.length) yield { special: false, piece: text.slice(at) }; return; }
      if (next > at) yield { special: false, piece: text.slice(at, next) };
      yield { special: true, piece: which };
      at = next + which.length;
    }
  }

  /** text -> {tokens ("Ġthe"), ids, texts (each token's own text, " the"; spaces as they are)}. */
  encode(text) {
    const tokens = this.tokenize(text);
    const ids = tokens.map((t) => this.vocab.get(t));
    return { tokens, ids, texts: ids.map((id) => this.tokenText(id)) };
  }

  /** A token's own text: its bytes read as UTF-8 (a piece of a character shows as U+FFFD). */
  tokenText(id) {
    const token = this.idToToken(id);
    if (this.specials.has(token)) return token;
    return decoder.decode(this.#bytes([token]));
  }

  #bytes(tokens) {
    const bytes = [];
    for (const t of tokens) for (const c of t) bytes.push(CHAR_TO_BYTE.get(c) ?? 0x3f);
    return Uint8Array.from(bytes);
  }

  /** ids -> text; special tokens are left out unless skipSpecialTokens is false (then kept as their text). */
  decode(ids, { skipSpecialTokens = true } = {}) {
    let out = '', run = [];
    for (const id of ids) {
      const token = this.idToToken(id);
      if (this.specials.has(token)) {
        out += decoder.decode(this.#bytes(run)) + (skipSpecialTokens ? '' : token);
        run = [];
      } else run.push(token);
    }
    return out + decoder.decode(this.#bytes(run));
  }

  /** The id of a token of the vocabulary; an unknown one is <|endoftext|>'s (GPT-2's unk_token). */
  tokenToId(token) { return this.vocab.get(token) ?? this.eosId; }

  idToToken(id) {
    if (!Number.isInteger(id) || id < 0 || id >= this.tokens.length || this.tokens[id] === undefined) {
      throw new RangeError(`token id ${id} is outside the vocabulary [0, ${this.tokens.length})`);
    }
    return this.tokens[id];
  }
}

/** merges.txt's text -> [[a, b], ...]: one merge a line, "#version" lines and blank lines skipped. */
export function parseMerges(text) {
  const merges = [];
  String(text).split('\n').forEach((line, i) => {
    const trimmed = line.replace(/\r$/, '');
    if (!trimmed || (i === 0 && trimmed.startsWith('#version'))) return;
    const pair = trimmed.split(' ');
    if (pair.length !== 2) throw new Error(`merges.txt line ${i + 1} must be two tokens separated by a space, got ${JSON.stringify(trimmed.slice(0, 60))}`);
    merges.push(pair);
  });
  return merges;
}
