// Lab 02, "Lookup" (course notebook 02_attention_basics_mnist_lookup): softmax(QK^T) is a lookup and
// multiplying by V a retrieval, over a database of real MNIST digits (100, as the notebook; databaseSize
// changes it, as the notebook says one can). In the course's order:
// the database; hard attention (one-hot keys: exact retrieval); soft attention with random vectors
// (a blurry weighted average); many queries at once; a trained attention layer that retrieves the
// best-matching digit.
// This file only declares: properties, presets, texts, what the worker computes for each section
// (02_lookup_sections.js) and pure functions from the worker's data to view models. No DOM here.
import { DIGITS_ASSET, loadDigits } from '../data/digits.js';
import { SECTIONS } from './02_lookup_sections.js';
import { lookupPrediction } from './02_lookup_predict.js';
import { backendProperty, defineLab, speedProperty, trainingProperties } from './common.js';
import { buildCheckSection, buildStepProperty, studentProperty } from './builds/build_section.js';
import { attentionTestBuild } from './builds/attention_test.js';

const INTRO = 'A database of real handwritten digits (100, as the notebook; "Database size" changes it). softmax(QK^T) '
  + 'decides how much each database image is worth to the query (the lookup); multiplying by V, the images themselves, '
  + 'returns their weighted average (the retrieval). Go down the page in the course\'s order: hard attention retrieves '
  + 'exactly, random soft attention retrieves a blur, and a trained attention layer learns to retrieve a digit that '
  + 'matches the query.';

const explore = (section) => ({ effect: 'view', group: 'Explore', section });

// The notebook's num_of_examples (100), "which can change": the database every section looks up and the
// trained model retrieves from. Its range is the C++ trainer's (core/trainers/lookup_data.h), which also
// checks it with the other settings for memory; its cost per step is in flopsPerStep below.
export const DATABASE_SIZES = { default: 100, min: 10, max: 1000 };

