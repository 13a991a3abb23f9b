// Lab 03, "One query" (course notebook 05_one_query_more_twos_than_fours): given 10 digits 0..9, are
// there more 2s than 4s? One learned query looks over the 10 positions (where to look); each digit's
// value says what it is worth; a small MLP turns the attention-weighted value into a probability.
// This file only declares: properties, presets, texts, the trainer's calls, and pure functions from
// the worker's data to view models. No DOM here.
import { countPrediction } from './03_count_predict.js';
import { backendProperty, defineLab, paletteProperty, speedProperty, trainingProperties } from './common.js';
import { buildSection } from './03_count_build.js';
import { buildStepProperty } from './builds/build_section.js';
import { attentionModelBuild } from './builds/attention_model.js';

const INTRO = 'Ten digits 0..9: are there more 2s than 4s? One learned query scores every position (the '
  + 'attention: where to look), each digit gets a learned value (what it is worth), and a small network turns '
  + 'the attention-weighted value into a probability. Watch which digits the query learns to look at, and '
  + 'which values it gives them — then press "Solve it by hand" to see that attention on the 2s and 4s is '
  + 'not what makes the answer right.';

// A seed whose run at the exercise's lr 1e-4 gets stuck (found with this project's RNG: docs/count.md).
export const STUCK_SEED = 15;

// How a digit becomes a vector: notebook 05's Embedding, or its "Alternatively" (one-hot vectors sent
// through a Linear). Declared once: the page's setting, the link (?embedding=one-hot) and
// `attnlab train --lab count --embedding one-hot` all read it; the C++ config takes the same names.
const EMBEDDINGS = [
  { value: 'embedding', label: 'nn.Embedding' },
  { value: 'one-hot', label: 'one-hot, Linear' },
];

// The notebook's sizes (its self.embed_dim = 5, self.att_dim = 5 and the head's Linear(1, 200)), with
// the ranges the C++ config checks (core/trainers/count_trainer.h), which also bounds their memory
// together with the batch.
const properties = [
  { name: 'embedding', type: 'choice', default: 'embedding', effect: 'reset', group: 'Model', label: 'Digit vectors',
    choices: EMBEDDINGS,
    help: 'How a digit becomes a vector of embed_dim numbers: the notebook\'s nn.Embedding(10, embed_dim) (a table, '
      + 'one learned row per digit), or its alternative, one_hot(digit) through nn.Linear(10, embed_dim). one_hot(d) '
      + 'times the Linear\'s weight picks column d of it: the same lookup, plus a bias shared by all ten digits and a '
      + 'different start (uniform ±0.32 against normal). Train both with one seed and compare.' },
  { name: 'embedDim', type: 'int', default: 5, min: 1, max: 64, effect: 'reset', group: 'Model', label: 'embed_dim',
    help: 'The length of a digit\'s vector (the notebook\'s self.embed_dim = 5). One number is enough for this task, '
      + 'since only a digit\'s value matters: at embed_dim 1 the lab reaches 99-100% with lr 1e-3, but only about 80% '
      + 'in the exercise\'s 5,001 steps at lr 1e-4 (docs/count.md).' },
  { name: 'attDim', type: 'int', default: 5, min: 1, max: 64, effect: 'reset', group: 'Model', label: 'att_dim',
    help: 'The length of the query and of each key (the notebook\'s self.att_dim = 5): WK is Linear(embed_dim, '
      + 'att_dim), and the scores are divided by √att_dim.' },
  { name: 'hidden', type: 'int', default: 200, min: 1, max: 1024, effect: 'reset', group: 'Model', label: 'Hidden units',
    help: 'The width of the small network after the attention: Linear(1, hidden), ReLU, Linear(hidden, 1), Sigmoid '
      + '(the notebook: 200). It turns one number, the weighted value, into a probability: a few units can draw '
      + 'that step.' },
  ...trainingProperties({
    batch: { default: 100, max: 10000, help: 'Fresh random sequences per training step (the exercise: 100).' },
    lr: { default: 0.0001, help: 'Adam learning rate (the exercise: 1e-4)' },
    steps: { default: 5001, help: 'Train until this many steps (the exercise: 5,001).' },
    seed: { default: 2, help: 'Seeds the initial weights and the sequences: the same seed gives the same run (the lab '
      + 'starts at 2: seed 0 is one that gets stuck).' },
  }),
  backendProperty(),
  // 500 steps/s: the exercise's 5,001 steps take 10 s, the values of 2 and 4 moving apart as you watch.
  speedProperty({ choices: ['5', '20', '100', '500', 'max'], initial: '500',
    help: 'Steps per second; slow speeds let you watch the attention move, max trains as fast as '
      + 'this computer goes.' }),
  paletteProperty(['viridis', 'cividis', 'greys'], 'Colour scale of the attention map (the values use a diverging '
    + 'scale centred at 0).'),
  buildStepProperty(attentionModelBuild, { help: 'Which step of notebook 05 your pasted or opened tensor is: it is '
    + 'compared with the lab\'s tensor of that step.' }),
];

