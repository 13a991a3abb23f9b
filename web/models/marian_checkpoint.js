// Opens a Marian (opus-mt) checkpoint folder the user already has, entirely locally: config.json,
// source.spm, target.spm, vocab.json, and the weights as model.safetensors or pytorch_model.bin (most
// opus-mt folders have only the latter; with both, model.safetensors is read), streamed tensor by tensor
// into the WASM module (module.loadMarian). No DOM and no Node API: sources as in checkpoint_files.js.
import { CheckpointError, filesByName, givenNames, pickWeights, weightsToLoad, readSmallFile, smallFileLimit } from './checkpoint_files.js';
import { MarianTokenizer } from '../tokenizers/sentencepiece.js';

const REQUIRED = ['config.json', 'source.spm', 'target.spm', 'vocab.json'];

/**
 * The checkpoint's files among `sources`, or a CheckpointError saying which are missing:
 * {'config.json', 'source.spm', 'target.spm', 'vocab.json', weights: {name, format, source}}.
 */
export function pickMarianFiles(sources) {
  const byName = filesByName(sources);
  const missing = REQUIRED.filter((n) => !byName.has(n));
  const weights = pickWeights(byName);
  if (!weights) missing.push('model.safetensors or pytorch_model.bin');
  if (missing.length) {
    const given = givenNames(byName);
    throw new CheckpointError(`A Marian checkpoint needs ${REQUIRED.join(', ')} and model.safetensors or pytorch_model.bin; missing ${missing.join(', ')} (given: ${given}).`);
  }
  return { ...Object.fromEntries(REQUIRED.map((n) => [n, byName.get(n)])), weights };
}

const readSmall = (source, name) => readSmallFile(source, name, smallFileLimit(name));

/** -> {marian (module.loadMarian's model), tokenizer (MarianTokenizer), summary ({file, config, parameters, skipped}), files (those read)}. */
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
  const { name } = files.weights;
  const marian = await module.loadMarian({ config, onProgress, ...(await weightsToLoad(files.weights)) });
  if (tokenizer.size !== undefined && tokenizer.size > marian.config.vocabSize) {
    marian.delete();
    throw new CheckpointError(`vocab.json has ${tokenizer.size} tokens but config.json's vocab_size is ${marian.config.vocabSize}: they belong to different models`);
  }
  // summary.file: the weights file read ('model.safetensors' or 'pytorch_model.bin').
  return { marian, tokenizer, summary: marian.summary, files: [...REQUIRED, name] };
}
