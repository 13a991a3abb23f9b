// The checkpoint models the labs open, one entry per kind of the C++ registry (core/models/model_kinds.h,
// its rows generated into model_kinds.generated.js by scripts/gen_model_kinds.mjs): which config.json
// `model_type`s it reads, the lab that shows it, the files it reads (kind_files.js) and how its tokenizer
// is read (tokenizer_readers.js). openCheckpoint(module, sources, {lab}) finds the kind from the folder's
// config.json, as transformers' AutoModel does, picks the row's files, reads the tokenizer and streams the
// weights into the module, the same for every kind: a folder dropped on the wrong lab is named for what it
// is ("a Marian model: open it in the Translation lab") instead of being refused for files it was never
// meant to have. Adding a model kind: its rows in C++ (a new way of reading a tokenizer: a reader here).
import { CheckpointError, filesByName, givenNames, pickWeights, readSmallFile, readSmallText,
  smallFileLimit, weightsToLoad } from './checkpoint_files.js';
import { WEIGHTS_WORDS, chosenAlternative, kindFiles, labFileNames, needWords,
  needsWords, readWords } from './kind_files.js';
import { TOKENIZER_READERS } from './tokenizer_readers.js';
import { MODEL_KIND_ROWS } from './model_kinds.generated.js';
import { checkTokenizer } from '../tokenizers/tokenizer.js';
import { asDecoderFolder } from './hooked_transformer.js';

export const MODEL_KINDS = MODEL_KIND_ROWS.map((row) => ({
  kind: row.kind, title: row.title, modelTypes: row.modelTypes, lab: row.lab, tokenizer: row.tokenizer,
  binding: row.binding, files: kindFiles(row),
}));

/** The kinds a lab opens (its id: web/labs/registry.js's), in the registry's order. */
export const labKinds = (labId) => MODEL_KINDS.filter((k) => k.lab.id === labId);

/** config.json's model_type -> its kind, or null (the one reading of model_type: the openers' and the Hub clients'). */
export const kindOfModelType = (modelType) => MODEL_KINDS.find((k) => k.modelTypes.includes(modelType)) ?? null;

/** The kinds a lab opens, named for a sentence: "GPT-2, Llama and Qwen2" (or: "... or ..."). */
const titlesOf = (kinds, or = 'and') => kinds.map((k) => k.title).join(', ').replace(/, ([^,]*)$/, ` ${or} $1`);

/**
 * What a lab makes of config.json's model_type -> {kind} to open, or {problem, lab}: a kind of another
 * lab (`lab`: the lab that opens it, which the caller names after the problem: the page as a link, the CLI
 * with its command), or a model_type no kind reads. A config with no model_type (old configs lack it) is
 * read as the lab's first kind, whose check says what is missing or wrong. what: how the sentence begins
 * ("This folder holds", "it is"); lacks() -> what the core lacks for a model_type it knows and does not
 * compute (the module's unreadArchitecture), asked only for a model_type no kind reads.
 */
export function kindForLab(modelType, labId, { what = 'This folder holds', lacks = () => '' } = {}) {
  const here = labKinds(labId);
  if (!here.length) throw new Error(`no lab '${labId}' opens checkpoints (labs: `
    + `${[...new Set(MODEL_KINDS.map((k) => k.lab.id))].join(', ')})`);
  const kind = kindOfModelType(modelType);
  if (kind && kind.lab.id === labId) return { kind };
  const type = String(modelType).slice(0, 40);
  if (kind) return { problem: `${what} a ${kind.title} model (config.json's model_type is "${type}"), not a `
    + `${titlesOf(here, 'or')} one`, lab: kind.lab };
  if (modelType === null || modelType === undefined) return { kind: here[0] };
  const unread = lacks();
  return { problem: `config.json's model_type is "${type}": ${unread ? `${unread}; ` : ''}the ${here[0].lab.title} lab `
    + `reads ${titlesOf(here)} models (model_type `
    + `${here.flatMap((k) => k.modelTypes).map((t) => `"${t}"`).join(' or ')})` };
}

/**
 * The error for a checkpoint a lab does not read: `problem`, then (a kind of another lab) where to open
 * it; error.lab is that lab, for the page's link to it and the CLI's command (checkpoint_command.mjs).
 */
export const wrongKind = (ErrorClass, problem, lab) => (lab
  ? Object.assign(new ErrorClass(`${problem}: open it in the ${lab.title} lab.`), { lab })
  : new ErrorClass(`${problem}.`));

/**
 * config.json's text -> its model_type (null without one); a config that is not JSON is a CheckpointError
 * naming it.
 */
export function modelTypeOf(configText) {
  let parsed;
  try {
    parsed = JSON.parse(configText);
  } catch (error) {
    throw new CheckpointError(`config.json is not JSON (${error.message})`);
  }
  return typeof parsed?.model_type === 'string' ? parsed.model_type : null;
}

/**
 * sources -> {kind, modelType} from config.json's model_type: kind null when no kind reads it, both null
 * without a config.json.
 */
