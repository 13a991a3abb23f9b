// Lab 01, "Alignment" (course notebook 01_attention_principle): attention as learnable addressing.
// copy -> diagonal, reverse -> anti-diagonal, pointer -> a sharp peak on the matching key.
// This file only declares: the property table, presets, texts, and pure functions that turn the
// worker's data into view models. The page machinery (web/ui/lab_page.js) renders them; no DOM here.
import { alignmentConfigFromWeights } from './alignment_weights.js';
import { alignmentPrediction } from './01_alignment_predict.js';
import { backendProperty, paletteProperty, speedOf, speedProperty } from './common.js';
import { buildCheckSection, buildStepProperty } from './builds/build_section.js';
import { crossAttnClassifierBuild } from './builds/cross_attn_classifier.js';

const TASKS = ['copy', 'reverse', 'pointer'];
// Steps per task, as the notebook trains them (core/trainers/alignment_task.cpp default_steps).
const TASK_STEPS = { copy: 200, reverse: 250, pointer: 350 };
const sequenceTask = (v) => v.task !== 'pointer';
const pointerTask = (v) => v.task === 'pointer';

export const INTRO = {
  copy: 'Copy: the output at position t is the input token at position t. Each output position must learn '
    + 'to look at the same input position, so the attention heatmap should become a bright diagonal.',
  reverse: 'Reverse: the output at position t is the input token at position L-1-t. The model must learn '
    + 'to look at the mirrored position, so expect a bright anti-diagonal (bottom-left to top-right).',
  pointer: 'Pointer (lookup): given key→value pairs and a query key, output the value stored under that key. '
    + 'The query should attend to the pair whose key matches: expect one sharp peak on the matching key.',
};

const properties = [
  { name: 'task', type: 'choice', default: 'copy', effect: 'reset', group: 'Task', label: 'Task',
    choices: TASKS.map((t) => ({ value: t, label: t })),
    help: 'What the model must learn: copy the input, reverse it, or look up the value of a query key.' },
  { name: 'uniqueKeys', type: 'bool', default: false, effect: 'reset', group: 'Task', label: 'Unique keys',
    when: pointerTask, whenText: 'applies to --task pointer only',
    help: 'Draw the pointer keys without repetition, so every query matches exactly one pair.' },
  { name: 'length', type: 'int', default: 16, min: 1, max: 64, effect: 'reset', group: 'Task', label: 'Length L',
    when: sequenceTask, whenText: 'applies to --task copy and reverse only', help: 'Tokens per input sequence (and output positions).' },
  { name: 'vocab', type: 'int', default: 32, min: 2, max: 256, effect: 'reset', group: 'Task', label: 'Vocabulary V',
    when: sequenceTask, whenText: 'applies to --task copy and reverse only', help: 'Token ids 1..V-1 (0 is reserved).' },
  { name: 'pairs', type: 'int', default: 12, min: 1, max: 64, effect: 'reset', group: 'Task', label: 'Pairs M',
    when: pointerTask, whenText: 'applies to --task pointer only', help: 'Key→value pairs per example.' },
  { name: 'keyRange', type: 'int', default: 12, min: 1, max: 64, effect: 'reset', group: 'Task', label: 'Key range K',
    when: pointerTask, whenText: 'applies to --task pointer only', help: 'Keys are drawn from 1..K.' },
  { name: 'valueRange', type: 'int', default: 12, min: 1, max: 64, effect: 'reset', group: 'Task',
    label: 'Value range', when: pointerTask, whenText: 'applies to --task pointer only', help: 'Values are drawn from K+1..K+value range.' },
  { name: 'dModel', type: 'int', default: 32, min: 1, max: 256, effect: 'reset', group: 'Model', label: 'd_model',
    help: 'Width E of the embeddings and of the attention layer.' },
  { name: 'heads', type: 'int', default: 4, min: 1, max: 16, effect: 'reset', group: 'Model', label: 'Heads',
    help: 'Attention heads H; each works in d_model / heads dimensions.' },
  { name: 'positional', type: 'bool', default: true, effect: 'reset', group: 'Model', label: 'Positional embeddings',
    help: 'Ablation switch: without positional embeddings, keys and queries carry no position.' },
  { name: 'batch', type: 'int', default: 128, min: 1, max: 1024, effect: 'reset', group: 'Training', label: 'Batch',
    help: 'Fresh random examples per training step.' },
  { name: 'lr', type: 'number', default: 0.003, min: 0, minExclusive: true, max: 1, step: 0.001, effect: 'live',
    group: 'Training', label: 'Learning rate', help: 'Adam learning rate; can change while training runs.' },
  { name: 'steps', type: 'int', default: 200, defaultText: 'per task: copy 200, reverse 250, pointer 350', min: 1, max: 100000, effect: 'live', group: 'Training', label: 'Steps',
    help: 'Train until this many steps; can change while training runs.' },
  { name: 'seed', type: 'int', default: 0, min: 0, max: 4294967295, effect: 'reset', group: 'Training', label: 'Seed',
    help: 'Seeds the initial weights and the data: the same seed gives the same run.' },
  backendProperty(),
  // 20 steps/s: the copy task's 200 steps take 10 s, the diagonal forming as you watch.
  speedProperty({ choices: ['1', '5', '20', '100', 'max'], initial: '20' }),
  paletteProperty(),
  buildStepProperty(crossAttnClassifierBuild, {}),
];