const properties = [
  { name: 'databaseSize', type: 'int', ...DATABASE_SIZES, effect: 'reset', group: 'Data', label: 'Database size',
    help: 'How many digits the database holds (the notebook\'s num_of_examples: 100). The seed picks them; the 2,000 '
      + 'held-out queries stay, and the training queries are the rest of the 10,000. A larger database gives a query '
      + 'more to choose from, and each step more work.' },
  // The trained lookup (section 6): the course's model.
  { name: 'heads', type: 'int', default: 1, min: 1, max: 16, effect: 'reset', group: 'Model', label: 'Heads',
    help: 'Heads of MultiheadAttention(32, heads); each head works in 32 / heads dimensions. The course uses 1.' },
  { name: 'embedDim', type: 'int', default: 32, min: 1, max: 256, effect: 'reset', group: 'Model',
    label: 'Embedding width',
    help: 'Width of the shared Linear(784, width) that embeds queries and database images (the course: 32).' },
  ...trainingProperties({
    batch: { default: 64, max: 1024, help: 'Query images per training step (the course: 64).' },
    lr: { default: 0.0001, help: 'Adam learning rate (the course: 1e-4)' },
    // The course's 10 epochs of 60,000 MNIST images at batch 64 are 9,370 steps; this lab's training set is
    // the 7,900 digits of the 10,000 it ships (core/trainers/lookup_data.h), 123 batches an epoch, so the same
    // steps are 76 of its epochs (tests/node/lookup.test.mjs checks the numbers against the trainer).
    steps: { default: 9370, help: 'Train until this many steps. 9,370 is the notebook\'s count: 10 epochs of its '
      + '60,000 training images at batch 64. This lab trains on 7,900 digits (123 batches of 64 an epoch), so the same '
      + '9,370 steps go 76 times through them.' },
    seed: { help: 'Picks the database digits, the 2,000 held-out queries and the initial weights: the same seed '
      + 'gives the same run.' },
  }),
  { ...backendProperty('Where the attention kernel runs, in every section. A backend that is not available falls back, '
    + 'and the badge says why.'), cli: true },
  // 200 steps/s: the course's 9,370 steps take under a minute, the accuracy climbing as you watch.
  speedProperty({ choices: ['5', '20', '100', '200', 'max'], initial: '200',
    help: 'Steps per second; at 200 the course\'s 9,370 steps take under a minute, max trains as fast as '
      + 'this computer goes.' }),
  // The explorations (sections 2-5 and the trained lookup's query): view settings, kept in links.
  { name: 'query', type: 'int', default: 0, min: 0, max: DATABASE_SIZES.max - 1, label: 'Query image', page: true,
    ...explore('hard'), help: 'Which database image the one-hot query asks for (0 to the database size − 1, in the database\'s order '
      + 'before shuffling).' },
  { name: 'dim', type: 'int', default: 4, min: 1, max: 64, label: 'Vector size d', page: true, ...explore('soft'),
    help: 'Length of the random query and key vectors. Longer vectors give larger dot products: sharper weights.' },
  { name: 'temperature', type: 'number', default: 1, min: 0.01, max: 100, step: 0.1, label: 'Temperature', page: true,
    ...explore('soft'), help: 'Weights = softmax(QK^T / temperature). Low temperature: one image wins (sharp); high: all '
      + 'images blend (blurry).' },
  { name: 'draw', type: 'int', default: 0, min: 0, max: 4294967295, label: 'Random draw', page: true,
    ...explore('soft'), help: 'Seeds the random Q and K vectors; "New random vectors" counts it up.' },
  { name: 'queries', type: 'int', default: 8, min: 1, max: 32, label: 'Queries', page: true, ...explore('multi'),
    help: 'Random queries asked at once: Q becomes a matrix with one row per query.' },
  // Notebook 02 uses vec_size 4 for one random query (section 3) and 16 from its many queries on (4 and 5).
  { name: 'vecSize', type: 'int', default: 16, min: 1, max: 64, label: 'Vector size d', page: true, ...explore('multi'),
    help: 'Length of the random query and key vectors of sections 4 and 5 (the notebook\'s vec_size 16).' },
  { name: 'mhaMode', type: 'choice', default: 'cross', label: 'Attention', page: true, ...explore('mha'),
    choices: [{ value: 'cross', label: 'cross' }, { value: 'self', label: 'self' }],
    help: 'Cross-attention: one query vector per batch item (X_q) looks up 100 keys and values (X_k, X_v). '
      + 'Self-attention: every one of the 100 vectors of X is a query too.' },
  { name: 'heldOut', type: 'int', default: 0, min: 0, max: 1999, label: 'Held-out query', page: true,
    ...explore('trained'), help: 'Which of the 2,000 held-out digits (never trained on) the trained model looks up.' },
  { name: 'pairCount', type: 'choice', default: '16', label: 'Pairs', page: true, ...explore('pairs'),
    choices: [{ value: '16', label: '16' }, { value: '64', label: '64 (a batch)' }],
    help: 'How many held-out queries the grid shows; 64 is one batch of the course, the grid of notebook '
      + '02\'s last figure.' },
  buildStepProperty(attentionTestBuild, {}),
  studentProperty(),
];

// Check your build (issue 39): the notebook's AttentionTest with fixed weights, step by step.
const buildSection = buildCheckSection(attentionTestBuild, {
  title: 'Check your build, step by step (notebook 02)',
  text: 'Notebook 02 builds AttentionTest: an MLP embeds the query image and the database, nn.MultiheadAttention '
    + 'weighs the database, and the weights retrieve an image. Define it in your notebook, load the weights below and '
    + 'give it these images; then compare each step with the lab\'s: paste what print() showed, or save the tensor '
    + 'with torch.save(t, "step.pt") and open the file.',
});

const checks = [
  (v) => (v.embedDim % v.heads === 0 ? null : { name: 'heads', message: 'heads must divide the embedding width '
    + `(${v.embedDim} is not divisible by ${v.heads})` }),
  (v) => (v.query < v.databaseSize ? null : { name: 'query', message: `the query image must be one of the database's `
    + `${v.databaseSize} (0 to ${v.databaseSize - 1}), got ${v.query}` }),
];

const presets = [
  { id: 'course', label: 'The course\'s model', values: {},
    text: 'Linear(784, 32) shared by queries and database, one head, batch 64, lr 1e-4: top-1 label match climbs from '
      + 'chance (~10%) to about 65% in 1,000 steps.' },
  { id: 'few-steps', label: 'Too few steps', values: { steps: 100 },
    text: 'After 100 steps the weights are nearly uniform: every retrieval is close to the database\'s mean image.' },
  { id: 'lr-high', label: 'Learning rate 10x', values: { lr: 0.001 },
    text: 'Ten times the course\'s learning rate learns faster at first; watch whether the retrieval '
      + 'MSE keeps falling.' },
  { id: 'four-heads', label: '4 heads', values: { heads: 4 },
    text: 'Four heads of 8 dimensions each; the retrieval uses the mean of their weights.' },
];

