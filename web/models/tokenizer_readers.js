// How each kind's tokenizer is read from its folder, keyed by the registry row's `tokenizer`
// (core/models/model_kinds.cpp): the one place where a kind's files become a tokenizer. The opener
// (web/models/registry.js) hands each reader its picked files; a new kind that reads its tokenizer as an
// existing one does needs no row here. No DOM and no Node API.
//
// A reader: ({has(name), text(name), bytes(name), config (config.json's text), name (the model's, for
// the notes)}) -> {tokenizer, options?}; `named` is what a message calls the tokenizer's vocabulary.
import { WordPieceTokenizer, tokenizerOptions } from '../tokenizers/wordpiece.js';
import { MarianTokenizer } from '../tokenizers/sentencepiece.js';
import { HfTokenizer, parseConfigJson } from '../tokenizers/hf_tokenizer.js';
import { InductionTokenizer } from '../tokenizers/induction_tokenizer.js';

const optionalText = async (files, name) => (files.has(name) ? files.text(name) : null);

export const TOKENIZER_READERS = {
  // BERT's vocab.txt, cased or not as config.json / tokenizer_config.json say (options.notes: where each
  // setting came from).
  wordpiece: {
    named: 'vocab.txt',
    async read(files) {
      const options = tokenizerOptions(files.config, await optionalText(files, 'tokenizer_config.json'), files.name);
      return { tokenizer: WordPieceTokenizer.fromVocabText(await files.text('vocab.txt'), options), options };
    },
  },
  // Marian's two SentencePiece models and the shared vocabulary.
  sentencepiece: {
    named: 'vocab.json',
    async read(files) {
      return { tokenizer: MarianTokenizer.fromFiles(await files.bytes('source.spm'), await files.bytes('target.spm'),
        await files.text('vocab.json')) };
    },
  },
  // The Induction lab's tokens (a TransformerLens model it trained): from config.json alone, d_vocab and,
  // for the text task, the characters the export's converter wrote there (web/models/hooked_transformer.js).
  induction: {
    named: 'the Induction lab\'s tokens',
    async read(files) {
      const config = parseConfigJson(files.config, 'config.json');
      if (!(Number.isInteger(config?.d_vocab) && config.d_vocab >= 2 && config.d_vocab <= 1_000_000)) {
        throw new Error('config.json: "d_vocab" must be a whole number in [2, 1000000]');
      }
      const alphabet = typeof config.attnlab_alphabet === 'string' ? config.attnlab_alphabet : null;
      return { tokenizer: new InductionTokenizer({ vocabSize: config.d_vocab, alphabet }) };
    },
  },
  // @huggingface/tokenizers: tokenizer.json, or GPT-2's vocab.json + merges.txt; tokenizer_config.json and
  // generation_config.json where there (BOS/EOS, the chat template).
  hf_tokenizers: {
    named: 'the tokenizer',
    async read(files) {
      const options = { tokenizerConfig: await optionalText(files, 'tokenizer_config.json'),
        generationConfig: await optionalText(files, 'generation_config.json'), modelConfig: files.config };
      // The file's own patterns run under a deadline (issue 48): a Split regex can backtrack for ever.
      if (files.has('tokenizer.json')) {
        return { tokenizer: await HfTokenizer.fromFiles({ tokenizerJson: await files.text('tokenizer.json'), ...options })
          .watchPatterns() };
      }
      return { tokenizer: HfTokenizer.fromGpt2Files(await files.text('vocab.json'), await files.text('merges.txt'), {
        tokenizerConfig: parseConfigJson(options.tokenizerConfig, 'tokenizer_config.json'),
        generationConfig: parseConfigJson(options.generationConfig, 'generation_config.json'),
        modelConfig: parseConfigJson(options.modelConfig, 'config.json'),
      }) };
    },
  },
};
