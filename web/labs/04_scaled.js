// Lab 04, "Scaled dot-product" (course notebooks 04_intro_to_attention and 03_self_attention):
// softmax(QK^T / sqrt(d_k)) V step by step on a small editable example, the course's SelfAttention over
// a sentence of your own, and why attention at all. Nothing trains here: the lab lists no training
// panels and has no trainer, weights or CLI run (`attnlab attention` is its headless side).
// This file only declares; the sections are in 04_scaled_sections.js. No DOM here.
import { backendProperty, colourRangeProperty, commandOptions, defineLab, paletteProperty } from './common.js';
import { MAX_SENTENCES, MAX_TOKENS, SECTIONS } from './04_scaled_sections.js';
import { buildCheckSection, buildStepProperty, studentProperty } from './builds/build_section.js';
import { simpleAttentionBuild } from './builds/simple_attention.js';
import { selfAttentionBuild } from './builds/self_attention.js';
import { scaledPrediction } from './04_scaled_predict.js';

const INTRO = 'Attention in three moves: score every key against a query (a dot product), turn the scores into weights '
  + 'that sum to 1 (a softmax, after dividing by √d_k), and take the weighted sum of the values. Below, each stage '
  + 'is a matrix you can edit and hover; then the course\'s self-attention layer runs over a sentence you type.';

const steps = (extra) => ({ effect: 'view', group: 'Step by step', section: 'steps', page: true, ...extra });
const sentence = (extra) => ({ effect: 'view', group: 'Sentence', section: 'sentence', page: true, ...extra });

const properties = [
  steps({ name: 'tokens', type: 'int', default: 5, min: 2, max: 12, slider: true, label: 'Tokens',
    help: 'How many tokens (rows of Q, K and V): the notebook\'s example has 5.' }),
  steps({ name: 'dk', type: 'int', default: 4, min: 1, max: 256, slider: true, label: 'd_k',
    help: 'Width of the queries and keys (and values here). Slide it up with and without the scale: unscaled, the '
      + 'softmax saturates.' }),
  steps({ name: 'scaled', type: 'bool', default: true, label: 'Divide by √d_k',
    help: 'Scale the scores by 1/√d_k before the softmax, as the formula says. Untick to see why it is there.' }),
  steps({ name: 'stepMask', type: 'choice', default: 'none', label: 'Mask',
    help: 'causal: a query may look only at itself and earlier keys (−∞ above the diagonal, weight exactly 0).',
    choices: [{ value: 'none', label: 'none' }, { value: 'causal', label: 'causal' }] }),
  steps({ name: 'draw', type: 'int', default: 0, min: 0, max: 4294967295, label: 'Random draw',
    help: 'Seeds Q, K and V: the same draw gives the same matrices on every machine.' }),
  sentence({ name: 'text', type: 'text', default: 'The cat sat on the mat', maxLength: 600, label: 'Sentence',
    help: `Words and punctuation become tokens (at most ${MAX_TOKENS} a sentence). Separate up to ${MAX_SENTENCES} `
      + 'sentences with | to make a batch: the shorter ones are padded.' }),
  sentence({ name: 'sentenceMask', type: 'choice', default: 'none', label: 'Mask',
    help: 'none; causal (no looking ahead); padding (the [pad] positions of shorter sentences take no part). Without a '
      + 'padding mask, real words attend to the padding.',
    choices: [{ value: 'none', label: 'none' }, { value: 'causal', label: 'causal' },
      { value: 'padding', label: 'padding' }] }),
  // Notebook 03's example draws x = torch.randn(batch_size, seq_len, hidden_dim): one random vector per
  // position, the words only naming the rows. 'word' is the lab's contrast: one vector per distinct word.
  sentence({ name: 'embeddings', type: 'choice', default: 'position', label: 'Random vectors',
    help: 'position: one random vector per position, as the notebook\'s torch.randn(batch_size, seq_len, hidden_dim) '
      + 'draws it (the words only label the rows, so "The" and "the" get different vectors). word: one vector per '
      + 'distinct word (lower-cased), so a repeated word gets identical rows of weights: attention alone cannot '
      + 'tell the two apart.',
    choices: [{ value: 'position', label: 'one per position (the notebook)' },
      { value: 'word', label: 'one per word' }] }),
  sentence({ name: 'embedDim', type: 'int', default: 8, min: 2, max: 64, label: 'Embedding size',
    help: 'Width of the random vectors and of Q, K, V (the notebook: 8); the scale is 1/√(this).' }),
  sentence({ name: 'seed', type: 'int', default: 42, min: 0, max: 4294967295, label: 'Seed',
    help: 'Seeds the random vectors and the Q, K, V projections.' }),
  sentence({ name: 'mode', type: 'choice', default: 'eval', label: 'Mode',
    help: 'eval: no dropout (model.eval()). train: dropout zeroes each weight with probability p and divides the '
      + 'others by 1 − p.',
    choices: [{ value: 'eval', label: 'eval (no dropout)' }, { value: 'train', label: 'train (dropout on)' }] }),
  sentence({ name: 'dropout', type: 'number', default: 0.1, min: 0, max: 0.9, step: 0.05, label: 'Dropout p',
    help: 'Probability of zeroing each attention weight in train mode (the notebook: 0.1).',
    when: (v) => v.mode === 'train', whenText: 'train mode only' }),
  sentence({ name: 'dropDraw', type: 'int', default: 0, min: 0, max: 4294967295, label: 'Dropout draw',
    help: 'Seeds which weights dropout zeroes.', when: (v) => v.mode === 'train', whenText: 'train mode only' }),
  sentence({ name: 'threshold', type: 'number', default: 0.1, min: 0, max: 1, step: 0.05, slider: true,
    label: 'Edge threshold',
    help: 'The flow graph draws an edge where the weight is above this (the notebook: 0.1).' }),
  backendProperty('Where the attention kernel runs for every figure here. A backend that is not available falls back, '
    + 'and the badge says why.'),
  paletteProperty(['viridis', 'cividis', 'magma', 'greys'], 'Colour scale of the attention heatmaps, dark to bright (where '
    + 'dark starts: Colour range). viridis and cividis are read alike by colour-blind readers; greys prints.'),
  colourRangeProperty(),
  buildStepProperty(simpleAttentionBuild, { name: 'simpleStep', section: 'build-simple' }),
  buildStepProperty(selfAttentionBuild, { name: 'selfStep', section: 'build-self' }),
  studentProperty({ section: 'build-simple' }),
].map((p) => (p.name === 'backend' ? { ...p, effect: 'view', page: true } : p));