// The hand-built exact solution: values +1 for a 2, -1 for a 4, 0 otherwise; no keys, so the attention
// is uniform and the weighted value is (twos - fours) / 10; an MLP step between 0 and 0.1. In the
// notebook's sizes, which the preset starts from (a preset begins at the defaults).
function handBuiltTensors() {
  const t = (shape, fill) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    fill?.(data);
    return { shape, data };
  };
  return {
    'embed.weight': t([10, 5], (d) => { d[2 * 5 + 0] = 1; d[4 * 5 + 1] = 1; }),
    query: t([1, 5]),
    'WK.weight': t([5, 5]),
    'WK.bias': t([5]),
    'WV.weight': t([1, 5], (d) => { d[0] = 1; d[1] = -1; }),
    'WV.bias': t([1]),
    'nn.0.weight': t([200, 1], (d) => { d[0] = 1000; }),
    'nn.0.bias': t([200], (d) => { d[0] = -50; }),
    'nn.2.weight': t([1, 200], (d) => { d[0] = 1; }),
    'nn.2.bias': t([1], (d) => { d[0] = -5; }),
  };
}

const presets = [
  { id: 'exercise', label: 'The exercise', values: {},
    text: 'lr 1e-4, batch 100, 5,001 steps: most seeds reach 100%; watch the values of 2 and 4 move apart.' },
  { id: 'reliable', label: 'Reliable (lr 1e-3)', values: { lr: 0.001 },
    text: 'Ten times the learning rate: 97 of 100 seeds reach 99% within 1,000 steps, and all 100 get past 95% by '
      + '5,001 (docs/count.md).' },
  { id: 'stuck', label: 'A run that gets stuck', values: { seed: STUCK_SEED },
    text: 'At lr 1e-4 this seed settles with its attention on a distractor digit and stays below 80%: the query '
      + 'got close to ignoring the 2s or 4s early, their gradient is then tiny (softmax gives them little weight), '
      + 'and small steps never get out. With lr 1e-3 ("Reliable") the same seed learns.' },
  { id: 'one-hot', label: 'One-hot + Linear', values: { embedding: 'one-hot' },
    text: 'The notebook\'s alternative embedding: one_hot(digit) through Linear(10, 5). The Linear\'s weight times a '
      + 'one-hot vector is one of its columns, so this is a lookup too, with a bias shared by all digits: compare its '
      + 'run with the exercise\'s.' },
  { id: 'by-hand', label: 'Solve it by hand', values: { embedding: 'embedding' }, weights: handBuiltTensors,
    text: 'Loads weights built by hand, nothing trained: values +1 for a 2, -1 for a 4, 0 for the rest; keys all zero, '
      + 'so the attention is flat (0.1 on every position); the network answers "yes" when the weighted value is above '
      + '0.05. It scores 100%, ties included: what decides is the values, not attention mass on the 2s and 4s.' },
];

function configureRequest(v) {
  return { config: { seed: v.seed, batch: v.batch, lr: v.lr, embedding: v.embedding, embedDim: v.embedDim,
    attDim: v.attDim, hidden: v.hidden }, backend: v.backend, steps: v.steps };
}

// ---- the trainer in the worker and the CLI (web/training/session.js) ----

const EVAL_SAMPLES = 10000;
const L = 10; // positions

const trainer = {
  id: 'count',
  assets: {},
  defaultSteps: (module) => module.Trainer.defaults('count').steps,
  // One attention call a step: the one query (T = 1) over the 10 positions of each sequence, att_dim wide.
  shape: (c) => ({ B: c.batch, H: 1, T: 1, S: L, D: c.attDim }),
  fixedSample: (t) => t.data('fixedSample'),
  sampleArgs: (config, sample) => ({ batch: Array.from(sample.tokens) }),
  evaluate: (t, backend) => t.evaluate({ samples: EVAL_SAMPLES }, { backend }),
  inspect: (t, sample, backend) => t.inspect(sample, { backend }),
  // Per sequence: its keys and values (the digits' rows, gathered), scores and weighted sum over att_dim,
  // the MLP (1 -> hidden -> 1); forward + backward ~ 3 forwards. The ten digits' embedding and projections
  // run once a step (10 x embed_dim x att_dim), nothing beside the batch's work.
  flopsPerStep: (v) => 3 * 2 * v.batch * (L * v.attDim + L + 2 * L * v.attDim + v.hidden * 2),
};

