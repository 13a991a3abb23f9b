// BERT's WordPiece tokenizer, as Hugging Face does it (issue 13): text -> [CLS] pieces [SEP] -> ids.
// No DOM, no Node APIs: the Worker, the page and the CLI share it.
//
// Three stages, each as HF's BertTokenizerFast (the Rust `tokenizers` crate, what AutoTokenizer loads)
// and the Python BertTokenizer do them:
//   1. normalize   clean_text, spaces around CJK ideographs, lowercase, strip accents
//                  (Rust BertNormalizer; Python BasicTokenizer._clean_text ... _run_strip_accents)
//   2. pre-tokenize split on whitespace, every punctuation mark its own word
//                  (Rust BertPreTokenizer; Python whitespace_tokenize + _run_split_on_punc)
//   3. WordPiece   greedy longest match first, "##" on pieces that continue a word
//                  (Rust models::wordpiece; Python WordpieceTokenizer)
// then [CLS] A [SEP] (B [SEP]) with token types 0 ... 0 (1 ... 1) (BertProcessing).
// The special tokens are cut out of the raw text first and never normalized or split (HF's added
// tokens, normalized: false).
//
// Where HF's two implementations disagree we say so at the rule and which one we follow:
//   - Python's BasicTokenizer NFC-composes the text after the CJK step (transformers since 2023); the
//     Rust normalizer does not. We follow Rust (AutoTokenizer's default). It only matters when accents
//     are kept (cased models, strip_accents false) and the text has decomposed accents ("e\u0301").
//   - The CJK Extension E range starts at U+2B820 in Python (and Google's original BERT) but at U+2B920
//     in Rust. We follow Python: U+2B820..U+2B91F are Extension E ideographs like the rest.
// Lowercasing is per character in both (Python's PreTrainedTokenizer.tokenize lowercases with the
// regex "(.+?)", one character per match), so a final capital sigma becomes "σ", not "ς".

export const SPECIAL_TOKENS = Object.freeze(['[CLS]', '[SEP]', '[UNK]', '[PAD]', '[MASK]']);
// encode() cannot work without these three; [PAD] and [MASK] are cut out of the text only if present.
const REQUIRED_TOKENS = ['[CLS]', '[SEP]', '[UNK]'];
export const CONTINUING_PREFIX = '##'; // BERT's continuing_subword_prefix
export const MAX_INPUT_CHARS_PER_WORD = 100; // BERT's max_input_chars_per_word: longer words -> [UNK]

// ---- 1. Character classes ----

/** U+0000..U+007F punctuation as BERT counts it: every non-letter, non-digit, non-space ASCII mark. */
function isAsciiPunctuation(cp) {
  // 33-47 !"#$%&'()*+,-./  58-64 :;<=>?@  91-96 [\]^_`  123-126 {|}~ : "$", "+", "^" are symbols (S*)
  // in Unicode, but BERT splits them like punctuation (as HF's _is_punctuation and is_bert_punc).
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
}

const UNICODE_PUNCTUATION = /^\p{P}$/u; // Pc Pd Ps Pe Pi Pf Po, as HF's category().startswith("P")

/** A punctuation mark is a word of its own: the ASCII marks above plus every Unicode P* character. */
export function isPunctuation(ch) {
  return isAsciiPunctuation(ch.codePointAt(0)) || UNICODE_PUNCTUATION.test(ch);
}

// Other (C*): Cc controls, Cf format (U+200B, U+FEFF, U+200D...), Cs lone surrogates, Co private
// use, Cn unassigned. HF drops them all (Python: category().startswith("C"); Rust: is_other()).
const OTHER = /^\p{C}$/u;

/** Removed by clean_text: every C* character except \t \n \r, which count as whitespace (as HF). */
export function isControl(ch) {
  if (ch === '\t' || ch === '\n' || ch === '\r') return false;
  return OTHER.test(ch);
}

