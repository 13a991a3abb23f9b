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
// A token or merge as a message shows it: quoted, on one line, at most about 40 characters.
const show = (value) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 42 ? text : `${text.slice(0, 40)}…"`;
};
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
  constructor(vocab, merges, { specials = null, files = { vocab: 'vocab.json', merges: 'merges.txt' } } = {}) {
    this.vocab = new Map(Object.entries(vocab));
    this.tokens = [];
    // Checked when the folder opens, so that a broken file is named there and not met as an id without a
    // token in the middle of writing. `files` names them as the user has them (vocab.json and merges.txt,
    // or tokenizer.json).
    for (const [token, id] of this.vocab) {
      if (!Number.isInteger(id) || id < 0) throw new Error(`${files.vocab}: the id of ${show(token)} must be a whole number, got ${show(id)}`);
      if (this.tokens[id] !== undefined) throw new Error(`${files.vocab}: ${show(this.tokens[id])} and ${show(token)} have the same id ${id}: each token needs its own`);
      this.tokens[id] = token;
    }
    for (const c of BYTE_TO_CHAR) {
      if (!this.vocab.has(c)) throw new Error(`${files.vocab} lacks the byte token ${JSON.stringify(c)}: is it a byte-level BPE (GPT-2) vocabulary?`);
    }
    this.ranks = new Map();
    // Each merge's two tokens and what they make must be in the vocabulary, as the tokenizers library's
    // BPE builder requires (MergeTokenOutOfVocabulary): a merge to a token without an id would write ids
    // that are not the model's.
    merges.forEach(([a, b], rank) => {
      for (const token of [a, b, a + b]) {
        if (!this.vocab.has(token)) throw new Error(`${files.merges}: merge ${rank + 1} (${show(`${a} ${b}`)}) needs the token ${show(token)}, which ${files.vocab} lacks`);
      }
      if (!this.ranks.has(`${a} ${b}`)) this.ranks.set(`${a} ${b}`, rank);
    });
    const added = specials ?? (this.vocab.has(END_OF_TEXT) ? { [END_OF_TEXT]: this.vocab.get(END_OF_TEXT) } : {});
    this.specials = new Map(Object.entries(added));
    for (const [content, id] of this.specials) { this.vocab.set(content, id); this.tokens[id] = content; }
    this.eosId = this.specials.get(END_OF_TEXT) ?? null;
    this.cache = new Map();
    this.work = 0;
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
    return new Gpt2BpeTokenizer(model.vocab, merges, { specials: Object.keys(specials).length ? specials : null,
      files: { vocab: 'tokenizer.json (model.vocab)', merges: 'tokenizer.json (model.merges)' } });
  }

  get size() { return this.tokens.length; }

  /**
   * A piece's byte characters -> its BPE tokens (cached: texts repeat their words).
   *
   * GPT2Tokenizer's rule: merge every occurrence, left to right, of the adjacent pair of lowest rank, then
   * look again. Rescanning the whole piece for each merge is quadratic (a 1 MB run of letters took 71 s),
   * so the pairs wait in a heap ordered by (rank, position) on a linked list of symbols: each merge costs
   * O(log n) and adds at most two pairs, O(n log n) in all, with no recursion and no spread. One round
   * takes every pair of the lowest rank before merging any (the pass of the plain rule: a pair that a
   * merge of this round forms waits for the next round), and merges them left to right, skipping one
   * that an earlier merge of the round took a symbol of (the plain rule's "aaa" -> "aa a").
   * `this.work` counts heap pushes and pops (tests bound it by the input's size).
   */
  bpe(word) {
    const hit = this.cache.get(word);
    if (hit) return hit;
    const sym = [...word];
    const n = sym.length;
    const next = new Int32Array(n), prev = new Int32Array(n);
    for (let i = 0; i < n; i++) { next[i] = i + 1 < n ? i + 1 : -1; prev[i] = i - 1; }
    const heap = new PairHeap();
    // A pair is still there when both symbols are as long as they were when it was pushed (a symbol only
    // grows, by taking its right neighbour) and the right one still follows the left.
    const push = (i) => {
      const j = next[i];
      if (i < 0 || j < 0) return;
      const rank = this.ranks.get(`${sym[i]} ${sym[j]}`);
      if (rank === undefined) return;
      heap.push(rank, i, j, sym[i].length, sym[j].length);
      this.work++;
    };
    const current = (e) => sym[e.i] !== null && next[e.i] === e.j && sym[e.j] !== null && sym[e.i].length === e.leftLength && sym[e.j].length === e.rightLength;
    for (let i = 0; i + 1 < n; i++) push(i);
    const round = [];
    while (heap.size > 0) {
      const rank = heap.top().rank;
      round.length = 0;
      while (heap.size > 0 && heap.top().rank === rank) { round.push(heap.pop()); this.work++; }
      for (const e of round) {  // in position order: the heap's tie-break
        if (!current(e)) continue;
        const { i, j } = e;
        sym[i] += sym[j];
        sym[j] = null;
        next[i] = next[j];
        if (next[j] >= 0) prev[next[j]] = i;
        push(prev[i]);
        push(i);
      }
    }
    const parts = [];
    for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]) parts.push(sym[i]);  // node 0 is never merged away
    // Texts repeat their words, not their megabyte runs: long pieces are not kept.
    if (this.cache.size < 100000 && n <= 256) this.cache.set(word, parts);
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
        for (const token of this.bpe(chars)) out.push(token);  // no spread: a piece can be 100,000s of tokens
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

  /**
   * A token's own bytes (Uint8Array), or null for a special token (its text is its name): what a figure
   * shows of a token that holds part of a character (web/labs/visible_text.js: <0xE2>, not "�").
   */
  tokenBytes(id) {
    const token = this.idToToken(id);
    return this.specials.has(token) ? null : this.#bytes([token]);
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

/**
 * The BPE's waiting pairs: a binary min-heap on (rank, left position), so that a round takes the pairs
 * of one rank left to right.
 */
class PairHeap {
  constructor() { this.items = []; }

  get size() { return this.items.length; }

  top() { return this.items[0]; }

  push(rank, i, j, leftLength, rightLength) {
    const a = this.items;
    a.push({ rank, i, j, leftLength, rightLength });
    for (let k = a.length - 1; k > 0;) {
      const parent = (k - 1) >> 1;
      if (!PairHeap.before(a[k], a[parent])) break;
      [a[k], a[parent]] = [a[parent], a[k]];
      k = parent;
    }
  }

  pop() {
    const a = this.items;
    const first = a[0];
    const last = a.pop();
    if (a.length > 0) {
      a[0] = last;
      for (let k = 0; ;) {
        const l = 2 * k + 1, r = l + 1;
        let m = k;
        if (l < a.length && PairHeap.before(a[l], a[m])) m = l;
        if (r < a.length && PairHeap.before(a[r], a[m])) m = r;
        if (m === k) break;
        [a[k], a[m]] = [a[m], a[k]];
        k = m;
      }
    }
    return first;
  }

  static before(x, y) { return x.rank < y.rank || (x.rank === y.rank && x.i < y.i); }
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
