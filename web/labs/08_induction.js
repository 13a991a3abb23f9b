// Lab 08, "Induction" (past the course's notebooks: Olsson et al. 2022, "In-context learning and induction
// heads"): a two-layer transformer trained live on sequences with a repeated segment, laid out as
// TransformerLens's HookedTransformer (core/trainers/induction_model.h). A previous-token head forms in
// layer 0 and an induction head in layer 1, suddenly: the loss on the repeat drops while the loss on the
// rest stays. This file only declares: properties, presets, texts, the trainer's calls, the view models
// and the headless texts; the sections are in 08_induction_sections.js. No DOM here.
import { backendProperty, defineLab, paletteProperty, speedProperty, trainingProperties } from './common.js';
import { SECTIONS, headName, headScoresOf } from './08_induction_sections.js';
import { inductionPrediction } from './08_induction_predict.js';
import { SHIPPED_TEXT } from './08_induction_text.js';
import { ablateProperty, heads as headsOf } from './head_list.js';
import { hookedTransformerConfig, weightsMetadata } from './08_induction_export.js';
import { circuitsProperties } from './circuits.js';

const INTRO = 'A small transformer (two layers of attention, no MLP) learns to predict the next token of random '
  + 'sequences. Each sequence repeats a segment of it right after itself, at a random place and of a random length. '
  + 'The first copy cannot be predicted; the second can, but only by a model that looks back for the earlier copy of '
  + 'the current token and reads what came after it: an induction head. Press Play and watch the loss on the repeat: '
  + 'it sits at the rest\'s level, then drops within a few dozen steps (the "phase change"), as a previous-token head '
  + 'forms in layer 0 and an induction head in layer 1.';

// The lab's own maxima: the C++ trainer's (core/trainers/induction_task.h; tests/node/lab_tables.test.mjs
// checks them against it).
const repeatTask = (v) => v.task === 'repeat';
const textTask = (v) => v.task === 'text';
export const MAX_TEXT = 20000;

