// What the checkpoint opener (registry.js's openCheckpoint) does with the user's files
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
export const baseName = (name) => String(name).split(/[\\/]/).pop();

/** sources -> Map(base name -> source); two files of the same name are a CheckpointError. */
export function filesByName(sources) {
  const byName = new Map();
  for (const s of sources) {
    const name = baseName(s.name);
    if (byName.has(name)) throw new CheckpointError(`two files are named ${name}: give the files of one `
      + 'checkpoint folder');
    byName.set(name, s);
  }
  return byName;
}

/** What --model's folder held, for a message: its first eight names. */
export const givenNames = (byName) => [...byName.keys()].slice(0, 8).join(', ') || 'no files';

/** A sharded checkpoint's index (core/io/safetensors_shards.h): which shard file holds each tensor. */
export const SHARD_INDEX = 'model.safetensors.index.json';

/**
 * The weights files every kind reads, in the order from_pretrained prefers them, with the format the
 * module's loadCheckpoint reads each in ('sharded': the index, and the shards it names).
 */
export const WEIGHT_FILES = [['model.safetensors', 'safetensors'], [SHARD_INDEX, 'sharded'],
  ['pytorch_model.bin', 'bin']];

/** The weights among the files (model.safetensors first): {name, format, source, byName}, or null. */
export function pickWeights(byName) {
  const found = WEIGHT_FILES.find(([name]) => byName.has(name));
  return found ? { name: found[0], format: found[1], source: byName.get(found[0]), byName } : null;
}

/**
 * Why a shard's name is not a plain safetensors file name beside the index, or null: the rule of
 * core/io/safetensors_shards.cpp (shard_name_problem), which the module applies again; here it keeps the
 * Hub clients from fetching, and the openers from looking up, any path an index makes up. The two give
 * the same verdicts (tests/node/shard_names.test.mjs, on hostile and 5,000 drawn names).
 */
export function shardNameProblem(name) {
  const quoted = `"${String(name).slice(0, 80)}"`;
  // 255 bytes of UTF-8, as file systems (and the module) count a name, not 255 UTF-16 units.
  if (typeof name !== 'string' || !name.length || new TextEncoder().encode(name).length > 255) return 'a shard\'s name '
    + 'must be a file name of 1 to 255 bytes';
  if (/[/\\]/.test(name)) return `shard ${quoted} names a folder: a shard is a plain file name beside the index`;
  if (name.startsWith('.')) return `shard ${quoted} is not a plain file name (it starts with a dot)`;
  if (/[\u0000-\u001f\u007f:]/.test(name)) return `shard ${quoted} holds a control character or ':': not `
    + 'a plain file name';
  if (!name.endsWith('.safetensors') || name === '.safetensors') return `shard ${quoted} is not a .safetensors file`;
  if (name === 'model.safetensors') return 'shard "model.safetensors" is the unsharded file\'s name, not a shard\'s';
  return null;
}

// The shards an index may name: core/io/safetensors_shards.h's kMaxShards (tests/node/shard_names.test.mjs
// holds the two verdicts equal), checked as they are met, so a hostile index is refused before any request.
export const MAX_SHARDS = 1000;

/**
 * The index's text -> its shards, each once, in the order of first mention; a CheckpointError naming the
 * problem. Linear in the index's size (a Set of the names met: a list's includes() made 400,000 names a hang).
 */
export function shardNames(indexText) {
  let index;
  try {
    index = JSON.parse(indexText);
  } catch (error) {
    throw new CheckpointError(`${SHARD_INDEX}: not JSON (${error.message})`);
  }
  const map = index?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw new CheckpointError(`${SHARD_INDEX}: has no `
    + '"weight_map" object (tensor name -> shard file)');
  const names = new Set();
  for (const [tensor, shard] of Object.entries(map)) {
    if (typeof shard !== 'string') throw new CheckpointError(`${SHARD_INDEX}: tensor "${tensor.slice(0, 80)}"'s shard `
      + `must be a file name, got ${shard === null ? 'null' : typeof shard}`);
    if (names.has(shard)) continue;
    const problem = shardNameProblem(shard);
    if (problem) throw new CheckpointError(`${SHARD_INDEX}: ${problem}`);
    if (names.size === MAX_SHARDS) throw new CheckpointError(`${SHARD_INDEX}: names more than ${MAX_SHARDS} shards`);
    names.add(shard);
  }
  if (!names.size) throw new CheckpointError(`${SHARD_INDEX}: its "weight_map" names no tensor`);
  return [...names];
}

/**
 * The picked weights (pickWeights) as module.loadCheckpoint's options: {format, size, read} for one
 * file; for a sharded checkpoint {format: 'safetensors', index (its text), shards: [{name, size, read}]},
 * each shard named by the index found among the files given, or a CheckpointError naming the one missing.
 */
export async function weightsToLoad(weights) {
  const { format, source, byName } = weights;
  if (format !== 'sharded') return { format, size: source.size, read: source.read };
  const index = await readSmallText(source, SHARD_INDEX, smallFileLimit(SHARD_INDEX));
  const shards = shardNames(index).map((name) => {
    const shard = byName.get(name);
    if (!shard) throw new CheckpointError(`${SHARD_INDEX} names the shard ${name}, which is not among the files given `
      + `(given: ${givenNames(byName)})`);
    return { name, size: shard.size, read: shard.read };
  });
  return { format: 'safetensors', index, shards };
}

/**
 * The most bytes each small file of a checkpoint may have: a config 1 MB (real ones are a few KB), every
 * tokenizer file 64 MB (the largest real ones, Gemma's tokenizer.json, are about 33 MB). The openers
 * read with these limits and the Hub clients download with them, so a file that one refuses the other
 * never keeps.
 */
const SMALL_FILE_BYTES = { 'config.json': 1 << 20, 'tokenizer_config.json': 1 << 20, 'generation_config.json': 1 << 20,
  [SHARD_INDEX]: 16 << 20 };
const TOKENIZER_FILE_BYTES = 64 << 20;
export const smallFileLimit = (name) => SMALL_FILE_BYTES[name] ?? TOKENIZER_FILE_BYTES;

/**
 * The most bytes of weights a lab can hold: core/models/model_memory.h's kModelBudgetBytes (the 4 GB
 * heap less the module's 256 MB), the budget every kind's config check applies to its weights as held
 * plus its work (the one rule: tests/node/hub_hostile.test.mjs checks that the two numbers agree). A
 * weights file (or a sharded model's shards together) larger than this needs at least its own size in
 * memory, so it is refused before its body comes; the rest of the rule, the work, is the module's
 * checkConfig, which the Hub clients ask once config.json has come.
 */
export const MAX_WEIGHT_BYTES = 3840 * 1024 * 1024;

/** A small file's bytes, refused by name when it is larger than maxBytes. */
export async function readSmallFile(source, name, maxBytes) {
  if (source.size > maxBytes) {
    throw new CheckpointError(`${name} is ${source.size} bytes: too large for a ${name} (at most ${maxBytes}); is `
      + 'it the right file?');
  }
  return source.read(0, source.size);
}

/** A small text file, refused by name when it is too large or holds NUL bytes (not text). */
export async function readSmallText(source, name, maxBytes) {
  const text = new TextDecoder().decode(await readSmallFile(source, name, maxBytes));
  if (text.includes('\u0000')) throw new CheckpointError(`${name} holds NUL bytes: it is not a text file`);
  return text;
}
