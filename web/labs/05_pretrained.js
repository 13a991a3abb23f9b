// Lab 05, "Pretrained" (course notebook 03's end: BertModel.from_pretrained and a heatmap of layer 0,
// head 0): open a BERT checkpoint the user already has, entirely locally, and see every layer's and
// head's attention. Nothing trains and nothing is downloaded: the lab has no trainer; its `open`
// declares the files it reads (the page's folder picker and drop zone, the worker's loader, the CLI's
// --model). This file only declares; the sections are in 05_pretrained_sections.js. No DOM here.
import { backendProperty, colourRangeProperty, commandOptions, defineLab, paletteProperty } from './common.js';
import { SECTIONS } from './05_pretrained_sections.js';
import { labFiles, labReads, openCheckpoint } from '../models/registry.js';
import { ablateProperty } from './head_list.js';
import { pretrainedPrediction } from './05_pretrained_predict.js';

const INTRO = 'A trained BERT: type a sentence and see where each of its attention heads looks. Open it by its Hugging '
  + 'Face Hub id (bert-base-uncased is filled in: one click), downloaded once and then kept in this browser so it '
  + `opens again with no network; or open the folder of a checkpoint you already have (${labReads('pretrained')}). `
  + 'Nothing you type or open is uploaded.';

const view = (extra) => ({ effect: 'view', page: true, ...extra });

const properties = [
  view({ name: 'text', type: 'text', default: 'The quick brown fox jumps over the lazy dog', maxLength: 2000,
    label: 'Sentence', section: 'model',
    help: 'Split into word pieces by the checkpoint\'s own vocabulary (vocab.txt). Type [MASK] for a '
      + 'word the model should guess.' }),
  view({ name: 'pair', type: 'text', default: '', maxLength: 2000, label: 'Second sentence (optional)',
    section: 'model', help: 'A sentence pair, as BERT reads two sentences: [CLS] A [SEP] B [SEP], B with token type 1.' }),
  view({ name: 'hideSpecial', type: 'bool', default: false, label: 'Hide [CLS] and [SEP]', section: 'model',
    help: 'Many heads put most of their weight on [SEP] or [CLS]: hide them to see the rest (rows then no '
      + 'longer sum to 1).' }),
  // Layer, head and query token are explored, not typed: steppers (− and +, the arrow keys) that answer
  // at once, up to the open model's last layer and head (maxOf: the checkpoint's summary -> the largest).
  view({ name: 'layer', type: 'int', default: 0, min: 0, max: 63, stepper: true, maxOf: (opened) => opened.layers - 1,
    label: 'Layer', section: 'head',
    help: 'Which layer the head view, the heatmap and the neuron view show (0 = the first).',
    pageHelp: 'Click a thumbnail of the model view to choose.' }),
  view({ name: 'head', type: 'int', default: 0, min: 0, max: 127, stepper: true, maxOf: (opened) => opened.heads - 1,
    label: 'Head', section: 'head', help: 'Which head of the layer (0 = the first).' }),
  view({ name: 'average', type: 'bool', default: false, label: 'Average the heads', section: 'head',
    help: 'Show the mean of the layer\'s heads instead of one head.' }),
  view({ name: 'token', type: 'int', default: 1, min: 0, max: 8191, stepper: true, label: 'Query token',
    section: 'neuron', help: 'Position of the query token the neuron view follows (0 is [CLS]). Click a token on the left of the '
      + 'head view to choose.' }),
  ablateProperty('the encoder\'s self-attention heads.', { section: 'ablate' }),
  { ...backendProperty('Where the attention kernel runs in every layer. A backend that is not available falls back, '
    + 'and the badge says why.'), effect: 'view', page: true },
  paletteProperty(['viridis', 'cividis', 'magma', 'greys'], 'Colour scale of the attention maps, dark to bright (where '
    + 'dark starts: Colour range). viridis and cividis are read alike by colour-blind readers; greys prints.'),
  colourRangeProperty(),
];

