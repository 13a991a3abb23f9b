// Opens a Marian (opus-mt) checkpoint folder the user already has, entirely locally: config.json,
// source.spm, target.spm, vocab.json and model.safetensors (streamed tensor by tensor into the WASM
// module: module.loadMarian). No DOM and no Node API: sources as in checkpoint.js.
import { CheckpointError } from './checkpoint.js';
import { MarianTokenizer } from './sentencepiece.js';

const REQUIRED = ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.safetensors'];
const MAX_SMALL_BYTES = { 'config.json': 1 << 20, 'vocab.json': 64 << 20, 'source.spm': 64 << 20, 'target.spm': 64 << 20 };
const baseName = (name) => String(name).split(/[\\/]/).pop();

/** The checkpoint's files among `sources`, or a CheckpointError saying which are missing. */
export function pickMarianFiles(sources) {
  const byName = new Map();
  for (const s of sources) {
    const name = baseName(s.name);
    if (byName.has(name)) throw new CheckpointError(`two files are named ${name}: give the files of one checkpoint folder`);
    byName.set(name, s);
  }
  const missing = REQUIRED.filter((n) => !byName.has(n));
  if (missing.length) {
    const given = [...byName.keys()].slice(0, 8).join(', ') || 'no files';
    const hint = missing.includes('model.safetensors') && byName.has('pytorch_model.bin')
      ? ' This folder has pytorch_model.bin only: reading it here is not done yet; save the model as model.safetensors (save_pretrained(..., safe_serialization=True)).'
      : '';
    throw new CheckpointError(`A Marian checkpoint needs ${REQUIRED.join(', ')}; missing ${missing.join(', ')} (given: ${given}).${hint}`);
  }
  return Object.fromEntries(REQUIRED.map((n) => [n, byName.get(n)]));
}

async function readSmall(source, name) {
  if (source.size > MAX_SMALL_BYTES[name]) throw new CheckpointError(`${name} is ${source.size} bytes: too large for a ${name}; is it the right file?`);
  return source.read(0, source.size);
}

/** -> {marian (module.loadMarian's model), tokenizer (MarianTokenizer), summary, files}. */
export async function openMarianCheckpoint(module, sources, { onProgress } = {}) {
  const files = pickMarianFiles(sources);
  const config = new TextDecoder().decode(await readSmall(files['config.json'], 'config.json'));
  let tokenizer;
  try {
    tokenizer = MarianTokenizer.fromFiles(await readSmall(files['source.spm'], 'source.spm'), await readSmall(files['target.spm'], 'target.spm'),
      new TextDecoder().decode(await readSmall(files['vocab.json'], 'vocab.json')));
  } catch (error) {
    throw new CheckpointError(error.message);
  }
  const weights = files['model.safetensors'];
  const marian = await module.loadMarian({ config, size: weights.size, read: weights.read, onProgress });
  if (tokenizer.size !== undefined && tokenizer.size > marian.config.vocabSize) {
    marian.delete();
    throw new CheckpointError(`vocab.json has ${tokenizer.size} tokens but config.json's vocab_size is ${marian.config.vocabSize}: they belong to different models`);
  }
  return { marian, tokenizer, summary: marian.summary, files: REQUIRED };
}
