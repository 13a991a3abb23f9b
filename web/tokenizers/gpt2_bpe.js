// GPT-2's tokenizer files without a tokenizer.json (vocab.json + merges.txt), as the tokenizers library's
// model (issue 37, item 2): gpt2TokenizerJson builds the tokenizer.json that GPT-2's own checkpoints on the
// Hub have (a ByteLevel pre-tokenizer with GPT-2's pattern, a BPE model, a ByteLevel decoder,
// <|endoftext|> an added special token), which web/tokenizers/hf_tokenizer.js reads with
// @huggingface/tokenizers. What stays here is what the library does not do: checking the files when the
// folder opens, so that a broken one is named there (as the Rust library's BPE builder refuses a merge
// whose tokens are not in the vocabulary: MergeTokenOutOfVocabulary), and GPT-2's byte table, which
// tokenBytes reads a byte-level token's bytes by.
// (Until issue 37 this file was GPT-2's whole tokenizer, 319 lines: pre-tokenizer, BPE merge heap,
// decoding. The library's BPE gives the same ids on tests/fixtures/gpt2_bpe_cases.json's 300 strings.)

export const END_OF_TEXT = '<|endoftext|>';

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
// A token or merge as a message shows it: quoted, on one line, at most about 40 characters.
const show = (value) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 42 ? text : `${text.slice(0, 40)}…"`;
};

/**
 * A BPE model's vocab {token: id} and merges ([[a, b]] or ["a b"]) checked as the Rust library's builder
 * checks them: whole-number ids, one token an id, each merge two tokens that, with what they make, are
 * in the vocabulary. byteLevel: every byte's character must be a token too (GPT-2's byte-level BPE).
 * `files` names them as the user has them (vocab.json and merges.txt, or tokenizer.json).
 * -> merges as [[a, b]] in rank order.
 */
export function checkBpe(vocab, merges,
  { byteLevel = false, files = { vocab: 'vocab.json', merges: 'merges.txt' } } = {}) {
  if (!vocab || typeof vocab !== 'object' || Array.isArray(vocab)) throw new Error(`${files.vocab} must hold an object {token: id}`);
  if (!Array.isArray(merges)) throw new Error(`${files.merges} must be a list of merges`);
  const tokens = [];
  for (const [token, id] of Object.entries(vocab)) {
    if (!Number.isInteger(id) || id < 0) throw new Error(`${files.vocab}: the id of ${show(token)} must be a whole `
      + `number, got ${show(id)}`);
    if (tokens[id] !== undefined) throw new Error(`${files.vocab}: ${show(tokens[id])} and ${show(token)} have the `
      + `same id ${id}: each token needs its own`);
    tokens[id] = token;
  }
  if (byteLevel) {
    for (const c of BYTE_TO_CHAR) {
      if (!Object.hasOwn(vocab, c)) throw new Error(`${files.vocab} lacks the byte token ${JSON.stringify(c)}: is it a `
        + 'byte-level BPE (GPT-2) vocabulary?');
    }
  }
  return merges.map((m, rank) => {
    const pair = Array.isArray(m) ? m : String(m).split(' ');
    if (pair.length !== 2) throw new Error(`${files.merges}: merge ${rank + 1} must be two tokens, got ${show(m)}`);
    const [a, b] = pair;
    for (const token of [a, b, a + b]) {
      if (!Object.hasOwn(vocab, token)) throw new Error(`${files.merges}: merge ${rank + 1} (${show(`${a} ${b}`)}) `
        + `needs the token ${show(token)}, which ${files.vocab} lacks`);
    }
    return pair;
  });
}

/**
 * vocab.json's and merges.txt's texts -> the tokenizer.json object GPT-2's checkpoints have, checked.
 * <|endoftext|> is the added special token where the vocabulary has it (GPT2Tokenizer's bos, eos, unk).
 */
export function gpt2TokenizerJson(vocabJson, mergesText) {
  let vocab;
  try {
    vocab = JSON.parse(vocabJson);
  } catch (error) {
    throw new Error(`vocab.json is not JSON (${error.message})`);
  }
  const merges = checkBpe(vocab, parseMerges(mergesText), { byteLevel: true });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    added_tokens: Object.hasOwn(vocab, END_OF_TEXT)
      ? [{ id: vocab[END_OF_TEXT], content: END_OF_TEXT, single_word: false, lstrip: false, rstrip: false,
        normalized: true, special: true }] : [],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

/** merges.txt's text -> [[a, b], ...]: one merge a line, "#version" lines and blank lines skipped. */
export function parseMerges(text) {
  const merges = [];
  String(text).split('\n').forEach((line, i) => {
    const trimmed = line.replace(/\r$/, '');
    if (!trimmed || (i === 0 && trimmed.startsWith('#version'))) return;
    const pair = trimmed.split(' ');
    if (pair.length !== 2) throw new Error(`merges.txt line ${i + 1} must be two tokens separated by a space, got `
      + `${JSON.stringify(trimmed.slice(0, 60))}`);
    merges.push(pair);
  });
  return merges;
}