/** Values -> the worker's configure request. */
function configureRequest(v) {
  return { config: { seed: v.seed, heads: v.heads, embedDim: v.embedDim, batch: v.batch, lr: v.lr,
    databaseSize: v.databaseSize },
    backend: v.backend, steps: v.steps };
}

// ---- the trainer in the worker and the CLI (web/training/session.js) ----

const trainer = {
  assets: { digits: { file: DIGITS_ASSET, load: loadDigits } },
  id: 'lookup', // the C++ trainer (core/trainers/registry.cpp)
  defaultSteps: (module) => module.LookupTrainer.defaults().steps,
  // One attention call a step: the batch's queries (T = batch) against the database (S), in one problem.
  shape: (c) => ({ B: 1, H: c.heads, T: c.batch, S: c.databaseImages, D: c.embedDim / c.heads }),
  fixedSample: () => ({ heldOut: 0 }),
  sampleArgs: (config, sample) => sample,
  evaluate: (t, backend) => t.evaluate({ backend }),
  // Floating-point operations of one training step (forward + backward ~ 3 forwards): the shared
  // Linear(784, E) on the batch and on the N database images, the attention's projections, scores,
  // and the retrieval (weights x images). For the time estimate shown beside the settings; memory is
  // the C++ trainer's own bound (trainingBytes), checked with the config.
  flopsPerStep(v) {
    const P = 784, N = v.databaseSize, E = v.embedDim, B = v.batch;
    return 3 * 2 * (B * P * E + N * P * E + (B + 2 * N) * E * E + 2 * B * N * E + B * N * P);
  },
  trainingBytes: (module, config) => module.LookupTrainer.trainingBytes(config),
  // The query's own pixels go with the answer, so the page can draw query and retrieval side by side.
  inspect(t, sample, backend) {
    const result = t.inspect(sample, { backend });
    if (sample.heldOut !== undefined) {
      const { pixels } = t.images('heldOut');
      result.queryPixels = pixels.slice(sample.heldOut * result.P, (sample.heldOut + 1) * result.P);
    }
    return result;
  },
};

// ---- view models ----

const percent = (x) => `${(100 * x).toFixed(1)}%`;

const metrics = {
  evaluationTitle: 'Evaluation on the 2,000 held-out queries',
  loss: { title: 'Retrieval MSE', yTitle: 'MSE', evaluation: (e) => e.mse,
    lowest: 'Minimum MSE loss (as the notebook prints it)',
    references: (e) => [{ label: 'mean image', y: e.meanImageMse }] },
  accuracy: { title: 'Top-1 label match', yTitle: 'label match', evaluation: (e) => e.top1,
    references: (e) => [{ label: 'chance', y: e.chance },
      { label: 'raw-pixel nearest neighbour', y: e.nearestNeighbourTop1 }] },
  batchLabel: 'training batch', evaluationLabel: 'held-out queries',
};

function evaluationModel(config, e) {
  if (!e) return null;
  return {
    step: e.step,
    items: [
      { id: 'top1', label: 'Top-1 label match', value: percent(e.top1), raw: e.top1,
        help: `Share of the ${e.queries} held-out queries whose most-weighted database image has the query's label.` },
      { id: 'chance', label: 'Chance', value: percent(e.chance), raw: e.chance,
        help: 'Top-1 label match of a random pick, from the database\'s own label mix (MNIST\'s classes '
          + 'are not balanced).' },
      { id: 'nearest-top1', label: 'Nearest neighbour', value: percent(e.nearestNeighbourTop1),
        raw: e.nearestNeighbourTop1,
        help: 'Top-1 label match of the database image closest in raw pixels: a strong baseline with no learning.' },
      { id: 'top10', label: 'Top-10 precision', value: percent(e.top10), raw: e.top10,
        help: 'Share of the 10 most-weighted database images that have the query\'s label (at most 0.85 here: some '
          + 'digits have fewer than 10 copies).' },
      { id: 'mse', label: 'Retrieval MSE', value: e.mse.toFixed(4), raw: e.mse,
        help: 'Mean squared error between the retrieval and the query, pixels in [-1, 1].' },
      { id: 'mean-image-mse', label: 'Mean image MSE', value: e.meanImageMse.toFixed(4), raw: e.meanImageMse,
        help: 'The MSE of answering every query with the database\'s mean image: what uniform weights give.' },
    ],
    headline: e.top1 > e.chance * 2
      ? `The trained lookup finds an image with the query's label ${percent(e.top1)} of the time (chance: `
        + `${percent(e.chance)}).`
      : `Not much better than chance yet (${percent(e.top1)} against ${percent(e.chance)}): train longer.`,
    heads: [],
    explanation: e.mse < e.meanImageMse
      ? `Its retrieval is closer to the query (MSE ${e.mse.toFixed(3)}) than the mean image `
        + `(${e.meanImageMse.toFixed(3)}): the weights concentrate on similar digits.`
      : null,
  };
}

