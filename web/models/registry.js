// The checkpoint models the labs open, one entry per kind of the C++ registry (core/models/model_kinds.h,
// its rows generated into model_kinds.generated.js by scripts/gen_model_kinds.mjs): which config.json
// `model_type`s it reads, the lab that shows it, the files it reads, and (here) its opener (sources ->
// the opened model), by the binding that loads it. openCheckpoint(module, sources) finds the kind from
// the folder's config.json, as transformers' AutoModel does (`files` says what a kind reads: what a
// download from the Hub fetches, the weights in the order from_pretrained prefers them), so a folder
// dropped on the wrong lab is named for what it is ("a Marian model: open it in the Translation lab")
// instead of being refused for files it was never meant to have. Adding a model kind: its row in C++.
import { CheckpointError, WEIGHT_FILES, filesByName, readSmallText, smallFileLimit } from './checkpoint_files.js';
import { openBertCheckpoint } from './bert_checkpoint.js';
import { openMarianCheckpoint } from './marian_checkpoint.js';
import { openGpt2Checkpoint } from './gpt2_checkpoint.js';
import { MODEL_KIND_ROWS } from './model_kinds.generated.js';
import { checkTokenizer } from '../tokenizers/tokenizer.js';

const WEIGHTS = WEIGHT_FILES.map(([name]) => name);

// The opener of each binding (a row's `binding`: wasm_bindings/raw_*.h); a decoder reads GPT-2's BPE.
const OPENERS = { bert: openBertCheckpoint, marian: openMarianCheckpoint, decoder: openGpt2Checkpoint };

export const MODEL_KINDS = MODEL_KIND_ROWS.map((row) => ({
  kind: row.kind, title: row.title, modelTypes: row.modelTypes, lab: row.lab, tokenizer: row.tokenizer,
  files: { required: row.files.required, optional: row.files.optional, weights: WEIGHTS }, open: OPENERS[row.binding],
}));

/**
 * sources -> {kind, modelType} from config.json's model_type: a kind of MODEL_KINDS, or null (no
 * config.json, or a model_type no kind reads: modelType says which). A config.json that is not JSON is
 * a CheckpointError naming it.
 */
export async function checkpointKind(sources) {
  const config = filesByName(sources).get('config.json');
  if (!config) return { kind: null, modelType: null };
  let parsed;
  try {
    parsed = JSON.parse(await readSmallText(config, 'config.json', smallFileLimit('config.json')));
  } catch (error) {
    if (error instanceof CheckpointError) throw error;
    throw new CheckpointError(`config.json is not JSON (${error.message})`);
  }
  const modelType = typeof parsed?.model_type === 'string' ? parsed.model_type : null;
  return { kind: MODEL_KINDS.find((k) => k.modelTypes.includes(modelType)) ?? null, modelType };
}

/**
 * Opens the checkpoint in `sources` with its kind's opener. `expect` (a kind's id) is the kind the
 * caller's lab shows: a folder of another kind is refused with the lab that opens it. A folder whose
 * config.json names no model_type is given to the expected kind's opener (old configs lack it), which
 * says what is missing or wrong. -> {kind, opened: what the kind's opener returns}.
 */
export async function openCheckpoint(module, sources, { expect = null, ...options } = {}) {
  const { kind, modelType } = await checkpointKind(sources);
  const expected = MODEL_KINDS.find((k) => k.kind === expect) ?? null;
  if (expect && !expected) throw new Error(`no model kind '${expect}' (kinds: ${MODEL_KINDS.map((k) => k.kind).join(', ')})`);
  if (kind && expected && kind.lab.id !== expected.lab.id) {
    throw new CheckpointError(`This folder holds a ${kind.title} model (config.json's model_type is "${modelType}"), not a ${expected.title} one: `
      + `open it in the ${kind.lab.title} lab (${kind.lab.command}).`);
  }
  if (!kind && modelType && expected) {
    const here = MODEL_KINDS.filter((k) => k.lab.id === expected.lab.id);
    throw new CheckpointError(`config.json's model_type is "${modelType.slice(0, 40)}": the ${expected.lab.title} lab reads ${here.map((k) => k.title).join(' and ')} models `
      + `(model_type ${here.flatMap((k) => k.modelTypes).map((t) => `"${t}"`).join(' or ')}).`);
  }
  const chosen = kind ?? expected;
  if (!chosen) {
    throw new CheckpointError(modelType ? `config.json's model_type "${modelType.slice(0, 40)}" is not a model this app reads (${MODEL_KINDS.map((k) => k.title).join(', ')})`
      : 'no config.json: give the folder of a checkpoint (config.json and its weights)');
  }
  const opened = await chosen.open(module, sources, { ...options, kind: chosen.kind });
  checkTokenizer(opened.tokenizer, chosen.title);
  // A decoder whose vocabulary is padded past its tokenizer's (Qwen2.5): the padded ids have no text,
  // so the writer, the bars and the lens never choose them.
  const decoder = opened.gpt2;
  if (decoder && opened.tokenizer.size < decoder.config.vocabSize) decoder.limitVocabulary(opened.tokenizer.size);
  return { kind: chosen, opened };
}