// Zs (space, U+00A0, U+3000, U+2000..U+200A...) as Python's _is_whitespace; U+2028 and U+2029 (Zl, Zp)
// too: Rust maps them to a space (char::is_whitespace) and Python's str.split() splits on them.
const SPACE = /^[\p{Zs}\p{Zl}\p{Zp}]$/u;

/** Mapped to a plain space by clean_text. */
export function isWhitespace(ch) {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || SPACE.test(ch);
}

/**
 * The CJK Unified Ideographs blocks BERT puts spaces around, so each ideograph is a word. Not Hangul,
 * Hiragana or Katakana: those scripts separate words with spaces and are handled like Latin (HF's note).
 */
export function isChineseChar(cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || // CJK Unified Ideographs
    (cp >= 0x3400 && cp <= 0x4DBF) || // Extension A
    (cp >= 0x20000 && cp <= 0x2A6DF) || // Extension B
    (cp >= 0x2A700 && cp <= 0x2B73F) || // Extension C
    (cp >= 0x2B740 && cp <= 0x2B81F) || // Extension D
    (cp >= 0x2B820 && cp <= 0x2CEAF) || // Extension E (Python's bound; Rust starts at 0x2B920)
    (cp >= 0xF900 && cp <= 0xFAFF) || // CJK Compatibility Ideographs
    (cp >= 0x2F800 && cp <= 0x2FA1F); // CJK Compatibility Ideographs Supplement
}

// ---- 2. Normalization (Rust BertNormalizer, in its order) ----

/** Drops U+0000, U+FFFD and the C* characters; turns every kind of whitespace into ' '. */
export function cleanText(text) {
  let out = '';
  for (const ch of text) { // for...of walks code points: an astral character is one ch
    const cp = ch.codePointAt(0);
    if (cp === 0 || cp === 0xFFFD || isControl(ch)) continue; // NUL and the replacement char: invalid input
    out += isWhitespace(ch) ? ' ' : ch;
  }
  return out;
}

/** ' 中 ' for each CJK ideograph: Chinese has no spaces, so BERT makes each ideograph its own word. */
export function spaceChineseChars(text) {
  let out = '';
  for (const ch of text) out += isChineseChar(ch.codePointAt(0)) ? ` ${ch} ` : ch;
  return out;
}

/** Lowercase one character at a time, as both HF implementations do (no final-sigma rule: "Σ" -> "σ"). */
export function lowercase(text) {
  let out = '';
  for (const ch of text) out += ch.toLowerCase();
  return out;
}

/** "café" -> "cafe": NFD splits a letter from its accents, then the nonspacing marks (Mn) go (as HF). */
export function stripAccents(text) {
  return text.normalize('NFD').replace(/\p{Mn}/gu, '');
}

/**
 * The normalizer's output for one stretch of text without special tokens. Options as in
 * resolveOptions(): strip_accents null follows do_lower_case (HF: "as in the original BERT").
 */
export function normalize(text, options = {}) {
  const o = resolveOptions(options);
  let s = cleanText(text); // always on: BertTokenizer has no switch for it
  if (o.tokenizeChineseChars) s = spaceChineseChars(s);
  // Lowercase, then strip accents, as Python does (Rust strips first: the same result, since lowercasing
  // only ever adds a combining dot, to "İ", and stripping removes it either way).
  if (o.doLowerCase) s = lowercase(s);
  if (o.stripAccents) s = stripAccents(s);
  return s;
}

// ---- 3. Pre-tokenization (Rust BertPreTokenizer) ----

/** Words: split on whitespace, and every punctuation mark is a word of its own ("don't" -> don ' t). */
export function splitWords(text) {
  const words = [];
  let word = '';
  for (const ch of text) {
    if (isWhitespace(ch)) { // a separator, dropped
      if (word) words.push(word);
      word = '';
    } else if (isPunctuation(ch)) { // a word of its own, never joined to its neighbours
      if (word) words.push(word);
      words.push(ch);
      word = '';
    } else {
      word += ch;
    }
  }
  if (word) words.push(word);
  return words;
}