// Check your build (issue 39): the notebook's CrossAttnSeqClassifier with fixed weights, step by step.
const buildSection = buildCheckSection(crossAttnClassifierBuild, {
  title: 'Check your build, step by step (notebook 01)',
  text: 'Notebook 01 builds CrossAttnSeqClassifier around nn.MultiheadAttention. Define it in your notebook, load the weights below '
    + 'and give it this batch; then compare each step with the lab\'s: paste what print() showed, or save the tensor with '
    + 'torch.save(t, "step.pt") and open the file. The lab computes the same module with the same weights.',
});

const checks = [
  (v) => (v.dModel % v.heads === 0 ? null : { name: 'heads', message: `heads must divide d_model (${v.dModel} is not divisible by ${v.heads})` }),
  (v) => (v.task === 'pointer' && v.uniqueKeys && v.pairs > v.keyRange
    ? { name: 'pairs', message: `unique keys need pairs M (${v.pairs}) ≤ key range K (${v.keyRange})` } : null),
];

const presets = [
  { id: 'one-head', label: '1 head', values: { task: 'copy', heads: 1 },
    text: 'One head has to do all the addressing alone; compare its single clean diagonal with the 4-head default.' },
  { id: 'four-heads', label: '4 heads', values: { task: 'copy', heads: 4 },
    text: 'Four heads share the work: each head may cover part of the diagonal, and the head mean shows the whole.' },
  { id: 'few-steps', label: 'Too few steps', values: { task: 'copy', steps: 30 },
    text: 'After 30 steps the attention is still nearly uniform: the diagonal has not formed, so accuracy stays low.' },
  { id: 'lr-high', label: 'Learning rate too high', values: { task: 'copy', lr: 0.3 },
    text: 'With lr 0.3 Adam overshoots: the loss jumps instead of falling and the heatmap never settles on the diagonal.' },
  { id: 'no-positions', label: 'No positional embeddings', values: { task: 'copy', positional: false },
    text: 'Copy fails: the keys carry no position, so output position t cannot find input position t — attention can match only token contents.' },
  { id: 'reverse', label: 'Reverse', values: { task: 'reverse' },
    text: 'The same model learns the mirrored alignment: watch the anti-diagonal appear.' },
  { id: 'pointer-duplicates', label: 'Pointer: duplicate keys', values: { task: 'pointer', uniqueKeys: false },
    text: 'Keys repeat, so a query can match two pairs with different values: attention splits between them and no model can beat the Bayes ceiling.' },
  { id: 'pointer-unique', label: 'Pointer: unique keys', values: { task: 'pointer', uniqueKeys: true },
    text: 'Every key appears once: the query finds exactly one pair, the peak gets sharp, and accuracy can reach 100%.' },
];

/** The values after the user changed `name`: a new task brings that task's step count. */
function afterChange(name, values) {
  if (name === 'task') return { ...values, steps: TASK_STEPS[values.task] };
  return values;
}

