// Opens a GPT-2 checkpoint folder (gpt2, distilgpt2, gpt2-medium, a fine-tune saved with
// save_pretrained) entirely locally: config.json, the tokenizer as vocab.json + merges.txt (or
// tokenizer.json), and the weights as model.safetensors or pytorch_model.bin (with both,
// model.safetensors is read, as from_pretrained does), streamed tensor by tensor into the WASM module
// (module.loadCheckpoint('gpt2')). The tokenizer is web/tokenizers/gpt2_bpe.js. No DOM and no Node API:
// sources as in checkpoint_files.js.
import { CheckpointError, filesByName, givenNames, pickWeights, readSmallText, smallFileLimit } from './checkpoint_files.js';
import { Gpt2BpeTokenizer } from '../tokenizers/gpt2_bpe.js';

const readText = (source, name) => readSmallText(source, name, smallFileLimit(name));

/** The folder's files, or a CheckpointError saying which are missing: {config, vocab, merges, tokenizerJson, weights}. */
export function pickGpt2Files(sources) {
  const byName = filesByName(sources);
  const hasPair = byName.has('vocab.json') && byName.has('merges.txt');
  const missing = [];
  if (!byName.has('config.json')) missing.push('config.json');
  if (!hasPair && !byName.has('tokenizer.json')) missing.push('vocab.json and merges.txt (or tokenizer.json)');
  const weights = pickWeights(byName);
  if (!weights) missing.push('model.safetensors or pytorch_model.bin');
  if (missing.length) {
    throw new CheckpointError(`A GPT-2 checkpoint needs config.json, vocab.json and merges.txt (or tokenizer.json), and model.safetensors or pytorch_model.bin; missing ${missing.join(', ')} (given: ${givenNames(byName)}).`);
  }
  return {
    config: byName.get('config.json'),
    vocab: hasPair ? byName.get('vocab.json') : null,
    merges: hasPair ? byName.get('merges.txt') : null,
    tokenizerJson: hasPair ? null : byName.get('tokenizer.json'),
    weights,
  };
}

/** -> {gpt2 (the module's Decoder of that kind), tokenizer (Gpt2BpeTokenizer), summary, files (those read)}. */
export async function openGpt2Checkpoint(module, sources, { onProgress, kind = 'gpt2' } = {}) {
  const files = pickGpt2Files(sources);
  const config = await readText(files.config, 'config.json');
  let tokenizer;
  try {
    tokenizer = files.vocab
      ? Gpt2BpeTokenizer.fromFiles(await readText(files.vocab, 'vocab.json'), await readText(files.merges, 'merges.txt'))
      : Gpt2BpeTokenizer.fromTokenizerJson(await readText(files.tokenizerJson, 'tokenizer.json'));
  } catch (error) {
    throw new CheckpointError(error.message);
  }
  const { name, format, source } = files.weights;
  // The registry's kind (a decoder kind that reads GPT-2's BPE: registry.js's opener of the decoder binding).
  const gpt2 = await module.loadCheckpoint(kind, { config, size: source.size, read: source.read, onProgress, format });
  if (tokenizer.size > gpt2.config.vocabSize) {
    gpt2.delete();
    throw new CheckpointError(`the tokenizer has ${tokenizer.size} tokens but config.json's vocab_size is ${gpt2.config.vocabSize}: they belong to different models`);
  }
  const read = files.vocab ? ['config.json', 'vocab.json', 'merges.txt'] : ['config.json', 'tokenizer.json'];
  return { gpt2, tokenizer, summary: gpt2.summary, files: [...read, name] };
}