const properties = [
  { name: 'task', type: 'choice', default: 'repeat', effect: 'reset', group: 'Task', label: 'Task',
    choices: [{ value: 'repeat', label: 'repeats' }, { value: 'text', label: 'text' }],
    help: 'Repeated random tokens: the segment whose copy only an induction head can predict. Characters of a text: a '
      + `character-level language model on the text below (empty: ${SHIPPED_TEXT.title}).` },
  { name: 'vocab', type: 'int', default: 64, min: 3, max: 1024, effect: 'reset', group: 'Task', label: 'Vocabulary V',
    when: repeatTask, whenText: 'applies to --task repeat only',
    help: 'Token ids 0..V-1; 0 is the start token of every sequence, the others are drawn uniformly.' },
  { name: 'context', type: 'int', default: 33, min: 5, max: 256, effect: 'reset', group: 'Task', label: 'Context',
    help: 'Tokens per sequence (TransformerLens\'s n_ctx), the start token included. The repeated segment is a quarter '
      + 'to half of the rest.' },
  { name: 'text', type: 'text', default: '', maxLength: MAX_TEXT, effect: 'reset', group: 'Task', label: 'Text',
    when: textTask, whenText: 'applies to --task text only',
    help: `The text the model learns, one character a token (at most ${MAX_TEXT.toLocaleString('en')} characters). `
      + `Empty: ${SHIPPED_TEXT.title}.` },
  { name: 'layers', type: 'int', default: 2, min: 1, max: 4, effect: 'reset', group: 'Model', label: 'Layers',
    help: 'Transformer blocks. One layer cannot form an induction circuit: its heads see only the token embeddings and '
      + 'positions, not what a head of an earlier layer wrote.' },
  { name: 'heads', type: 'int', default: 2, min: 1, max: 16, effect: 'reset', group: 'Model', label: 'Heads',
    help: 'Attention heads per layer (TransformerLens\'s n_heads).' },
  { name: 'dModel', type: 'int', default: 32, min: 1, max: 512, effect: 'reset', group: 'Model', label: 'd_model',
    help: 'Width of the residual stream (the embeddings) that every layer reads and writes.' },
  { name: 'dHead', type: 'int', default: 16, min: 1, max: 128, effect: 'reset', group: 'Model', label: 'd_head',
    help: 'Width of each head\'s queries, keys and values; heads × d_head need not equal d_model.' },
  { name: 'mlp', type: 'bool', default: false, effect: 'reset', group: 'Model', label: 'MLP',
    help: 'A GELU MLP (d_mlp = 4 d_model) after the attention in every block; off: attention only, as Olsson et '
      + 'al.\'s small models.' },
  { name: 'layerNorm', type: 'bool', default: false, effect: 'reset', group: 'Model', label: 'LayerNorm',
    help: 'Pre-norm LayerNorm (ln1, ln2, ln_final) as GPT-2 and TransformerLens\'s default; off: none.' },
  ...trainingProperties({
    batch: { default: 32, max: 512, help: 'Sequences per training step.' },
    lr: { default: 0.006, step: 0.001, help: 'Adam learning rate' },
    steps: { default: 1500, help: 'Train until this many steps; at the defaults the phase change comes '
      + 'after about 400.' },
    seed: { help: 'Seeds the initial weights, the sequences and the probe sequences: the same seed gives the same run, '
      + 'bit for bit on one backend.' },
  }),
  backendProperty('Where the attention kernel runs: every layer\'s attention, forward and backward. A backend that is '
    + 'not available falls back, and the badge says why.'),
  // 50 steps/s: the phase change comes at about 8 s, a watchable drop; max trains as fast as this computer goes.
  speedProperty({ choices: ['10', '50', '200', 'max'], initial: '50',
    help: 'Steps per second; at 50 the phase change comes after about 8 s, at max as fast as this computer goes.' }),
  paletteProperty(),
  ablateProperty('the trained model\'s heads (layer 0 holds the previous-token heads, layer 1 the induction heads).',
    { section: 'ablate' }),
  // Circuits (issue 44, 08_induction_circuits.js): empty fields are the repeated pair cut from the probe sequence.
  ...circuitsProperties({
    clean: { default: '', help: 'Token ids separated by spaces (the text task: characters); empty: the probe sequence '
      + 'cut three tokens into its repeat, so that only an induction head can tell the next token.' },
    corrupt: { default: '', help: 'As many tokens as the clean prompt; empty: the clean one with another token where '
      + 'the answer first came, so that the earlier copy points elsewhere.' },
    answer: { default: '', help: 'The token the clean prompt should continue with; empty: the repeat\'s next token.' },
    wrong: { default: '', help: 'The token the corrupted prompt points to instead; empty: the one put in the answer\'s '
      + 'earlier place. The metric is logit(answer) − logit(wrong) at the last position.' },
  }),
  { name: 'oneLayerSteps', type: 'int', default: 0, min: 0, max: 100000, effect: 'view', page: true,
    section: 'one-layer', label: 'One-layer steps',
    help: 'Steps the one-layer model beside the run has trained (Train one layer beside it counts them up to Steps).' },
];

const checks = [
  (v) => (v.task === 'text' && [...v.text].length > MAX_TEXT
    ? { name: 'text', message: `the text is ${[...v.text].length.toLocaleString('en')} characters long: the lab reads `
      + `at most ${MAX_TEXT.toLocaleString('en')}` } : null),
];

const presets = [
  { id: 'defaults', label: 'Two layers (default)', values: { layers: 2 },
    text: 'Two layers of two heads: a previous-token head forms in layer 0, then an induction head in layer 1, and the '
      + 'loss on the repeat drops.' },
  { id: 'one-layer', label: 'One layer', values: { layers: 1 },
    text: 'One layer: its heads see the tokens and their positions only, so none can ask "what came after the earlier '
      + 'copy of my token?". It learns only that a repeated token is one seen before: the repeat\'s loss falls a '
      + 'little, never to half the rest\'s.' },
  { id: 'full', label: 'With MLP and LayerNorm', values: { mlp: true, layerNorm: true },
    text: 'GPT-2\'s block: LayerNorm before the attention and the MLP. The same circuit forms.' },
  { id: 'text', label: 'Characters of a text', values: { task: 'text', steps: 3000 },
    text: `A character-level model of ${SHIPPED_TEXT.title}: induction heads help wherever a phrase repeats.` },
];