/** Values -> the worker's configure request. */
function configureRequest(v) {
  return {
    config: {
      task: v.task, seed: v.seed, dModel: v.dModel, heads: v.heads, batch: v.batch, lr: v.lr,
      vocab: v.vocab, length: v.length, pairs: v.pairs, keyRange: v.keyRange, valueRange: v.valueRange,
      uniqueKeys: v.uniqueKeys, positional: v.positional,
    },
    backend: v.backend,
    steps: v.steps,
  };
}


// ---- the trainer in the worker and the CLI (web/training/session.js) ----

const EVAL_SAMPLES = 1024;

const trainer = {
  assets: {},
  id: 'alignment', // the C++ trainer (core/trainers/registry.cpp)
  defaultSteps: (module, config) => module.AlignmentTrainer.defaults(config.task).steps,
  // One attention call a step: the batch's output positions (T) against its input positions (S).
  shape: (c) => ({ B: c.batch, H: c.heads, T: c.outLength, S: c.inLength, D: c.dModel / c.heads }),
  fixedSample: (t) => t.fixedSample(),
  sampleArgs: (config, sample) => (config.task === 'pointer'
    ? { keys: sample.keys, values: sample.values, query: sample.query }
    : { tokens: sample.keys }),
  evaluate: (t, backend) => t.evaluate(EVAL_SAMPLES, { backend }),
  // Floating-point operations of one training step (forward + backward ~ 3 forwards): projections
  // q (T), k and v (S), the output projection, scores and weighted sum, the output layer. For the
  // time estimate shown beside the settings; memory is the C++ trainer's own bound (trainingBytes).
  flopsPerStep(v) {
    const pointer = v.task === 'pointer';
    const T = pointer ? 1 : v.length, S = pointer ? v.pairs : v.length;
    const V = pointer ? v.keyRange + v.valueRange + 1 : v.vocab;
    const E = v.dModel;
    return 3 * 2 * v.batch * (2 * T * E * E + 2 * S * E * E + 2 * T * S * E + T * E * V);
  },
  trainingBytes: (module, config) => module.AlignmentTrainer.trainingBytes(config),
  inspect: (t, sample, backend) => t.inspect(sample, { backend }),
};

const metrics = {
  evaluationTitle: 'Evaluation on 1,024 fresh samples',
  loss: { title: 'Loss', yTitle: 'cross-entropy', evaluation: (e) => e.loss, references: () => [] },
  accuracy: { title: 'Accuracy', yTitle: 'accuracy', evaluation: (e) => e.accuracy,
    references: (e, config) => (config.task === 'pointer' ? [{ label: 'Bayes ceiling', y: e.bayesCeiling }] : []) },
  batchLabel: 'training batch', evaluationLabel: 'evaluation (1,024 fresh)',
};

// ---- view models: the worker's arrays -> what a view draws ----

const list = (typed) => Array.from(typed ?? []);

/** The sample's target tokens (inspect results carry none: they follow from the task). */
function targetsOf(config, sample) {
  if (sample.targets) return list(sample.targets);
  if (config.task === 'pointer') {
    const i = list(sample.keys).indexOf(sample.query);
    return [i >= 0 ? list(sample.values)[i] : 0];
  }
  const tokens = list(sample.keys ?? sample.tokens);
  return config.task === 'copy' ? tokens : tokens.slice().reverse();
}

/** Axis labels of the attention matrix for this sample. */
function axesOf(config, sample, T) {
  const keys = list(sample.keys ?? sample.tokens);
  const targets = targetsOf(config, sample);
  if (config.task === 'pointer') {
    const values = list(sample.values);
    return {
      xTicks: keys.map((k, s) => `${k}→${values[s]}`),
      xNames: keys.map((k, s) => `pair ${s}: key ${k} → value ${values[s]}`),
      tokens: keys.map((k) => k),
      yTicks: [`query ${sample.query}`],
      yNames: [`query key ${sample.query} (target ${targets[0]})`],
    };
  }
  return {
    xTicks: keys.map(String),
    xNames: keys.map((k, s) => `input position ${s}`),
    tokens: keys,
    yTicks: Array.from({ length: T }, (_, t) => `${t}: ${targets[t]}`),
    yNames: Array.from({ length: T }, (_, t) => `output position ${t} (target ${targets[t]})`),
  };
}

