// Lab 06, "Translation" (course notebook 04's end: Helsinki-NLP/opus-mt-en-fr translating "The cat sat
// on the mat." and a heatmap of source x target attention): open a Marian checkpoint the user already
// has, translate, and see the cross-attention behind each generated token. Nothing trains and nothing
// is downloaded. This file only declares; the sections are in 06_translation_sections.js. No DOM here.
import { backendProperty, colourRangeProperty, commandOptions, defineLab, paletteProperty } from './common.js';
import { SECTIONS } from './06_translation_sections.js';
import { labFiles, labReads, openCheckpoint } from '../models/registry.js';
import { ablateProperty } from './head_list.js';
import { translationPrediction } from './06_translation_predict.js';

const INTRO = 'A trained translation model (Marian, the opus-mt models of the Hugging Face Hub): type an English '
  + 'sentence, watch it translated word by word, and see which source words each new word attended to. Open it by its '
  + 'Hub id (Helsinki-NLP/opus-mt-en-fr is filled in), downloaded once and then kept in this browser for offline use, '
  + `or open the folder of a checkpoint you have: ${labReads('translation')}. Nothing you type or open is uploaded.`;

const oneHead = (v) => v.crossView === 'one';
const view = (extra) => ({ effect: 'view', page: true, ...extra });

const properties = [
  view({ name: 'text', type: 'text', default: 'The cat sat on the mat.', maxLength: 1000, label: 'Source sentence',
    section: 'translate', help: 'Split into pieces by the checkpoint\'s source.spm; </s> is added at the end, as the model was trained.' }),
  // How the translation is searched for: in the settings beside the figures, so that the sentence, the
  // translation and the cross-attention share the first screen.
  view({ name: 'beams', type: 'int', default: 4, min: 1, max: 16, label: 'Beams', group: 'Decoding',
    cliDefault: 'the checkpoint\'s num_beams, as generate() uses it',
    help: '1: greedy (the likeliest token at each step). More: beam search keeps that many partial translations '
      + '(opus-mt-en-fr\'s config says 4).' }),
  view({ name: 'maxLength', type: 'int', default: 64, min: 2, max: 512, label: 'Max length', group: 'Decoding',
    cliDefault: 'the checkpoint\'s max_length, as generate() uses it',
    help: 'Generated tokens at most (the start token included, as generate() counts); the last one allowed is </s>.' }),
  // Tokens shown, layer and head are explored, not typed: steppers (− and +, the arrow keys) that answer
  // at once, up to the open model's last layer and head (maxOf: the checkpoint's summary -> the largest).
  view({ name: 'shown', type: 'int', default: 0, min: 0, max: 512, stepper: true, label: 'Tokens shown',
    section: 'translate', help: 'How many generated tokens every figure shows (0 = all): "Next word" adds one, Play adds one every 0.6 s.' }),
  view({ name: 'layer', type: 'int', default: 0, min: 0, max: 63, stepper: true, maxOf: (opened) => opened.layers - 1,
    label: 'Layer', section: 'cross', when: oneHead, whenText: 'applies to --cross-view one only',
    help: 'Which decoder layer\'s cross-attention '
      + '(0 = the first).' }),
  view({ name: 'head', type: 'int', default: 0, min: 0, max: 127, stepper: true, maxOf: (opened) => opened.heads - 1,
    label: 'Head', section: 'cross', when: oneHead, whenText: 'applies to --cross-view one only',
    help: 'Which head of the layer (0 = the first).' }),
  // Notebook 04 draws the last layer's cross-attention averaged over its heads; that is the first view,
  // the mean of every layer and one head a click away.
  view({ name: 'crossView', type: 'choice', default: 'last', label: 'Show', section: 'cross',
    help: 'The last layer\'s mean over its heads (what notebook 04 draws), the mean over all layers and heads, or one '
      + 'layer and head (the steppers).',
    choices: [{ value: 'last', label: 'last layer, mean of heads' }, { value: 'all', label: 'all layers, mean' },
      { value: 'one', label: 'one layer and head' }] }),
  view({ name: 'side', type: 'choice', default: 'encoder', label: 'Which attention', section: 'views',
    help: 'The encoder\'s self-attention over the source, the decoder\'s over its own words, or the cross-attention '
      + 'from the translation to the source.',
    choices: [{ value: 'encoder', label: 'encoder' }, { value: 'decoder', label: 'decoder' },
      { value: 'cross', label: 'cross' }] }),
  // The views show the encoder's layers or the decoder's: the larger count bounds the stepper, and the
  // section says when a layer does not exist on the side chosen.
  view({ name: 'viewLayer', type: 'int', default: 0, min: 0, max: 63, stepper: true,
    maxOf: (opened) => Math.max(opened.layers, opened.encoderLayers) - 1, label: 'Layer', section: 'views',
    help: 'Which layer the head view and the heatmap show (0 = the first).',
    pageHelp: 'Click a thumbnail of the model view to choose.' }),
  view({ name: 'viewHead', type: 'int', default: 0, min: 0, max: 127, stepper: true,
    maxOf: (opened) => Math.max(opened.heads, opened.encoderHeads) - 1, label: 'Head', section: 'views',
    help: 'Which head of the layer (0 = the first).' }),
  ablateProperty('the decoder\'s cross-attention heads (those the cross-attention views show).', { section: 'ablate' }),
  { ...backendProperty('Where the attention the figures show is computed (WebGPU included). The decoding loop that '
    + 'chooses each word runs on a CPU kernel; the badge says which ran what.'), effect: 'view', page: true },
  paletteProperty(['viridis', 'cividis', 'magma', 'greys'], 'Colour scale of the attention maps, dark to bright (where '
    + 'dark starts: Colour range). viridis and cividis are read alike by colour-blind readers; greys prints.'),
  colourRangeProperty(),
];