export async function checkpointKind(given) {
  const { sources } = await asDecoderFolder(given);
  const config = filesByName(sources).get('config.json');
  if (!config) return { kind: null, modelType: null };
  const modelType = modelTypeOf(await readSmallText(config, 'config.json', smallFileLimit('config.json')));
  return { kind: kindOfModelType(modelType), modelType };
}

/**
 * A kind's files among the folder's (by base name) -> {picked: Map(name -> source) of the files to read,
 * in the row's order, weights}, or a CheckpointError that names the kind, what it needs and what is missing.
 */
export function pickKindFiles(kind, byName) {
  const picked = new Map();
  const missing = [];
  for (const need of kind.files.needs) {
    const files = chosenAlternative(need, (f) => byName.has(f));
    if (files) for (const f of files) picked.set(f, byName.get(f));
    else missing.push(needWords(need));
  }
  const weights = pickWeights(byName);
  if (!weights) missing.push(WEIGHTS_WORDS);
  if (missing.length) {
    const hint = !weights && [...byName.keys()].some((n) => n.endsWith('.h5') || n.endsWith('.msgpack'))
      ? ' TensorFlow and Flax weights are not read here: the PyTorch ones (model.safetensors or pytorch_model.bin) are.' : '';
    throw new CheckpointError(`A ${kind.title} checkpoint needs ${needsWords(kind)}; missing ${missing.join('; ')} `
      + `(given: ${givenNames(byName)}).${hint}`);
  }
  for (const f of kind.files.optional) if (byName.has(f) && !picked.has(f)) picked.set(f, byName.get(f));
  return { picked, weights };
}

// The picked files as a tokenizer reader reads them, each small file with its size bound.
const readerFiles = (picked, config, name) => ({
  config, name,
  has: (f) => picked.has(f),
  text: (f) => readSmallText(picked.get(f), f, smallFileLimit(f)),
  bytes: (f) => readSmallFile(picked.get(f), f, smallFileLimit(f)),
});

/**
 * Opens the checkpoint in `sources` for a lab (`lab`: its id; the kinds it reads are those rows name):
 * its kind from config.json's model_type, the row's files picked, the tokenizer read by the row's reader,
 * then the weights streamed into the module (module.loadCheckpoint(kind)). A folder of another lab's kind
 * is refused with the lab that opens it. -> {kind, opened: {model, tokenizer, options (a reader's notes,
 * where it has them), summary, files (those read, in order)}}. onProgress({bytes, total, tensor}).
 */
export async function openCheckpoint(module, given, { lab, onProgress, name } = {}) {
  // The Induction lab's export (one .safetensors file) as the folder of its TransformerLens kind.
  const { sources, exportName } = await asDecoderFolder(given);
  const byName = filesByName(sources);
  const configSource = byName.get('config.json');
  const config = configSource ? await readSmallText(configSource, 'config.json', smallFileLimit('config.json')) : null;
  const { kind, problem, lab: rightLab } = kindForLab(config === null ? null : modelTypeOf(config), lab,
    { lacks: () => module.unreadArchitecture?.(config) ?? '' });
  if (problem) throw wrongKind(CheckpointError, problem, rightLab);
  const { picked, weights } = pickKindFiles(kind, byName);
  const reader = TOKENIZER_READERS[kind.tokenizer];
  if (!reader) throw new Error(`the ${kind.title} row's tokenizer "${kind.tokenizer}" has no reader `
    + `(web/models/tokenizer_readers.js: ${Object.keys(TOKENIZER_READERS).join(', ')})`);
  let read;
  try {
    read = await reader.read(readerFiles(picked, config, name));
  } catch (error) {
    throw error instanceof CheckpointError ? error : new CheckpointError(error.message);
  }
  checkTokenizer(read.tokenizer, kind.title);
  // The weights last: config.json and the tokenizer are checked before hundreds of megabytes are read.
  const model = await module.loadCheckpoint(kind.kind, { config, onProgress, ...(await weightsToLoad(weights)) });
  const { tokenizer } = read;
  if (tokenizer.size > model.config.vocabSize) {
    model.delete();
    throw new CheckpointError(`${reader.named} has ${tokenizer.size} tokens but config.json's vocab_size is `
      + `${model.config.vocabSize}: they belong to different models`);
  }
  // A decoder whose vocabulary is padded past its tokenizer's (Qwen2.5): the padded ids have no text, so
  // the writer, the bars and the lens never choose them.
  if (model.limitVocabulary && tokenizer.size < model.config.vocabSize) model.limitVocabulary(tokenizer.size);
  // An Induction export keeps its own file's name (the folder it became is the opener's own).
  const opened = { model, tokenizer, ...(read.options ? { options: read.options } : {}), summary: model.summary,
    files: exportName ? [exportName] : [...picked.keys(), weights.name], ...(exportName ? { exportName } : {}) };
  return { kind, opened };
}

/**
 * The files a lab's kinds read (its file picker's), and the same as a sentence's words ("Read: ..."):
 * from the rows.
 */
export const labFiles = (labId) => labFileNames(labKinds(labId));
export const labReads = (labId) => readWords(labKinds(labId));