// Check your build (issue 39): the two modules the notebooks write, step by step.
const BUILD_SECTIONS = [
  buildCheckSection(simpleAttentionBuild, { id: 'build-simple', property: 'simpleStep',
    title: 'Check your build, step by step: SimpleAttention (notebook 04)',
    text: 'Notebook 04 writes SimpleAttention from scratch. Give yours this query, key, value and causal mask, and '
      + 'compare each step with the lab\'s: paste what print() showed, or save the tensor with torch.save(t, '
      + '"step.pt") and open the file.' }),
  buildCheckSection(selfAttentionBuild, { id: 'build-self', property: 'selfStep', studentField: false,
    title: 'Check your build, step by step: SelfAttention (notebook 03)',
    text: 'Notebook 03 writes SelfAttention with its own query, key and value layers. Load the weights below into '
      + 'yours, switch it to eval mode, give it this x and causal mask, and compare each step with the lab\'s: paste '
      + 'what print() showed, or save the tensor with torch.save(t, "step.pt") and open the file.' }),
];

/** A padding mask needs a batch: choosing it with one sentence adds a shorter second one. */
function afterChange(name, values) {
  if (name === 'sentenceMask' && values.sentenceMask === 'padding' && !values.text.includes('|')) {
    return { ...values, text: `${values.text} | A dog barked` };
  }
  return values;
}

export const scaledLab = defineLab({
  id: 'scaled',
  title: 'Scaled dot-product',
  subtitle: 'Lab 4 — attention step by step, and self-attention over a sentence',
  notebook: '04_intro_to_attention and 03_self_attention',
  summary: 'softmax(QK^T/√d_k)V one stage at a time on matrices you can edit, why the √d_k is there, and the '
    + 'course\'s self-attention over your own sentence.',
  thumbnail: {
    label: 'A causal self-attention map: weights on and below the diagonal only',
    cells: () => [[1, 0, 0, 0, 0], [0.6, 0.4, 0, 0, 0], [0.2, 0.5, 0.3, 0, 0], [0.1, 0.2, 0.3, 0.4, 0],
      [0.3, 0.1, 0.1, 0.2, 0.3]],
  },
  properties,
  presets: [],
  intro: () => INTRO,
  afterChange,
  sections: [...SECTIONS, ...BUILD_SECTIONS],
  panels: ['section:steps', 'section:sentence', 'section:why', 'section:build-simple', 'section:build-self'],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  firstScreen: { panels: ['section:steps'], figure: '[data-figure="inputs"]', action: '#action-reroll' },
  // Predict, then run (issue 39): under section 1's figures; a phone's first screen has no room above them.
  predict: scaledPrediction,
  predictIn: 'section:steps',
  // ... and the entropy line and chart above it, which show the answer, are held back until it is answered.
  predictHolds: ['entropy', 'saturation'],
  figureStem: () => 'scaled',
  // Its headless side (web/cli/attnlab.mjs runs a lab's command from this declaration alone): the page's
  // backend setting, then the command's own options.
  command: {
    name: 'attention', module: '../cli/attention.mjs',
    about: 'softmax(q k^T x scale [+ mask]) v on your own matrices (JSON arrays of rows: q [T][D], k [S][D], v '
      + '[S][Dv]; a mask [T][S] of 0 = blocked, 1 = allowed; scale 1/sqrt(D) by default); prints {"weights": [T][S], '
      + '"output": [T][Dv], "backend": {...}}. A fully blocked row gives zeros.',
    properties: ['backend'],
    options: [
      { name: 'q', type: 'path', required: true, help: 'The queries, a JSON array of T rows of D numbers.' },
      { name: 'k', type: 'path', required: true, help: 'The keys, S rows of D numbers.' },
      { name: 'v', type: 'path', required: true, help: 'The values, S rows of Dv numbers.' },
      { name: 'mask', type: 'path', meta: 'causal|FILE', help: 'causal (a query sees itself and the keys before it), '
        + 'or a JSON file of T rows of S numbers, 0 = blocked, 1 = allowed.' },
      { name: 'scale', type: 'number', min: 0, minExclusive: true, max: 1e6, defaultText: '1/sqrt(D)',
        help: 'What the scores are multiplied by before the softmax.' },
      commandOptions.json('Accepted for symmetry with the other commands: the output is JSON anyway.'),
    ],
  },
});