export const pretrainedLab = defineLab({
  id: 'pretrained',
  title: 'Pretrained',
  subtitle: 'Lab 5 — a BERT from the Hub or your disk, every layer and head',
  notebook: '03_self_attention (BERT)',
  summary: 'Open a BERT (or DistilBERT) by its Hub id or from your disk (config.json, vocab.txt, the weights) and see '
    + 'every layer\'s and head\'s attention, the neuron view and [MASK] fill-in.',
  thumbnail: {
    label: 'A BERT head that attends to the next token: weights just above the diagonal',
    cells: () => [[0.1, 0.8, 0.05, 0.05, 0], [0.05, 0.1, 0.8, 0.05, 0], [0, 0.05, 0.1, 0.8, 0.05],
      [0, 0, 0.05, 0.15, 0.8], [0.3, 0.1, 0.1, 0.1, 0.4]],
  },
  properties,
  presets: [],
  intro: () => INTRO,
  open: {
    title: 'Open a checkpoint',
    hubExample: 'bert-base-uncased', // the Hub id the field starts with: one click from arriving to its heads
    hubSuggestions: ['distilbert-base-uncased', 'bert-base-multilingual-cased', 'prajjwal1/bert-tiny'],
    // others this lab reads
    // What it reads comes from the registry's rows of this lab's kinds (web/models/registry.js).
    text: 'Open a BERT or DistilBERT by its Hub id, or choose the folder of one, or drop it (or its files) here. Read: '
      + `${labReads('pretrained')} (weights in fp32, fp16 or bf16). Only the Hub id is sent anywhere (to the Hub, `
      + 'to download it).',
    files: labFiles('pretrained'),
    /** sources (web/models/checkpoint_files.js) -> {state, summary}: the worker keeps state, the page shows summary. */
    async load(module, sources, { onProgress, name } = {}) {
      const { kind, opened } = await openCheckpoint(module, sources, { lab: 'pretrained', onProgress, name });
      const c = opened.summary.config;
      const label = name || 'checkpoint';
      const summary = {
        name: label,
        text: `${label}: ${kind.kind === 'bert' ? '' : `a ${kind.title}, `}${c.layers} layers × ${c.heads} heads, `
          + `hidden size ${c.hiddenSize}, vocabulary ${c.vocabSize}, `
          + `${(opened.summary.parameters / 1e6).toFixed(opened.summary.parameters < 1e6 ? 3 : 1)} M weights read `
          + `(${opened.summary.naming})${opened.summary.mlm ? '; with the [MASK] head' : '; no [MASK] head'}${opened.options.doLowerCase ? '; uncased' : '; cased'}.`,
        layers: c.layers, heads: c.heads, maxPositions: c.maxPositions, mlm: opened.summary.mlm,
        skipped: opened.summary.skipped, tokenizer: opened.options.notes,
      };
      return { state: { ...opened, name: label, cache: null }, summary };
    },
    dispose(state) {
      state?.model?.delete();
    },
  },
  sections: SECTIONS,
  panels: ['open', 'section:model', 'section:head', 'section:neuron', 'section:mask', 'section:ablate'],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  // Once a checkpoint is open, the open panel steps down under the stage (lab_page.js).
  firstScreen: { panels: ['open', 'section:model'], figure: 'canvas[data-figure="model-grid"]', action: '#prop-text' },
  // Predict, then run (issue 39): under the model view, where it waits before a checkpoint is open.
  predict: pretrainedPrediction,
  predictIn: 'section:model',
  figureStem: () => 'pretrained',
  // Its headless side (web/cli/attnlab.mjs runs a lab's command from this declaration alone): the
  // settings it takes are the page's own (same names, ranges and defaults), then its own options.
  command: {
    name: 'pretrained', module: '../cli/pretrained.mjs',
    about: 'a BERT checkpoint, from its folder or by its Hub id (the Pretrained lab headless): the word pieces, every '
      + 'layer\'s per-head attention [layer][head][query][key] and the [MASK] predictions; --ablate L.H,... switches '
      + 'heads off (the guesses before and the first guess\'s logit change); --png/--svg write the page\'s heatmap '
      + 'of --layer/--head.',
    properties: ['text', 'pair', 'hideSpecial', 'layer', 'head', 'average', 'ablate', 'backend'],
    options: [
      commandOptions.model(labReads('pretrained')),
      commandOptions.json(), commandOptions.png('the head heatmap of --layer/--head'),
      commandOptions.svg('the same heatmap'),
    ],
  },
});