/** Values -> the worker's configure request. An empty text is the shipped one. */
function configureRequest(v) {
  return {
    config: { task: v.task, layers: v.layers, heads: v.heads, dModel: v.dModel, dHead: v.dHead, mlp: v.mlp,
      layerNorm: v.layerNorm, vocab: v.vocab, context: v.context, batch: v.batch, lr: v.lr, seed: v.seed,
      ...(v.task === 'text' ? { text: v.text || SHIPPED_TEXT.text } : {}) },
    backend: v.backend,
    steps: v.steps,
  };
}

// ---- the trainer in the worker and the CLI (web/training/session.js) ----

const EVAL_SAMPLES = 256;

const trainer = {
  assets: {},
  id: 'induction', // the C++ trainer (core/trainers/registry.cpp)
  defaultSteps: (module, config) => module.InductionTrainer.defaults(config.task).steps,
  // One attention call a layer, each of this shape: the batch's positions against themselves.
  shape: (c) => ({ B: c.batch, H: c.heads, T: c.context, S: c.context, D: c.dHead }),
  fixedSample: (t) => t.fixedSample(),
  sampleArgs: (config, sample) => ({ tokens: sample.tokens }),
  evaluate: (t, backend, options = {}) => t.evaluate({ samples: EVAL_SAMPLES, ...options }, { backend }),
  inspect: (t, sample, backend) => t.inspect(sample, { backend }),
  // Forward + backward ~ 3 forwards: per token and layer the q, k, v and output projections and the
  // attention over the context, the MLP; the unembedding. For the time estimate beside the settings;
  // the C++ trainer bounds memory and work per step itself (core/trainers/induction_task.cpp).
  flopsPerStep(v) {
    const T = v.context, E = v.dModel, HD = v.heads * v.dHead, V = v.task === 'repeat' ? v.vocab : 64;
    const perLayer = 2 * E * 3 * HD + 2 * HD * E + 4 * T * HD + (v.mlp ? 16 * E * E : 0);
    return 3 * v.batch * T * (v.layers * perLayer + 2 * E * V);
  },
  trainingBytes: (module, config) => module.InductionTrainer.trainingBytes(config),
};

// ---- view models ----

const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '—');

const metrics = {
  evaluationTitle: `Evaluation on ${EVAL_SAMPLES} fresh sequences`,
  loss: { title: 'Loss', yTitle: 'cross-entropy', evaluation: (e) => e.loss,
    references: (e) => (Number.isFinite(e.restLoss) ? [{ label: 'loss on the rest', y: e.restLoss }] : []) },
  accuracy: { title: 'Next-token accuracy', yTitle: 'accuracy', evaluation: (e) => e.accuracy, references: () => [] },
  batchLabel: 'training batch', evaluationLabel: `${EVAL_SAMPLES} fresh sequences`,
};

/** The latest evaluation -> the summary panel's lines: the losses, the in-context learning score, the heads. */
function evaluationModel(config, e) {
  if (!e) return null;
  const { induction, previous } = headScoresOf(e);
  const items = [
    { id: 'repeat-loss', label: 'Loss on the repeat', value: f3(e.repeatLoss), raw: e.repeatLoss,
      help: 'Mean cross-entropy on the repeated segment\'s tokens (its first excepted: nothing says the '
        + 'repeat starts there).' },
    { id: 'rest-loss', label: 'Loss on the rest', value: f3(e.restLoss), raw: e.restLoss,
      help: 'Mean cross-entropy on every other token: random, so about ln(V − 1) = '
        + `${f3(Math.log(Math.max(2, config.vocab - 1)))} for any model.` },
    { id: 'icl-score', label: 'In-context learning score', value: f3(e.iclScore), raw: e.iclScore,
      help: `The loss at the last position (${e.latePosition}) minus the loss at position ${e.earlyPosition} (a tenth `
        + 'of the way), as Olsson et al. measure it (tokens 500 and 50 of 512): negative when the model predicts '
        + 'better later in the sequence, using what it has seen.' },
    { id: 'accuracy', label: 'Next-token accuracy', value: `${(100 * e.accuracy).toFixed(1)}%`, raw: e.accuracy,
      help: 'Share of positions whose most likely next token is the right one.' },
  ];
  const best = induction[0], prev = previous[0];
  return {
    step: e.step,
    items,
    headline: Number.isFinite(e.repeatLoss)
      ? (e.repeatLoss < 0.5 * e.restLoss
        ? `Induction has formed: the repeat's loss (${f3(e.repeatLoss)}) is below half the rest's (${f3(e.restLoss)}). `
          + `Head ${headName(best)} attends to the token after the earlier copy with weight ${best.score.toFixed(2)}.`
        : `The repeat is not used yet: its loss (${f3(e.repeatLoss)}) is close to the rest's (${f3(e.restLoss)}).`)
      : `Loss ${f3(e.loss)} on ${e.samples} windows of the text.`,
    heads: [],
    explanation: prev ? `The strongest previous-token head is ${headName(prev)} (${prev.score.toFixed(2)} of its `
      + 'weight on the token before).' : null,
  };
}