const percent = (x) => `${(100 * x).toFixed(1)}%`;
/** The sizes, when they are not the notebook's (the properties' defaults): ", embed_dim 8, att_dim 3, hidden 18". */
const SIZES = ['embedDim', 'attDim', 'hidden'];
const sizesText = (c) => (SIZES.every((name) => c[name] === properties.find((p) => p.name === name).default) ? ''
  : `, embed_dim ${c.embedDim}, att_dim ${c.attDim}, hidden ${c.hidden}`);

const metrics = {
  evaluationTitle: 'Evaluation on 10,000 fresh sequences',
  loss: { title: 'Loss', yTitle: 'binary cross-entropy', evaluation: (e) => e.loss, references: () => [] },
  accuracy: { title: 'Accuracy', yTitle: 'accuracy', evaluation: (e) => e.accuracy,
    references: (e) => [{ label: 'always "no"', y: e.majority }] },
  batchLabel: 'training batch', evaluationLabel: '10,000 fresh sequences',
};

// ---- view models ----

const list = (typed) => Array.from(typed ?? []);
/** A number or an array of numbers -> an array (one sequence's inspection gives numbers, a batch arrays). */
const asList = (x) => (typeof x === 'number' ? [x] : list(x));
const count = (tokens, d) => tokens.filter((x) => x === d).length;
/** "1 four", "3 fours", "0 twos": a count of a digit in words. */
const digits = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const answer = (tokens) => (count(tokens, 2) > count(tokens, 4) ? 1 : 0);

/** A value as a cell shows it: one decimal, a real minus sign, 0 without one. */
const signed = (v) => (Math.abs(v) < 0.05 ? '0' : `${v < 0 ? '−' : ''}${Math.abs(v).toFixed(Math.abs(v) >= 10 ? 0 : 1)}`);

/**
 * inspection of the 5 fixed sequences ({weights [5*10], values [5*10], probability [5]}) -> the
 * attention map (digits written in their cells, 2s and 4s outlined) and, beside it, the values where
 * the attention is above 0.1 on a diverging scale centred at 0.
 */
function heatmapModels(config, sample, inspection, caption = '') {
  const tokens = list(sample.tokens ?? sample.batch);
  const rows = tokens.length / L;
  const weights = list(inspection.weights), values = list(inspection.values);
  const probability = asList(inspection.probability);
  const marks = tokens.map((x) => x === 2 || x === 4);
  const yTicks = Array.from({ length: rows }, (_, r) => {
    const seq = tokens.slice(r * L, (r + 1) * L);
    return `${answer(seq) ? 'yes' : 'no'} · p ${probability[r].toFixed(2)}`;
  });
  const yNames = Array.from({ length: rows }, (_, r) => {
    const seq = tokens.slice(r * L, (r + 1) * L);
    return `sequence ${r + 1}: ${digits(count(seq, 2), 'two')}, ${digits(count(seq, 4), 'four')} (answer ${answer(seq) ? 'yes' : 'no'}), `
      + `predicted ${probability[r].toFixed(3)}`;
  });
  const base = {
    rows, cols: L, xTitle: 'position (2s and 4s outlined)', yTitle: 'sequence',
    xTicks: Array.from({ length: L }, (_, i) => String(i)),
    xNames: Array.from({ length: L }, (_, i) => `position ${i}`), yTicks, yNames, tokens: tokens.slice(0, L),
    cellText: tokens.map(String), marks,
  };
  const mean = { ...base, id: 'mean', title: `Attention of the query${caption}`, values: weights };
  const reach = Math.max(0.5, ...values.map((v) => Math.abs(v)));
  const valueMap = {
    ...base, id: 'values', title: `Values (weight > 0.1)${caption}`, values, range: [-reach, reach],
    palette: 'diverging', blank: weights.map((w) => w <= 0.1),
    cellText: values.map((v, i) => (weights[i] > 0.1 ? signed(v) : '')),
  };
  return { mean, heads: [{ ...mean, id: 'head-0', title: `Head 0${caption}` }], extra: [valueMap] };
}