export const translationLab = defineLab({
  id: 'translation',
  title: 'Translation',
  subtitle: 'Lab 6 — a Marian (opus-mt) model from the Hub or your disk translates; cross-attention per word',
  notebook: '04_intro_to_attention (translation)',
  summary: 'Open a Marian translation model (opus-mt) by its Hub id or from your disk, translate word by word with '
    + 'greedy or beam search, and see the cross-attention behind each generated word.',
  thumbnail: {
    label: 'Cross-attention of a translation: each target word reads mostly one source word, roughly in order',
    cells: () => [[0.8, 0.1, 0.05, 0.05, 0], [0.1, 0.7, 0.1, 0.05, 0.05], [0.05, 0.1, 0.1, 0.7, 0.05],
      [0.05, 0.05, 0.7, 0.1, 0.1], [0.05, 0.05, 0.1, 0.1, 0.7]],
  },
  properties,
  // Links made before "Show" (crossView) had average=true|false: false was one layer and head.
  renamedLinks: { average: (text) => ({ crossView: text === 'false' ? 'one' : 'all' }) },
  presets: [],
  intro: () => INTRO,
  open: {
    title: 'Open a checkpoint',
    hubExample: 'Helsinki-NLP/opus-mt-en-fr', // the Hub id the field starts with: one click from arriving to its heads
    hubSuggestions: ['Helsinki-NLP/opus-mt-en-de', 'Helsinki-NLP/opus-mt-fr-en'], // others this lab reads
    // What it reads comes from the registry's row of this lab's kind (web/models/registry.js).
    text: 'Open a Marian model by its Hub id, or choose the folder of a Marian (opus-mt) checkpoint, or drop it (or '
      + `its files) here. Read: ${labReads('translation')} (model.safetensors when the folder has both). Only the Hub `
      + 'id is sent anywhere (to the Hub, to download it).',
    files: labFiles('translation'),
    async load(module, sources, { onProgress, name } = {}) {
      const { opened } = await openCheckpoint(module, sources, { lab: 'translation', onProgress });
      const c = opened.summary.config;
      const label = name || 'checkpoint';
      const summary = {
        name: label,
        // Decoded as generate() decodes it: with the checkpoint's own num_beams and max_length, unless the
        // link or the user chose others (web/ui/lab_page.js applies these to settings left at their default).
        settings: { beams: Math.min(Math.max(c.numBeams, 1), 16), maxLength: Math.min(Math.max(c.maxLength, 2), 512) },
        // The decoder's layers and heads (the cross-attention's), and the encoder's: the steppers' ends.
        layers: c.decoderLayers, heads: c.decoderHeads, encoderLayers: c.encoderLayers, encoderHeads: c.encoderHeads,
        text: `${label}: ${c.encoderLayers} + ${c.decoderLayers} layers, ${c.decoderHeads} heads, d_model ${c.dModel}, `
          + `vocabulary ${c.vocabSize}, `
          + `${(opened.summary.parameters / 1e6).toFixed(opened.summary.parameters < 1e6 ? 3 : 1)} M weights read from `
          + `${opened.summary.file}; config: ${c.numBeams} beams, max length ${c.maxLength} (used, as generate() uses `
          + 'them, unless you choose others).',
      };
      return { state: { ...opened, name: label, cache: null }, summary };
    },
    dispose(state) {
      state?.model?.delete();
    },
  },
  sections: SECTIONS,
  panels: ['open', 'section:translate', 'section:cross', 'section:views', 'section:ablate'],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  // Once a checkpoint is open, the open panel steps down under the stage (lab_page.js).
  firstScreen: { panels: ['open', 'section:translate', 'section:cross'], figure: '[data-figure="translation"]',
    action: '#action-play' },
  // Predict, then run (issue 39): under the translation and its buttons, above the cross-attention heatmap.
  predict: translationPrediction,
  predictIn: 'section:translate',
  figureStem: () => 'translation',
  // Its headless side (web/cli/attnlab.mjs runs a lab's command from this declaration alone): the
  // settings it takes are the page's own (same names, ranges and defaults), then its own options.
  command: {
    name: 'translate', module: '../cli/translate.mjs',
    about: 'a Marian (opus-mt) checkpoint, from its folder or by its Hub id, translates (the Translation lab '
      + 'headless): the source and target pieces and ids, the translation, and each generated token\'s cross-attention '
      + '[token][layer][head][source]; --png/--svg write the page\'s cross-attention heatmap (the last layer\'s mean '
      + 'over its heads as notebook 04 draws it; --cross-view all: the mean of every layer and head; --cross-view one '
      + '--layer L --head H); --ablate L.H,... switches cross-attention heads off (and gives the translation before).',
    properties: ['text', 'beams', 'maxLength', 'layer', 'head', 'crossView', 'ablate', 'backend'],
    options: [
      commandOptions.model(labReads('translation')),
      commandOptions.json(), commandOptions.png('the cross-attention heatmap'), commandOptions.svg('the same heatmap'),
    ],
  },
});