const list = (typed) => Array.from(typed ?? []);

/**
 * An inspection of the fixed sample ({layers, heads, T, tokens, weights [L,H,T,T]}) -> the attention
 * panel's heatmaps: one per head, with the two diagonals drawn on each (offset 1: a previous-token head;
 * offset n - 1 in the second copy: an induction head), the large one the last layer's first head.
 */
function heatmapModels(config, sample, inspection, caption) {
  const { layers: L, heads: H, T } = inspection;
  const tokens = list(inspection.tokens);
  const n = sample.segment, start = sample.copyStart;
  const guides = [
    { from: 1, to: T - 1, offset: 1, label: 'previous token' },
    ...(n > 1 ? [{ from: start, to: start + n - 1, offset: n - 1, label: 'induction (n − 1 back)' }] : []),
  ];
  const base = {
    rows: T, cols: T, xTitle: 'key position', yTitle: 'query position', guides,
    xTicks: tokens.map(String), yTicks: tokens.map((tok, t) => `${t}: ${tok}`),
    xNames: tokens.map((tok, s) => `position ${s} (token ${tok})`),
    yNames: tokens.map((tok, t) => `position ${t} (token ${tok})`),
  };
  const heads = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const i = l * H + h;
      heads.push({ ...base, id: `head-${i}`, label: `layer ${l} head ${h}`, title: `Layer ${l}, head ${h}${caption}`,
        values: inspection.weights.slice(i * T * T, (i + 1) * T * T) });
    }
  }
  // The large map: the last layer's first head (where the induction heads form), until the user picks another.
  const mean = { ...heads[(L - 1) * H], id: 'mean', label: `layer ${L - 1} head 0` };
  return { mean, heads, meanLabel: `layer ${L - 1} head 0` };
}

// ---- weights files (docs/induction.md): TransformerLens's state_dict and HookedTransformerConfig ----

const SHAPE = (t, name) => t[name]?.shape ?? null;

/** A parsed safetensors file -> the settings of the model it holds (from its shapes), or throws saying why. */
function valuesFromWeights(file) {
  const t = file.tensors;
  const WE = SHAPE(t, 'embed.W_E'), Wpos = SHAPE(t, 'pos_embed.W_pos'), WQ = SHAPE(t, 'blocks.0.attn.W_Q');
  if (!WE || !Wpos || !WQ) {
    throw new Error('not an Induction model: it has no embed.W_E, pos_embed.W_pos and blocks.0.attn.W_Q '
      + '(TransformerLens\'s names; docs/induction.md)');
  }
  if (WE.length !== 2 || Wpos.length !== 2 || WQ.length !== 3) {
    throw new Error('embed.W_E must be [d_vocab, d_model], pos_embed.W_pos [n_ctx, d_model] and blocks.0.attn.W_Q '
      + `[n_heads, d_model, d_head]; got [${WE}], [${Wpos}], [${WQ}]`);
  }
  let layers = 0;
  while (t[`blocks.${layers}.attn.W_Q`]) layers++;
  const m = file.metadata ?? {};
  const values = { vocab: WE[0], dModel: WE[1], context: Wpos[0], heads: WQ[0], dHead: WQ[2], layers,
    mlp: !!t['blocks.0.mlp.W_in'], layerNorm: !!t['ln_final.w'] };
  if (m.task === 'text' && typeof m.text === 'string') Object.assign(values,
    { task: 'text', text: m.text === SHIPPED_TEXT.text ? '' : m.text });
  else values.task = 'repeat';
  if (/^\d+$/.test(m.seed ?? '')) values.seed = Number(m.seed);
  return values;
}