/** The playground's answer: digits, their values and attention, and what the model concludes. */
function tokenRows(config, sample, inspection) {
  const tokens = list(sample.tokens);
  const weights = list(inspection.weights), values = list(inspection.values);
  const p = asList(inspection.probability)[0];
  const weighted = asList(inspection.weighted)[0];
  const truth = answer(tokens);
  const rows = [
    { label: 'digit', tokens: tokens.map((x) => ({ text: String(x),
      title: x === 2 || x === 4 ? `a ${x}: counts` : 'a distractor' })) },
    { label: 'attention', tokens: weights.map((w) => ({ text: w.toFixed(2) })) },
    { label: 'value', tokens: values.map((v) => ({ text: v.toFixed(2) })) },
  ];
  const said = p > 0.5 ? 'yes' : 'no';
  return {
    rows,
    summary: `${digits(count(tokens, 2), 'two')}, ${digits(count(tokens, 4), 'four')}: the answer is ${truth ? 'yes' : 'no'}. Weighted `
      + `value ${weighted.toFixed(3)} → P(more 2s than 4s) = ${p.toFixed(3)}: the model says `
      + `${said}${(p > 0.5) === !!truth ? ' ✓' : ' ✗'}.`,
  };
}

function evaluationModel(config, e) {
  if (!e) return null;
  return {
    step: e.step,
    items: [
      { id: 'accuracy', label: 'Accuracy', value: percent(e.accuracy), raw: e.accuracy, help: `On ${e.samples} fresh `
        + `sequences at step ${e.step}.` },
      { id: 'tie-accuracy', label: 'Accuracy on ties', value: percent(e.tieAccuracy), raw: e.tieAccuracy,
        help: `On the ${e.ties} sequences with as many 2s as 4s (the answer is "no"): the hardest case, `
          + 'one digit decides.' },
      { id: 'majority', label: 'Always "no"', value: percent(e.majority), raw: e.majority, help: 'Accuracy of '
        + 'answering "no" every time: the baseline to beat.' },
      { id: 'loss', label: 'Loss', value: e.loss.toFixed(4), raw: e.loss,
        help: 'Binary cross-entropy on the same sequences.' },
      { id: 'mass-24', label: 'Attention on 2s/4s', value: e.massOn24.toFixed(3), raw: e.massOn24,
        help: 'Mean attention weight on the positions holding a 2 or a 4.' },
      { id: 'uniform-24', label: 'Uniform level', value: e.uniformMassOn24.toFixed(3), raw: e.uniformMassOn24,
        help: 'What flat attention puts on the 2s and 4s of the same sequences (about 0.2: two digits of ten).' },
    ],
    headline: `${percent(e.accuracy)} right; the query puts ${e.massOn24.toFixed(2)} of its attention on the 2s and 4s `
      + `(flat attention: ${e.uniformMassOn24.toFixed(2)}).`,
    heads: [],
    explanation: e.accuracy > 0.99 && e.massOn24 < 0.4
      ? 'Nearly always right with attention not far above flat: the values do the counting (2 and 4 get values '
        + 'of opposite sign).'
      : null,
  };
}

const inputFields = () => [{ name: 'tokens', label: 'Ten digits', placeholder: '2 4 7 2 0 9 4 2 1 5',
  help: 'Exactly 10 digits 0..9, separated by spaces or commas (or written together: 2472094215).' }];

function parseInput(config, fields) {
  const text = String(fields.tokens ?? '').trim();
  if (!text) return { error: 'Type ten digits.' };
  const parts = /^\d{10}$/.test(text) ? text.split('') : text.split(/[\s,]+/).filter(Boolean);
  const bad = parts.find((p) => !/^\d$/.test(p));
  if (bad !== undefined) return { error: `'${bad.slice(0, 20)}' is not a digit 0..9.` };
  if (parts.length !== L) return { error: `Type exactly 10 digits; that is ${parts.length}.` };
  return { sample: { tokens: parts.map(Number) } };
}

// ---- weights files ----

function valuesFromWeights(file) {
  const t = file.tensors;
  for (const name of ['embed.weight', 'query', 'WK.weight', 'WV.weight', 'nn.0.weight', 'nn.2.weight']) {
    if (!t[name]) throw new Error(`not a One query model: it has no ${name} (the exercise's AttentionModel names)`);
  }
  // A Linear embedding has a bias (embed.bias) and an [embed_dim, 10] weight; an Embedding a [10, embed_dim]
  // weight alone. The sizes come from the shapes: WK.weight [att_dim, embed_dim], nn.0.weight [hidden, 1].
  const embedding = t['embed.bias'] ? 'one-hot' : 'embedding';
  const shape = (name) => t[name].shape ?? [];
  const wk = shape('WK.weight'), nn0 = shape('nn.0.weight');
  if (wk.length !== 2 || nn0.length !== 2) {
    throw new Error(`not a One query model: WK.weight must be [att_dim, embed_dim] and nn.0.weight [hidden, 1]; got `
      + `[${wk}] and [${nn0}]`);
  }
  const m = file.metadata ?? {};
  return { embedding, attDim: wk[0], embedDim: wk[1], hidden: nn0[0],
    ...(/^\d+$/.test(m.seed ?? '') ? { seed: Number(m.seed) } : {}) };
}