/** BERT's basic tokenizer: normalize, then split into words (no special-token handling here). */
export function basicTokenize(text, options = {}) {
  return splitWords(normalize(text, options));
}

// ---- 4. WordPiece ----

/**
 * One word -> its pieces by greedy longest match first: the longest prefix in the vocabulary, then the
 * longest "##" continuation of the rest, and so on ("unaffable" -> un ##aff ##able). A word with a
 * stretch no piece covers is [UNK] as a whole, never partly (as HF), and so is a word over
 * MAX_INPUT_CHARS_PER_WORD characters (code points, as Python's list(token) and Rust's chars()).
 */
export function wordPieces(word, vocab, unkToken = '[UNK]') {
  const chars = [...word];
  if (chars.length > MAX_INPUT_CHARS_PER_WORD) return [unkToken];
  const pieces = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let piece = null;
    while (start < end) { // shrink from the right until the vocabulary has it
      const sub = (start > 0 ? CONTINUING_PREFIX : '') + chars.slice(start, end).join('');
      if (vocab.has(sub)) { piece = sub; break; }
      end--;
    }
    if (piece === null) return [unkToken]; // no piece starts here: the whole word is unknown
    pieces.push(piece);
    start = end;
  }
  return pieces;
}

// ---- Options ----

/** Options with HF's defaults filled in; strip_accents null (or absent) follows do_lower_case. */
function resolveOptions(options) {
  const doLowerCase = options.doLowerCase ?? true; // BertTokenizer's default
  const stripAccents = options.stripAccents ?? doLowerCase; // None -> follow lowercase, as HF
  const tokenizeChineseChars = options.tokenizeChineseChars ?? true;
  const maxLength = options.maxLength ?? null;
  for (const [name, v] of Object.entries({ doLowerCase, stripAccents, tokenizeChineseChars })) {
    if (typeof v !== 'boolean') throw new TypeError(`tokenizer option ${name} must be true or false, not `
      + `${JSON.stringify(v)}`);
  }
  if (maxLength !== null && !(Number.isInteger(maxLength) && maxLength > 0)) {
    throw new TypeError(`tokenizer option maxLength must be a positive integer, not ${JSON.stringify(maxLength)}`);
  }
  return { doLowerCase, stripAccents, tokenizeChineseChars, maxLength };
}