// ---- headless (web/cli/attnlab.mjs) ----

/** An evaluation's heads as the final record lists them: [{layer, head, previous, duplicate, induction, first}]. */
function headRecords(e) {
  const out = [];
  for (let i = 0; i < e.layers * e.heads; i++) {
    out.push({ layer: Math.floor(i / e.heads), head: i % e.heads, previous: e.scores.previous[i],
      duplicate: e.scores.duplicate[i], induction: e.scores.induction[i], first: e.scores.first[i] });
  }
  return out;
}

const cli = {
  // --data FILE.json: the sequences to train on, in order (docs/cli.md); --ablate L.H,...: heads off in
  // the final evaluation.
  options: [
    { name: 'data', type: 'path', meta: 'FILE.json',
      help: 'Train on these sequences instead of drawing them: a JSON array of token-id arrays, each --context long; '
        + 'step k trains on sequences kB .. kB+B-1 in order (from the first again after the last).' },
    { name: 'ablate', type: 'heads', default: '', meta: 'L.H[,L.H...]',
      help: 'Heads switched off (layer.head, from 0) in the final evaluation: their output zeroed before W_O, as '
        + 'TransformerLens zeroes hook_z.' },
  ],
  /** Before any step: the --data file into the trainer (a bad file: one line, exit 2, nothing trained). */
  async prepare({ session, options, readJson }) {
    if (!options.data) return;
    const sequences = await readJson(options.data);
    session.trainer.setData(sequences);
  },
  evaluationOptions: (options) => ({ ablate: headsOf(options.ablate ?? '').map((h) => `${h.layer}.${h.head}`) }),
  startRecord: (c) => ({ task: c.task, layers: c.layers, heads: c.heads, dModel: c.dModel, dHead: c.dHead, mlp: c.mlp,
    layerNorm: c.layerNorm, vocab: c.vocabSize, context: c.context, batch: c.batch, lr: c.lr,
    parameters: c.parameters }),
  startText: (c, steps, seed) => `induction (${c.task}), ${c.layers} layer(s) × ${c.heads} head(s), d_model `
    + `${c.dModel}, d_head ${c.dHead}${c.mlp ? ', MLP' : ''}${c.layerNorm ? ', LayerNorm' : ''}, vocabulary `
    + `${c.vocabSize}, context ${c.context}, batch ${c.batch}, lr ${c.lr}; ${steps} steps, seed ${seed}`,
  progress(m, t) {
    const last = t.data('lastStep');
    const split = Number.isFinite(last.repeatLoss) ? { repeatLoss: last.repeatLoss, restLoss: last.restLoss } : {};
    return {
      record: { step: m.step, loss: m.loss, ...split, ...(t.epoch ? { epoch: t.epoch } : {}) },
      text: `step ${String(m.step).padStart(5)}  loss ${m.loss.toFixed(4)}`
        + (split.repeatLoss !== undefined ? `  repeat ${split.repeatLoss.toFixed(4)}  rest ${split.restLoss.toFixed(4)}` : ''),
    };
  },
  final({ config: c, evaluation: e, trainer: t }) {
    const timeline = t.timeline();
    const heads = headRecords(e);
    const { induction, previous } = headScoresOf(e);
    const phase = timeline.phaseStep;
    return {
      record: {
        head: { task: c.task, layers: c.layers, heads: c.heads },
        body: {
          samples: e.samples, loss: e.loss, accuracy: e.accuracy, repeatLoss: e.repeatLoss, restLoss: e.restLoss,
          iclScore: e.iclScore, earlyPosition: e.earlyPosition, latePosition: e.latePosition,
          positionLoss: list(e.positionLoss), phaseStep: phase >= 0 ? phase : null,
          formedStep: timeline.formedStep >= 0 ? timeline.formedStep : null, inductionHead: induction[0],
          previousTokenHead: previous[0], headScores: heads, ablated: list(e.ablated),
          hookedTransformerConfig: hookedTransformerConfig(c),
        },
      },
      lines: [
        `on ${e.samples} fresh sequences: loss ${f3(e.loss)}; on the repeat ${f3(e.repeatLoss)}, on the rest `
          + `${f3(e.restLoss)}; in-context learning score ${f3(e.iclScore)} (position ${e.latePosition} minus position `
          + `${e.earlyPosition})` + (e.ablated?.length ? `; heads off: ${list(e.ablated).join(', ')}` : ''),
        `strongest induction head ${headName(induction[0])}: ${induction[0].score.toFixed(3)}; strongest `
          + `previous-token head ${headName(previous[0])}: ${previous[0].score.toFixed(3)}`,
        phase >= 0 ? `phase change at step ${phase} (the repeat's loss fell fastest there, and is now below `
          + `half the rest's)`
          : 'no phase change yet: the repeat\'s loss has not fallen below half the rest\'s',
      ],
    };
  },
};