/** The trained model's answer for one held-out query -> figures (query, retrieval, weights, top 10). */
/**
 * The trained model's answer for one query -> figures (query, retrieval, weights, tinted grid, top 10).
 * prefix: the figures' ids ('trained': a held-out query with its label; 'own': the user's drawing).
 */
function retrievalFigures(config, result, database, caption = '', prefix = 'trained') {
  if (!result) return [];
  const P = result.P;
  const labelled = result.label >= 0; // a drawing has no label
  const figures = [
    { kind: 'images', id: `${prefix}-query`,
      title: labelled ? `Query (label ${result.label}): 1 × 784` : 'Your digit (centred): 1 × 784',
      images: [result.queryPixels], size: 28, scale: 4,
      captions: [labelled ? `held-out query, label ${result.label}` : 'the query'] },
    { kind: 'images', id: `${prefix}-retrieval`, title: `Retrieval (1 × 784)${caption}`, images: [result.retrieval],
      range: [-1, 1], size: 28, scale: 4, captions: ['weights × database images'] },
    { kind: 'bars', id: `${prefix}-weights`, title: `Weights over the database (1 × ${result.S})`,
      values: result.weightsMean, labels: database?.labels, xTitle: 'database image', yTitle: 'weight',
      highlight: result.topIndex[0] },
  ];
  if (database) {
    figures.push({ kind: 'images', id: `${prefix}-grid`, title: 'The database, tinted by weight',
      images: splitImages(database.pixels, P), size: 28, columns: 10, scale: 1.5, tint: normalised(result.weightsMean),
      labels: Array.from(database.labels), highlight: result.topIndex[0] });
    const top = Array.from(result.topIndex);
    const same = (r) => (labelled ? (result.topLabel[r] === result.label ? ' ✓' : ' ✗') : '');
    figures.push({ kind: 'images', id: `${prefix}-top10`, title: 'Top-10 matches',
      images: top.map((i) => database.pixels.subarray(i * P, (i + 1) * P)), size: 28, scale: 2, columns: 10,
      captions: top.map((i, r) => `${result.topLabel[r]}${same(r)}`),
      names: top.map((i, r) => `#${r + 1}: database image ${i}, label ${result.topLabel[r]}, weight `
        + `${result.topWeight[r].toFixed(3)}`
        + (labelled ? (result.topLabel[r] === result.label ? ' (same label as the query)' : ' (another label)') : '')) });
  }
  return figures;
}

const splitImages = (pixels, P) => Array.from({ length: pixels.length / P },
  (_, i) => pixels.subarray(i * P, (i + 1) * P));
/** Weights scaled so the largest is 1 (a tint shows where the weight is, whatever its total). */
function normalised(weights) {
  let max = 0;
  for (const w of weights) max = Math.max(max, w);
  return Array.from(weights, (w) => (max > 0 ? w / max : 0));
}

// ---- weights files ----

/** A parsed safetensors file -> the property values of a model it fits (throws with the reason). */
function valuesFromWeights(file) {
  const t = file.tensors;
  const embed = t['img_mlp.0.weight'];
  if (!embed || !t['mha.in_proj_weight']) {
    throw new Error('not a Lookup model: it has no img_mlp.0.weight and mha.in_proj_weight (the course\'s '
      + 'AttentionTest names)');
  }
  if (embed.shape.length !== 2 || embed.shape[1] !== 784) throw new Error('img_mlp.0.weight must be [width, 784], got '
    + `[${embed.shape.join(', ')}]`);
  const m = file.metadata ?? {};
  const values = { embedDim: embed.shape[0] };
  if (/^\d+$/.test(m.heads ?? '')) values.heads = Number(m.heads);
  if (/^\d+$/.test(m.seed ?? '')) values.seed = Number(m.seed);
  return values;
}