/**
 * inspection ({H, T, S, weights [H,T,S], weightsMean [T,S]}) -> heatmap models for the head mean and
 * each head. Heads are numbered from 0, as the CLI's records and PyTorch's index count them.
 */
function heatmapModels(config, sample, inspection, caption) {
  const { H, T, S } = inspection;
  const axes = axesOf(config, sample, T);
  const base = { rows: T, cols: S, xTitle: 'key = input position', yTitle: 'query = output position', ...axes };
  const heads = [];
  for (let h = 0; h < H; h++) {
    heads.push({ ...base, id: `head-${h}`, title: `Head ${h}${caption}`,
      values: inspection.weights.slice(h * T * S, (h + 1) * T * S) });
  }
  return { mean: { ...base, id: 'mean', title: `Head mean${caption}`, values: inspection.weightsMean }, heads };
}

/** Rows printed as the notebook does: input, target, prediction; wrong predictions are marked. */
function tokenRows(config, sample, inspection) {
  const predictions = list(inspection.predictions);
  const confidence = list(inspection.confidence);
  const targets = targetsOf(config, sample);
  const tokens = (xs) => xs.map((x) => ({ text: String(x) }));
  // Pointer with a repeated key: every value stored under the query's key is a right answer.
  const matching = config.task === 'pointer'
    ? list(sample.values).filter((v, s) => list(sample.keys)[s] === sample.query) : [];
  const accepted = (p, t) => p === targets[t] || matching.includes(p);
  const predicted = predictions.map((p, t) => ({
    text: String(p), wrong: !accepted(p, t),
    title: `${accepted(p, t) ? 'correct' : `wrong: the target is ${targets[t]}`}, confidence ${(confidence[t] ?? 0).toFixed(2)}`,
  }));
  const correct = predicted.filter((p) => !p.wrong).length;
  const ambiguity = matching.length > 1
    ? ` — the query key ${sample.query} appears ${matching.length} times (values ${matching.join(', ')}): attention splits between them, and any of them counts as right.`
    : '';
  const rows = config.task === 'pointer'
    ? [{ label: 'keys', tokens: tokens(list(sample.keys)) }, { label: 'values', tokens: tokens(list(sample.values)) },
      { label: 'query', tokens: tokens([sample.query]) }, { label: 'target', tokens: tokens(targets) },
      { label: 'pred', tokens: predicted }]
    : [{ label: 'input', tokens: tokens(list(sample.keys ?? sample.tokens)) }, { label: 'target', tokens: tokens(targets) },
      { label: 'pred', tokens: predicted }];
  return { rows, summary: `${correct} of ${predicted.length} predicted tokens correct${ambiguity}` };
}

const percent = (x) => `${(100 * x).toFixed(1)}%`;

/** The latest evaluation on 1,024 fresh samples -> lines for the summary panel. */
function evaluationModel(config, evaluation) {
  if (!evaluation) return null;
  const pointer = config.task === 'pointer';
  const what = pointer ? 'keys that match the query'
    : config.task === 'copy' ? 'the same input position (the diagonal)' : 'the mirrored input position (the anti-diagonal)';
  const items = [
    { id: 'accuracy', label: 'Accuracy', value: percent(evaluation.accuracy), raw: evaluation.accuracy,
      help: `Share of output tokens predicted correctly on ${evaluation.samples} fresh samples at step ${evaluation.step}.` },
    { id: 'loss', label: 'Loss', value: evaluation.loss.toFixed(4), raw: evaluation.loss, help: 'Cross-entropy on the same samples.' },
  ];
  if (pointer) {
    items.push({ id: 'bayes-ceiling', label: 'Bayes ceiling', value: percent(evaluation.bayesCeiling),
      raw: evaluation.bayesCeiling, help: 'The best accuracy any model can reach on these samples.' });
  }
  const heads = list(evaluation.headMass).map((mass, h) => ({ label: `head ${h}`, mass, best: h === evaluation.bestHead }));
  const explanation = pointer && !config.uniqueKeys
    ? `Keys are drawn with repetition, so a query often matches two or more pairs with different values. Attention `
      + `can only split its weight between the matching keys, and the model must guess: no model can beat the Bayes `
      + `ceiling of ${percent(evaluation.bayesCeiling)}. This is the data, not a bug — try "unique keys".`
    : null;
  return {
    step: evaluation.step,
    items,
    headline: `Best head ${evaluation.bestHead} puts ${evaluation.bestHeadMass.toFixed(2)} of its weight on ${what}.`,
    heads,
    explanation,
  };
}

