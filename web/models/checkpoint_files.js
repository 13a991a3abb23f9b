// What every checkpoint opener (bert_checkpoint.js, marian_checkpoint.js) does with the user's files
// before it reads a weight: find the files by name in what was given (a dropped folder may hold others),
// and read the small ones (config, vocabulary, tokenizer) with a size bound, so that a wrong file under
// the right name is refused by name instead of filling the tab's memory. No DOM and no Node API.
//
// A source is {name, size, read(offset, length) -> Promise<Uint8Array>, text() -> Promise<string>}.

export class CheckpointError extends Error {
  constructor(message) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** The base name of a path ("folder/sub/config.json" -> "config.json"). */
const baseName = (name) => String(name).split(/[\\/]/).pop();

/** sources -> Map(base name -> source); two files of the same name are a CheckpointError. */
export function filesByName(sources) {
  const byName = new Map();
  for (const s of sources) {
    const name = baseName(s.name);
    if (byName.has(name)) throw new CheckpointError(`two files are named ${name}: give the files of one checkpoint folder`);
    byName.set(name, s);
  }
  return byName;
}

/** What --model's folder held, for a message: its first eight names. */
export const givenNames = (byName) => [...byName.keys()].slice(0, 8).join(', ') || 'no files';

/**
 * The weights files every kind reads, in the order from_pretrained prefers them, with the format the
 * module's loadCheckpoint reads each in.
 */
export const WEIGHT_FILES = [['model.safetensors', 'safetensors'], ['pytorch_model.bin', 'bin']];

/** The weights among the files (model.safetensors first): {name, format, source}, or null. */
export function pickWeights(byName) {
  const found = WEIGHT_FILES.find(([name]) => byName.has(name));
  return found ? { name: found[0], format: found[1], source: byName.get(found[0]) } : null;
}

/**
 * The most bytes each small file of a checkpoint may have: a config 1 MB (real ones are a few KB), every
 * tokenizer file 64 MB (the largest real ones, Gemma's tokenizer.json, are about 33 MB). The openers
 * read with these limits and the Hub clients download with them, so a file that one refuses the other
 * never keeps.
 */
const SMALL_FILE_BYTES = { 'config.json': 1 << 20, 'tokenizer_config.json': 1 << 20, 'generation_config.json': 1 << 20 };
const TOKENIZER_FILE_BYTES = 64 << 20;
export const smallFileLimit = (name) => SMALL_FILE_BYTES[name] ?? TOKENIZER_FILE_BYTES;

/** A limit for a message: "1 MB", "64 MB". */
export const limitWords = (bytes) => `${Math.round(bytes / (1 << 20))} MB`;

/**
 * The most bytes of weights a lab can hold: core/models/bert_config.h's kMaxBertWeightBytes, which every
 * kind's config check applies to its weights as stored (float32, or a BF16/F16 decoder's 16 bits, which
 * it holds at 16 bits: core/models/config_json.h's check_weight_budget; tests/node/hub_hostile.test.mjs
 * checks that the two agree). A weights file larger than this needs at least its own size in memory, so
 * it is refused before its body comes.
 */
export const MAX_WEIGHT_BYTES = 1600 * 1024 * 1024;

/** A small file's bytes, refused by name when it is larger than maxBytes. */
export async function readSmallFile(source, name, maxBytes) {
  if (source.size > maxBytes) {
    throw new CheckpointError(`${name} is ${source.size} bytes: too large for a ${name} (at most ${maxBytes}); is it the right file?`);
  }
  return source.read(0, source.size);
}

/** A small text file, refused by name when it is too large or holds NUL bytes (not text). */
export async function readSmallText(source, name, maxBytes) {
  const text = new TextDecoder().decode(await readSmallFile(source, name, maxBytes));
  if (text.includes('\u0000')) throw new CheckpointError(`${name} holds NUL bytes: it is not a text file`);
  return text;
}