export const lookupLab = defineLab({
  id: 'lookup',
  title: 'Lookup',
  subtitle: 'Lab 2 — attention as a database query',
  notebook: '02_attention_basics_mnist_lookup',
  summary: 'Query a database of real MNIST digits: hard attention retrieves exactly, random attention blurs, trained '
    + 'attention finds a match.',
  // The home page's card: a trained query's weights over the 10 x 10 database, a few matches bright.
  thumbnail: {
    label: 'Weights over a 10 by 10 database of digits: a few matching images light up',
    cells: () => Array.from({ length: 10 },
      (_, r) => Array.from({ length: 10 },
        (_, c) => ([[1, 3], [4, 7], [6, 2], [8, 8]].some(([a, b]) => a === r && b === c) ? 0.95
      : [[2, 5], [7, 0]].some(([a, b]) => a === r && b === c) ? 0.5 : 0.05))),
  },
  properties,
  checks,
  // A smaller database takes the hard-attention query along (its last image), so the size is never
  // refused for a view setting; a link with both wrong still gets the check's message.
  afterChange: (name, values) => (name === 'databaseSize' && values.query >= values.databaseSize
    ? { ...values, query: values.databaseSize - 1 } : values),
  presets,
  intro: () => INTRO,
  predict: lookupPrediction, // issue 39: asked under the retrieval grid, which must stay on a phone's first screen
  predictIn: 'section:pairs',
  configureRequest,
  trainer,
  metrics,
  sections: [...SECTIONS, buildSection],
  // Training first (the retrievals sharpen as it trains), then the lesson in the course's order.
  panels: ['transport', 'section:pairs', 'curves', 'compare', 'section:database', 'section:hard', 'section:soft',
    'section:multi', 'section:mha', 'section:trained', 'section:own', 'section:build'],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  firstScreen: { panels: ['transport', 'section:pairs'], figure: 'canvas[data-figure="pairs-grid"]', action: '#play' },
  figureStem: (config) => `lookup-seed${config.seed}`,
  weights: {
    valuesFromFile: valuesFromWeights,
    metadata: (config, step) => ({ lab: 'lookup', heads: config.heads, steps: step, seed: config.seed }),
    mustMatch: [{ name: 'heads', kind: 'count' }],
    fileName: (config, step) => `lookup-step${step}.safetensors`,
    describe: (config) => `a Lookup model with ${config.heads} head(s), width ${config.embedDim}`,
  },
  views: {
    evaluation: evaluationModel,
    retrievalFigures,
  },
  cli: {
    startRecord: (c) => ({ heads: c.heads, batch: c.batch, lr: c.lr }),
    startText: (c, steps, seed) => `lookup, ${steps} steps, seed ${seed}, ${c.heads} head(s), batch ${c.batch}, lr `
      + `${c.lr}; database ${c.databaseImages} digits, ${c.heldOutImages} held-out queries, `
      + `${c.trainingImages} for training`,
    progress: (m, t) => ({ record: { step: m.step, epoch: t.epoch, loss: m.loss, top1: m.accuracy },
      text: `step ${String(m.step).padStart(5)}  epoch ${t.epoch}  retrieval MSE ${m.loss.toFixed(4)}  batch top-1 `
        + `${(100 * m.accuracy).toFixed(1)}%` }),
    final({ config: c, evaluation: e, trainer: t }) {
      return {
        record: {
          head: { heads: c.heads, epochs: t.epoch },
          body: { queries: e.queries, top1: e.top1, top10: e.top10, mse: e.mse, meanImageMse: e.meanImageMse,
            nearestNeighbourTop1: e.nearestNeighbourTop1, nearestNeighbourMse: e.nearestNeighbourMse,
            chance: e.chance },
        },
        lines: [
          `on ${e.queries} held-out queries: top-1 label match ${percent(e.top1)} (chance ${percent(e.chance)}, `
            + `raw-pixel nearest neighbour ${percent(e.nearestNeighbourTop1)}); top-10 precision ${percent(e.top10)}`,
          `retrieval MSE ${e.mse.toFixed(4)} (the database's mean image: ${e.meanImageMse.toFixed(4)}; copying the `
            + `nearest image: ${e.nearestNeighbourMse.toFixed(4)})`,
        ],
      };
    },
  },
});