// ---- "type your own input" ----

const inputFields = (config) => (config.task === 'pointer'
  ? [
    { name: 'pairs', label: 'Key→value pairs', placeholder: '3:15, 7:20, 1:13',
      help: `Up to ${config.pairs} pairs "key:value", keys 1..${config.keyRange}, values ${config.keyRange + 1}..${config.keyRange + config.valueRange}.` },
    { name: 'query', label: 'Query key', placeholder: '7', help: `A key in 1..${config.keyRange}.` },
  ]
  : [{ name: 'tokens', label: 'Input tokens', placeholder: '5, 3, 9, 1',
    help: `1 to ${config.length} tokens in 1..${config.vocab - 1}, separated by commas or spaces.`
      + (config.task === 'reverse' ? ` The model learned to mirror ${config.length} positions: a shorter input moves the mirror, so expect errors.` : '') }]);

function parseIntegers(text, what) {
  const parts = String(text).split(/[\s,]+/).filter(Boolean);
  if (!parts.length) return { error: `Type some ${what}.` };
  const bad = parts.find((p) => !/^[+-]?\d+$/.test(p));
  if (bad !== undefined) return { error: `'${bad}' is not a whole number.` };
  return { numbers: parts.map(Number) };
}

/** The typed fields -> {sample} for the worker's inspect, or {error}. Range checks are the trainer's. */
function parseInput(config, fields) {
  if (config.task !== 'pointer') {
    const { numbers, error } = parseIntegers(fields.tokens ?? '', 'tokens');
    return error ? { error } : { sample: { tokens: numbers } };
  }
  const parts = String(fields.pairs ?? '').split(/[\s,;]+/).filter(Boolean);
  if (!parts.length) return { error: 'Type some key:value pairs.' };
  const keys = [], values = [];
  for (const part of parts) {
    const m = /^([+-]?\d+)\s*(?::|->|→|=)\s*([+-]?\d+)$/.exec(part);
    if (!m) return { error: `'${part}' is not a key:value pair (write e.g. 3:15).` };
    keys.push(Number(m[1]));
    values.push(Number(m[2]));
  }
  const query = String(fields.query ?? '').trim();
  if (!/^[+-]?\d+$/.test(query)) return { error: query ? `The query '${query}' is not a whole number.` : 'Type a query key.' };
  return { sample: { keys, values, query: Number(query) } };
}

/** A sample in the worker's inspect form -> the form the views read (keys, values, query). */
function sampleOf(config, inspectSample) {
  return config.task === 'pointer' ? inspectSample : { keys: inspectSample.tokens };
}

// ---- weights files (docs/weights.md) ----

const SEED = /^\d+$/;

/** A parsed safetensors file -> the property values of a model it fits (throws with the reason). */
function valuesFromWeights(file) {
  const values = alignmentConfigFromWeights(file);
  const m = file.metadata;
  // The lab writes these too; a notebook file without them keeps the page's seed and positions on.
  if (SEED.test(m.seed ?? '')) values.seed = Number(m.seed);
  if (m.positional === 'false' || m.positional === 'true') values.positional = m.positional === 'true';
  return values;
}

/** What an exported file records beside its tensors: what the shapes cannot tell. */
function weightsMetadata(config, step) {
  return { lab: 'alignment', task: config.task, heads: config.heads, steps: step, seed: config.seed,
    positional: config.positional, ...(config.task === 'pointer' ? { uniqueKeys: config.uniqueKeys } : {}) };
}

// ---- headless (web/cli/attnlab.mjs): the texts and records of a run ----