export const inductionLab = defineLab({
  id: 'induction',
  title: 'Induction',
  subtitle: 'Lab 8 — train a two-layer transformer and watch induction heads form',
  notebook: null, // past the course's notebooks (web/labs/common.js's courseLine says so)
  beyond: 'a two-layer transformer trained live: induction heads and their phase change',
  summary: 'Train a small two-layer transformer on sequences that repeat themselves and watch induction heads form in '
    + 'a sudden phase change; switch them off, compare one layer, and continue in TransformerLens.',
  thumbnail: {
    label: 'An induction head: from each token of the second copy, weight on the token after its earlier copy (a '
      + 'stripe below the diagonal)',
    cells: () => Array.from({ length: 9 },
      (_, t) => Array.from({ length: 9 },
        (_, s) => (t >= 5 && s === t - 3 ? 0.9 : s === 0 && t < 5 ? 0.6 : s <= t ? 0.05 : 0))),
  },
  properties,
  checks,
  presets,
  intro: () => INTRO,
  predict: inductionPrediction, // asked under the timeline it answers, which must stay on a phone's first screen
  predictIn: 'section:timeline',
  configureRequest,
  trainer,
  metrics,
  sections: SECTIONS,
  panels: ['transport', 'section:timeline', 'attention', 'curves', 'section:ablate', 'section:circuits',
    'section:one-layer', 'section:python'],
  // The first screen (issue 29): Play and the timeline in view at 1280x800 and 390x844.
  firstScreen: { panels: ['transport', 'section:timeline'], figure: 'canvas[data-figure="timeline"]', action: '#play' },
  attentionPanel: { title: 'Every head on a repeated sequence',
    help: 'The start token, n random tokens, then the same n again. Rows are queries, columns keys. Dashed: the token '
      + 'before (a previous-token head lights it) and, in the second copy, the token after the earlier copy (an '
      + 'induction head lights it).' },
  figureStem: (config) => `induction-${config.layers}l${config.heads}h-seed${config.seed}`,
  weights: {
    valuesFromFile: valuesFromWeights,
    metadata: weightsMetadata,
    mustMatch: [{ name: 'layers', kind: 'count' }, { name: 'heads', kind: 'count' }],
    fileName: (config, step) => `induction-step${step}.safetensors`,
    describe: (config) => `an Induction model of ${config.layers} layer(s) × ${config.heads} head(s), d_model `
      + `${config.dModel}`,
    help: 'Export this model as a .safetensors file with TransformerLens\'s names and its HookedTransformerConfig, to '
      + 'load into a HookedTransformer (the last section has the Python lines); import such a file, here or from a '
      + 'notebook, to go on from it. You can also drop a file here.',
  },
  views: {
    evaluation: evaluationModel,
    heatmaps: heatmapModels,
  },
  cli,
});
