// Opens a BERT checkpoint folder the user already has (the files of bert-base-uncased,
// prajjwal1/bert-tiny, any BERT of the Hugging Face Hub), entirely locally: config.json, vocab.txt, the
// weights as model.safetensors or pytorch_model.bin (with both, model.safetensors is read, as
// from_pretrained does), and tokenizer_config.json when present. The weights are streamed tensor by
// tensor into the WASM module (module.loadBert); the tokenizer is web/tokenizers/wordpiece.js. No DOM and no
// Node API here: the worker hands it browser Files (web/io/file_source.js), the CLI file handles (web/cli/).
//
// A source is {name, size, read(offset, length) -> Promise<Uint8Array>, text() -> Promise<string>}.
import { WordPieceTokenizer, tokenizerOptions } from '../tokenizers/wordpiece.js';
import { CheckpointError, filesByName, givenNames, pickWeights, weightsToLoad, readSmallText, smallFileLimit } from './checkpoint_files.js';

export { CheckpointError };

const REQUIRED = ['config.json', 'vocab.txt'];
// Reading past this is a mistake (a wrong file with the right name), not a config or a vocabulary.

/**
 * The checkpoint's files among `sources` (by base name; a dropped folder may hold others), or a
 * CheckpointError that says which are missing and what was given.
 */
export function pickCheckpointFiles(sources) {
  const byName = filesByName(sources);
  const missing = REQUIRED.filter((n) => !byName.has(n));
  const weights = pickWeights(byName);
  if (!weights) missing.push('model.safetensors or pytorch_model.bin');
  if (missing.length) {
    const given = givenNames(byName);
    const hint = !weights && [...byName.keys()].some((n) => n.endsWith('.h5') || n.endsWith('.msgpack'))
      ? ' TensorFlow and Flax weights are not read here: the PyTorch ones (model.safetensors or pytorch_model.bin) are.' : '';
    throw new CheckpointError(`A BERT checkpoint needs ${REQUIRED.join(', ')} and model.safetensors or pytorch_model.bin; missing ${missing.join(', ')} (given: ${given}).${hint}`);
  }
  return {
    config: byName.get('config.json'),
    vocab: byName.get('vocab.txt'),
    weights,
    tokenizerConfig: byName.get('tokenizer_config.json') ?? null,
  };
}

const readText = (source, name) => readSmallText(source, name, smallFileLimit(name));

/**
 * Opens a checkpoint (kind: the registry's 'bert' or 'distilbert', whose model is a BertModel): {bert (module.loadBert's model), tokenizer, options (with notes on where each
 * tokenizer setting came from), summary, files}. onProgress({bytes, total, tensor}) while the weights
 * stream in. Errors name the file (and the tensor): a CheckpointError or the module's AttnLabError.
 */
export async function openBertCheckpoint(module, sources, { onProgress, name, kind = 'bert' } = {}) {
  const files = pickCheckpointFiles(sources);
  const configText = await readText(files.config, 'config.json');
  const tokenizerConfigText = files.tokenizerConfig ? await readText(files.tokenizerConfig, 'tokenizer_config.json') : null;
  let options;
  try {
    options = tokenizerOptions(configText, tokenizerConfigText, name);
  } catch (error) {
    throw new CheckpointError(error.message);
  }
  let tokenizer;
  try {
    tokenizer = WordPieceTokenizer.fromVocabText(await readText(files.vocab, 'vocab.txt'), options);
  } catch (error) {
    throw new CheckpointError(error.message);
  }
  // The weights last: config.json and vocab.txt are checked before 440 MB are read.
  const { name: weightsName } = files.weights;
  const bert = await module.loadCheckpoint(kind, { config: configText, onProgress, ...(await weightsToLoad(files.weights)) });
  if (tokenizer.size > bert.config.vocabSize) {
    bert.delete();
    throw new CheckpointError(`vocab.txt has ${tokenizer.size} tokens but config.json's vocab_size is ${bert.config.vocabSize}: they belong to different models`);
  }
  const read = [files.config, files.vocab, files.tokenizerConfig].filter(Boolean).map((f) => f.name);
  return { bert, tokenizer, options, summary: bert.summary, files: [...read, weightsName] };
}