const PATTERN = { copy: 'diagonal', reverse: 'anti-diagonal', pointer: 'matching keys' };

const cli = {
  heatmapFigure: true, // --png / --svg: the head-mean heatmap of the fixed sample
  startRecord: (c) => ({ task: c.task }),
  startText: (c, steps, seed) => `${c.task}, ${steps} steps, seed ${seed}`,
  progress: (m) => ({ record: m,
    text: `step ${String(m.step).padStart(5)}  loss ${m.loss.toFixed(4)}  batch accuracy ${(100 * m.accuracy).toFixed(1)}%` }),
  final({ config: c, evaluation: e, snapshot, sample }) {
    const attention = [];
    for (let t = 0; t < snapshot.T; t++) attention.push(Array.from(snapshot.weightsMean.slice(t * snapshot.S, (t + 1) * snapshot.S)));
    const pointer = c.task === 'pointer';
    return {
      record: {
        head: { task: c.task, uniqueKeys: !!c.uniqueKeys },
        body: {
          accuracy: e.accuracy, loss: e.loss, evaluatedOn: e.samples, patternMass: e.patternMass,
          bestHead: e.bestHead, bestHeadMass: e.bestHeadMass, headMass: e.headMass,
          ...(pointer ? { bayesCeiling: e.bayesCeiling } : {}),
          sample: { keys: list(sample.keys), values: list(sample.values), targets: list(sample.targets),
            ...(sample.query !== undefined ? { query: sample.query } : {}), predictions: list(snapshot.predictions) },
          attention,
        },
      },
      lines: [
        `accuracy on ${e.samples} fresh samples: ${(100 * e.accuracy).toFixed(2)}%`
          + (pointer ? ` (Bayes ceiling of this batch: ${(100 * e.bayesCeiling).toFixed(2)}%)` : ''),
        `head-mean attention on the ${PATTERN[c.task]}: ${e.patternMass.toFixed(3)}; best head ${e.bestHead}: ${e.bestHeadMass.toFixed(3)}`,
      ],
    };
  },
};

export const alignmentLab = {
  id: 'alignment',
  title: 'Alignment',
  subtitle: 'Lab 1 — attention as learnable addressing',
  notebook: '01_attention_principle',
  summary: 'Copy, reverse and pointer tasks: watch the attention find the diagonal, the anti-diagonal and the matching key.',
  // The home page's card: what a trained copy model's head-mean attention looks like.
  thumbnail: {
    label: 'A bright diagonal: each output position attends to the same input position',
    cells: () => Array.from({ length: 8 }, (_, t) => Array.from({ length: 8 }, (_, s) => (s === t ? 0.92 : Math.abs(s - t) === 1 ? 0.18 : 0.04))),
  },
  properties,
  checks,
  presets,
  intro: (values) => INTRO[values.task],
  predict: alignmentPrediction, // asked beside Play (issue 39)
  afterChange,
  configureRequest,
  speedOf,
  trainer,
  metrics,
  sections: [buildSection],
  panels: ['transport', 'attention', 'curves', 'compare', 'rows', 'inspect', 'section:build'],
  // The first screen (issue 29): these panels open the page, before the settings on a phone; the main
  // figure and the main action must be in view there at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs).
  firstScreen: { panels: ['transport', 'attention'], figure: '#heatmap-main', action: '#play' },
  attentionPanel: { title: 'Attention on a fixed sample', help: 'Rows are the queries (output positions), columns the keys (input positions). Bright = much weight.' },
  figureStem: (config) => config.task,
  cli,
  weights: {
    // A file whose metadata names another task or head count is refused by the CLI, not followed.
    mustMatch: [{ name: 'task' }, { name: 'heads', kind: 'count' }],
    valuesFromFile: valuesFromWeights,
    metadata: weightsMetadata,
    fileName: (config, step) => `alignment-${config.task}-step${step}.safetensors`,
    describe: (config) => `an Alignment model of the ${config.task} task`,
  },
  views: {
    heatmaps: (config, sample, inspection, caption = '') => heatmapModels(config, sample, inspection, caption),
    tokenRows,
    evaluation: evaluationModel,
    inputFields,
    parseInput,
    sampleOf,
  },
};
