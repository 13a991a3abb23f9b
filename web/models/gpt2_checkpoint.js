// Opens a decoder checkpoint folder (gpt2, distilgpt2, gpt2-medium, a fine-tune saved with
// save_pretrained) entirely locally: config.json, the tokenizer as tokenizer.json (or GPT-2's vocab.json +
// merges.txt), tokenizer_config.json and generation_config.json where there (BOS/EOS, the chat
// template), and the weights as model.safetensors or pytorch_model.bin (with both, model.safetensors is
// read, as from_pretrained does), streamed tensor by tensor into the WASM module
// (module.loadCheckpoint(kind)). The tokenizer is @huggingface/tokenizers' (web/tokenizers/hf_tokenizer.js).
// No DOM and no Node API: sources as in checkpoint_files.js.
import { CheckpointError, filesByName, givenNames, pickWeights, weightsToLoad, readSmallText, smallFileLimit } from './checkpoint_files.js';
import { HfTokenizer, parseConfigJson } from '../tokenizers/hf_tokenizer.js';

const readText = (source, name) => readSmallText(source, name, smallFileLimit(name));

// The small JSON files' texts -> objects (an Error naming a broken one), as HfTokenizer's options.
const parseOptions = ({ tokenizerConfig, generationConfig, modelConfig }) => ({
  tokenizerConfig: parseConfigJson(tokenizerConfig, 'tokenizer_config.json'),
  generationConfig: parseConfigJson(generationConfig, 'generation_config.json'),
  modelConfig: parseConfigJson(modelConfig, 'config.json'),
});

/**
 * The folder's files, or a CheckpointError saying which are missing: {config, vocab, merges,
 * tokenizerJson, tokenizerConfig, generationConfig, weights}. tokenizer.json is read where there (the
 * library reads it whole); vocab.json + merges.txt only without it.
 */
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
  const json = byName.get('tokenizer.json') ?? null;
  return {
    config: byName.get('config.json'),
    vocab: json ? null : byName.get('vocab.json'),
    merges: json ? null : byName.get('merges.txt'),
    tokenizerJson: json,
    tokenizerConfig: byName.get('tokenizer_config.json') ?? null,
    generationConfig: byName.get('generation_config.json') ?? null,
    weights,
  };
}

/** -> {gpt2 (the module's Decoder of that kind), tokenizer (HfTokenizer), summary, files (those read)}. */
export async function openGpt2Checkpoint(module, sources, { onProgress, kind = 'gpt2' } = {}) {
  const files = pickGpt2Files(sources);
  const config = await readText(files.config, 'config.json');
  const optional = async (source, name) => (source ? readText(source, name) : null);
  let tokenizer;
  try {
    const options = { tokenizerConfig: await optional(files.tokenizerConfig, 'tokenizer_config.json'),
      generationConfig: await optional(files.generationConfig, 'generation_config.json'), modelConfig: config };
    tokenizer = files.vocab
      ? HfTokenizer.fromGpt2Files(await readText(files.vocab, 'vocab.json'), await readText(files.merges, 'merges.txt'), parseOptions(options))
      : HfTokenizer.fromFiles({ tokenizerJson: await readText(files.tokenizerJson, 'tokenizer.json'), ...options });
  } catch (error) {
    throw new CheckpointError(error.message);
  }
  const { name } = files.weights;
  // The registry's kind (a decoder kind that reads GPT-2's BPE: registry.js's opener of the decoder binding).
  const gpt2 = await module.loadCheckpoint(kind, { config, onProgress, ...(await weightsToLoad(files.weights)) });
  if (tokenizer.size > gpt2.config.vocabSize) {
    gpt2.delete();
    throw new CheckpointError(`the tokenizer has ${tokenizer.size} tokens but config.json's vocab_size is ${gpt2.config.vocabSize}: they belong to different models`);
  }
  const read = ['config.json', ...(files.vocab ? ['vocab.json', 'merges.txt'] : ['tokenizer.json']),
    ...(files.tokenizerConfig ? ['tokenizer_config.json'] : []), ...(files.generationConfig ? ['generation_config.json'] : [])];
  return { gpt2, tokenizer, summary: gpt2.summary, files: [...read, name] };
}