export const countLab = defineLab({
  id: 'count',
  title: 'One query',
  subtitle: 'Lab 3 — one learned query: more 2s than 4s?',
  notebook: '05_one_query_more_twos_than_fours',
  summary: 'One learned query looks over ten digits and decides whether there are more 2s than 4s: see where it looks '
    + 'and what each digit is worth.',
  thumbnail: {
    label: 'Attention over ten digits: the positions of the 2s and 4s stand out',
    cells: () => [[0.05, 0.9, 0.05, 0.05, 0.8, 0.05, 0.05, 0.05, 0.9, 0.05],
      [0.85, 0.05, 0.05, 0.9, 0.05, 0.05, 0.05, 0.8, 0.05, 0.05],
      [0.05, 0.05, 0.9, 0.05, 0.05, 0.85, 0.05, 0.05, 0.05, 0.9]],
  },
  properties,
  presets,
  intro: () => INTRO,
  predict: countPrediction, // asked under Play (issue 39; 03_count_predict.js)
  configureRequest,
  trainer,
  metrics,
  panels: ['transport', 'attention', 'curves', 'compare', 'inspect', 'section:build'],
  sections: [buildSection],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  firstScreen: { panels: ['transport', 'attention'], figure: '#heatmap-main', action: '#play' },
  attentionPanel: {
    title: 'Where the query looks, and what each digit is worth',
    help: 'Five fixed sequences, one per row; each cell holds its digit, and the 2s and 4s are outlined. Top: the '
      + 'query\'s attention over the 10 positions (bright = much weight). Below: each digit\'s value where the '
      + 'attention is above 0.1 (purple above 0, orange below; grey: too little attention to matter). Each row says '
      + 'the true answer and the predicted probability.',
  },
  figureStem: (config) => `count-${config.embedding === 'one-hot' ? 'one-hot-' : ''}seed${config.seed}`,
  weights: {
    valuesFromFile: valuesFromWeights,
    metadata: (config, step) => ({ lab: 'count', steps: step, seed: config.seed, embedding: config.embedding,
      embed_dim: config.embedDim, att_dim: config.attDim, hidden: config.hidden }),
    mustMatch: [],
    fileName: (config, step) => `one-query-${config.embedding === 'one-hot' ? 'one-hot-' : ''}step${step}.safetensors`,
    describe: (config) => (config?.embedding === 'one-hot' ? 'a One query model (one-hot + Linear embedding)' : 'a One query model'),
  },
  views: {
    heatmaps: heatmapModels,
    tokenRows,
    evaluation: evaluationModel,
    inputFields,
    parseInput,
    sampleOf: (config, s) => s,
  },
  cli: {
    startRecord: (c) => ({ batch: c.batch, lr: c.lr, embedding: c.embedding, embedDim: c.embedDim, attDim: c.attDim,
      hidden: c.hidden }),
    startText: (c, steps, seed) => 'one query (more 2s than 4s?), '
      + `${c.embedding === 'one-hot' ? 'one-hot + Linear embedding' : 'Embedding'}, ${steps} steps, seed ${seed}, `
      + `batch ${c.batch}, lr ${c.lr}${sizesText(c)}`,
    progress: (m) => ({ record: m,
      text: `step ${String(m.step).padStart(5)}  loss ${m.loss.toFixed(4)}  batch accuracy `
        + `${(100 * m.accuracy).toFixed(1)}%` }),
    final({ evaluation: e }) {
      return {
        record: { head: {}, body: { accuracy: e.accuracy, tieAccuracy: e.tieAccuracy, ties: e.ties, loss: e.loss,
          majority: e.majority, massOn24: e.massOn24, uniformMassOn24: e.uniformMassOn24, evaluatedOn: e.samples } },
        lines: [
          `accuracy on ${e.samples} fresh sequences: ${percent(e.accuracy)} (always "no": ${percent(e.majority)}); on `
            + `the ${e.ties} ties: ${percent(e.tieAccuracy)}`,
          `attention on the 2s and 4s: ${e.massOn24.toFixed(3)} (flat attention: ${e.uniformMassOn24.toFixed(3)})`,
        ],
      };
    },
  },
});