const parseJson = (j, file) => {
  if (j == null) return null;
  if (typeof j !== 'string') return j;
  try {
    return JSON.parse(j);
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${e.message}`);
  }
};

// "bert-base-cased", "bert-base-multilingual-cased", "my_cased_model": "cased" as a word; "uncased" is not.
const SAYS_CASED = /(^|[^a-z])cased([^a-z]|$)/i;

/**
 * A checkpoint's files -> the tokenizer's options, each with a note of where it came from.
 * configJson: config.json; tokenizerConfigJson: tokenizer_config.json (null when the folder has none);
 * each an object or its text. name: the folder or model id, if known (optional).
 *
 * do_lower_case, in order: tokenizer_config.json's do_lower_case; else false if the name
 * (the argument, config.json's _name_or_path or tokenizer_config.json's name_or_path) says "cased"
 * as a word ("bert-base-cased", not "bert-base-uncased"); else true, BertTokenizer's default.
 * strip_accents and tokenize_chinese_chars come from tokenizer_config.json, else HF's defaults (null:
 * follow do_lower_case; true). maxLength is config.json's max_position_embeddings: the model has no
 * position embedding past it.
 */
export function tokenizerOptions(configJson, tokenizerConfigJson, name = null) {
  const config = parseJson(configJson, 'config.json') ?? {};
  const tc = parseJson(tokenizerConfigJson, 'tokenizer_config.json');
  const notes = {};

  let doLowerCase;
  const names = [name, config._name_or_path, tc?.name_or_path].filter((n) => typeof n === 'string' && n);
  const cased = names.find((n) => SAYS_CASED.test(n));
  if (typeof tc?.do_lower_case === 'boolean') {
    doLowerCase = tc.do_lower_case;
    notes.doLowerCase = `tokenizer_config.json: do_lower_case ${doLowerCase}`;
  } else if (cased) {
    doLowerCase = false;
    notes.doLowerCase = `the name "${cased}" says cased `
      + `(${tc ? 'tokenizer_config.json has no do_lower_case' : 'no tokenizer_config.json'})`;
  } else {
    doLowerCase = true;
    notes.doLowerCase = 'default true, as BertTokenizer '
      + `(${tc ? 'tokenizer_config.json has no do_lower_case' : 'no tokenizer_config.json'})`;
  }

  let stripAccents = null;
  if (typeof tc?.strip_accents === 'boolean') {
    stripAccents = tc.strip_accents;
    notes.stripAccents = `tokenizer_config.json: strip_accents ${stripAccents}`;
  } else {
    notes.stripAccents = `follows do_lower_case (${doLowerCase}), as HF when strip_accents is not set`;
  }

  let tokenizeChineseChars = true;
  if (typeof tc?.tokenize_chinese_chars === 'boolean') {
    tokenizeChineseChars = tc.tokenize_chinese_chars;
    notes.tokenizeChineseChars = `tokenizer_config.json: tokenize_chinese_chars ${tokenizeChineseChars}`;
  } else {
    notes.tokenizeChineseChars = 'default true, as BertTokenizer';
  }

  let maxLength = null;
  const P = config.max_position_embeddings;
  if (Number.isInteger(P) && P > 0) {
    maxLength = P;
    notes.maxLength = `config.json: max_position_embeddings ${P}`;
  } else {
    notes.maxLength = 'no limit: config.json has no max_position_embeddings';
  }

  return { doLowerCase, stripAccents, tokenizeChineseChars, maxLength, notes };
}

// ---- The tokenizer ----

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class WordPieceTokenizer {
  /**
   * tokens: the vocabulary, id -> token (vocab.txt's lines). options: {doLowerCase, stripAccents,
   * tokenizeChineseChars, maxLength}, as tokenizerOptions() returns them (other keys are ignored).
   */
  constructor(tokens, options = {}) {
    if (!tokens.length || tokens.every((t) => t === '')) {
      throw new Error('vocab.txt is empty: a BERT vocabulary lists one token per line ([PAD], [UNK], [CLS], [SEP], '
        + '[MASK] and the word pieces)');
    }
    this.tokens = tokens.slice();
    // A token listed twice keeps its last line's id, as HF's load_vocab (a dict filled in file order).
    this.vocab = new Map();
    this.tokens.forEach((t, id) => this.vocab.set(t, id));
    const missing = REQUIRED_TOKENS.filter((t) => !this.vocab.has(t));
    if (missing.length) {
      throw new Error(`vocab.txt has no ${missing.join(', ')} (of ${this.tokens.length} tokens): BERT needs [CLS], `
        + '[SEP] and [UNK] on lines of their own');
    }
    this.options = resolveOptions(options);
    // Ids by string: they differ between vocabularies ([CLS] is 101 in bert-base-uncased, 2 in others).
    this.specialIds = Object.fromEntries(SPECIAL_TOKENS.filter((t) => this.vocab.has(t)).map((t) => [t,
      this.vocab.get(t)]));
    // Typed "[MASK]" stays one token, as HF's added tokens: matched on the raw text, case-sensitive,
    // longest first, anywhere (also inside a word: "a[MASK]b" -> a [MASK] b).
    const specials = Object.keys(this.specialIds).sort((a, b) => b.length - a.length);
    this.specialPattern = new RegExp(`(${specials.map(escapeRegExp).join('|')})`);
  }

  /**
   * vocab.txt's text -> a tokenizer. One token per line, id = line number from 0; \n, \r\n or \r end
   * a line (Python reads vocab.txt in universal-newline mode); a final newline adds no token; nothing
   * else is trimmed (HF strips only the newline: a token may be " " or "").
   */
  static fromVocabText(text, options = {}) {
    if (typeof text !== 'string') throw new TypeError('fromVocabText: expected the text of vocab.txt (a string)');
    const lines = text.split(/\r\n|\r|\n/);
    if (lines.length && lines[lines.length - 1] === '') lines.pop(); // the last line's newline
    return new WordPieceTokenizer(lines, options);
  }

  get size() { return this.tokens.length; }

  /** The id of a token, or [UNK]'s. */
  tokenToId(token) { return this.vocab.get(token) ?? this.specialIds['[UNK]']; }

  idToToken(id) { return this.tokens[id]; }

  /** Text -> word pieces, without [CLS] and [SEP]. */
  tokenize(text) {
    if (typeof text !== 'string') throw new TypeError(`tokenize: expected a string, not ${typeof text}`);
    const out = [];
    // split() with a capturing group keeps the special tokens at the odd indices.
    const parts = text.split(this.specialPattern);
    for (let i = 0; i < parts.length; i++) {
      if (i % 2 === 1) { out.push(parts[i]); continue; } // a special token: as typed, never normalized
      for (const word of basicTokenize(parts[i], this.options)) out.push(...wordPieces(word, this.vocab, '[UNK]'));
    }
    return out;
  }

  /**
   * text (and pair) -> {tokens, ids, typeIds}: [CLS] text [SEP] or [CLS] text [SEP] pair [SEP], token
   * type 0 up to and including the first [SEP], 1 after it. pair "" is a pair with no tokens
   * ([CLS] text [SEP] [SEP]), as HF; pair null or undefined is no pair. With options.maxLength, a
   * longer result throws an Error naming both numbers: the model cannot read it, and truncating
   * silently would hide words from the page.
   */
  encode(text, pair = null) {
    if (pair !== null && typeof pair === 'object') pair = pair.pair ?? null; // encode(text, {pair}) as well
    const tokens = ['[CLS]', ...this.tokenize(text), '[SEP]'];
    const typeIds = new Array(tokens.length).fill(0);
    if (pair !== null && pair !== undefined) {
      const b = this.tokenize(pair);
      tokens.push(...b, '[SEP]');
      for (let i = 0; i <= b.length; i++) typeIds.push(1);
    }
    const max = this.options.maxLength;
    if (max !== null && tokens.length > max) {
      throw new Error(`The text is ${tokens.length} tokens long with [CLS] and `
        + `[SEP]${pair != null ? ' (both sentences)' : ''}, but this model reads at most ${max} `
        + `(max_position_embeddings): shorten it by ${tokens.length - max} `
        + `token${tokens.length - max === 1 ? '' : 's'}.`);
    }
    return { tokens, ids: tokens.map((t) => this.tokenToId(t)), typeIds };
  }

  /**
   * ids -> text, as HF's BertTokenizer.decode(ids, skip_special_tokens) (true by default here, as the
   * other tokenizers): the tokens joined by spaces, "##" pieces glued to the piece before them, then
   * clean_up_tokenization (BERT's default: " ." -> ".", " n't" -> "n't", ...). An id outside the
   * vocabulary reads as [UNK].
   */
  decode(ids, { skipSpecialTokens = true } = {}) {
    const special = new Set(Object.values(this.specialIds));
    const tokens = [];
    for (const id of ids) {
      if (skipSpecialTokens && special.has(id)) continue;
      tokens.push(this.tokens[id] ?? '[UNK]');
    }
    let text = tokens.join(' ').replaceAll(` ${CONTINUING_PREFIX}`, '').trim();
    for (const [from, to] of CLEAN_UP) text = text.replaceAll(from, to);
    return text;
  }
}

// HF's clean_up_tokenization, in its order.
const CLEAN_UP = [[' .', '.'], [' ?', '?'], [' !', '!'], [' ,', ','], [" ' ", "'"], [" n't", "n't"], [" 'm", "'m"],
  [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"]];
