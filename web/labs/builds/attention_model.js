// Build `attention-model`: notebook 05_one_query_more_twos_than_fours's AttentionModel, the exercise the
// notebook has you write (make_batch, the embedding, keys and values, attention, the attention-weighted
// values, forward), on four fixed sequences of ten digits (B = 4, S = 10, embed_dim = att_dim = 5):
//   batch      X (N, 10) digits 0..9, y (N, 1): 1 when X has more 2s than 4s (make_batch is random:
//              checked against its rule, not against numbers)
//   embedding  embed(x)                              (4, 10, 5)
//   keys       WK(embed(x))                          (4, 10, 5)
//   values     WV(embed(x))                          (4, 10, 1)
//   attention  softmax(query · keysᵀ / √5, dim=-1)   (4, 1, 10)
//   weighted   attention @ values, [:, 0, :]         (4, 1)
//   forward    nn(weighted): the probability         (4, 1)
// The notebook's "Alternatively" embeds a digit as one_hot(x) through nn.Linear(10, 5): build
// `attention-model-one-hot`, the same steps with that embedding (its weight is [5, 10], a column per digit,
// and its bias is added to every digit's vector). The page's One query lab compares with its own model as
// it trains, either embedding (load yours in its Weights panel: web/labs/03_count_build.js); headless,
// `attnlab check` compares with the state_dicts below. The page's model may have other sizes than the
// notebook's (the lab's embedDim, attDim and hidden): the steps' shapes and numbers then follow its
// weights (attentionModelBuildOf).
import { literal, pattern } from './exact_tensors.js';
import { embed, linear } from './plain_math.js';
import { formatNumber, shapeText } from './judge.js';

// Two sequences with more 2s than 4s, two without (one with neither digit), so every step has something to show.
export const FIXED_INPUT = [[2, 4, 2, 1, 9, 6, 3, 0, 5, 2], [4, 4, 1, 2, 0, 7, 8, 3, 9, 4],
  [2, 2, 2, 4, 5, 5, 1, 1, 0, 6], [7, 3, 9, 0, 1, 8, 6, 5, 3, 7]];
const B = FIXED_INPUT.length, S = 10, E = 5, HIDDEN = 200;

const common = {
  lab: 'count',
  notebook: '05_one_query_more_twos_than_fours',
  module: 'AttentionModel',
  input: { x: literal(FIXED_INPUT, { integer: true }) },
  model: ['model = AttentionModel()', 'model.load_state_dict(state_dict)'],
  hint: 'Did your notebook load the same weights and use this x?',
};
const sharedWeights = {
  'query': pattern([1, E], { mul: 3, mod: 7, shift: 3, scale: 2 }),
  'WK.weight': pattern([E, E], { mul: 5, mod: 11, shift: 5, scale: 4 }),
  'WK.bias': pattern([E], { mul: 3, mod: 7, shift: 3, scale: 8 }),
  'WV.weight': pattern([1, E], { mul: 2, mod: 7, shift: 3, scale: 4 }),
  'WV.bias': pattern([1], { mul: 1, mod: 2, shift: 0, scale: 8 }),
  'nn.0.weight': pattern([HIDDEN, 1], { mul: 7, mod: 17, shift: 8, scale: 8 }),
  'nn.0.bias': pattern([HIDDEN], { mul: 5, mod: 13, shift: 6, scale: 16 }),
  'nn.2.weight': pattern([1, HIDDEN], { mul: 3, mod: 11, shift: 5, scale: 32 }),
  'nn.2.bias': pattern([1], { mul: 1, mod: 2, shift: 0, scale: 8 }),
};

// A slip of the notebook, said where it matters: its hint says self.nn wants [batch, att_dim], but self.nn
// starts with Linear(1, 200), so it takes the attention-weighted value of step 6, [batch, 1].
const NN_INPUT_NOTE = 'The notebook\'s hint says self.nn takes an input shaped [batch, att_dim]; its first layer is '
  + 'torch.nn.Linear(1, 200), so it takes step 6\'s attention-weighted value, shaped [batch, 1].';

// The code that embeds x: the notebook's model.embed(x), or its "Alternatively" on one-hot digits.
const EMBED_CODE = { lookup: 'model.embed(x)', oneHot: 'model.embed(F.one_hot(x, 10).float())' };

/**
 * The seven steps, with `embedded` the code that embeds x (the notebook's model.embed(x), or its one-hot
 * form), for embed_dim and att_dim (the notebook's E = 5 for both by default).
 */
const stepsWith = (embedded, embedDim = E, attDim = E) => [
  { name: 'batch', label: '1. make_batch', code: 'X, y = make_batch(N)', shape: ['N', S], rule: judgeBatch,
    note: 'X (N, 10) and y (N, 1): paste both, print(X, y)',
    // Shown for the fixed x, its labels beside it.
    shown: [B, S], integer: true, extra: { label: 'y', key: 'batchY', shape: [B, 1] } },
  { name: 'embedding', label: '2. Embedding', code: embedded, shape: [B, S, embedDim] },
  { name: 'keys', label: '3. Keys', code: `model.WK(${embedded})`, shape: [B, S, attDim] },
  { name: 'values', label: '4. Values', code: `model.values(${embedded})`, shape: [B, S, 1] },
  { name: 'attention', label: '5. Attention', code: `model.attention(${embedded})`, shape: [B, 1, S] },
  { name: 'weighted', label: '6. Attention-weighted values',
    code: "torch.einsum('bij,bjk->bik', att, vals)[:, 0, :]", shape: [B, 1] },
  { name: 'forward', label: '7. forward', code: 'model(x)', shape: [B, 1] },
];

/** The weights' sizes: embed_dim E, att_dim A and the head's hidden H, read from their lengths. */
function sizesOf(p) {
  const E = p['embed.bias'] ? p['embed.bias'].length : p['embed.weight'].length / 10;
  return { E, A: p.query.length, H: p['nn.0.bias'].length };
}

/**
 * Each digit's vector: a row of nn.Embedding(10, E)'s table, or, where the weights have 'embed.bias' (the
 * one-hot build's nn.Linear(10, E)), one_hot(x) @ weight.T + bias: the weight's column for the digit plus
 * the bias. Read by the weights, not by the build: the page's model may be either.
 */
function embedDigits(p, ids, E) {
  if (!p['embed.bias']) return embed(p['embed.weight'], ids, E);
  const oneHot = new Float64Array(ids.length * 10);
  ids.forEach((d, i) => { oneHot[i * 10 + d] = 1; });
  return linear(oneHot, ids.length, 10, p['embed.weight'], p['embed.bias'], E);
}

/** Every step's tensor for input x and weights p (the notebook's state_dict names). */
function computeSteps(x, p) {
  const ids = Array.from(x.x.data);
  const { E, A, H } = sizesOf(p);
  const embedding = embedDigits(p, ids, E);
  const keys = linear(embedding, B * S, E, p['WK.weight'], p['WK.bias'], A);
  const values = linear(embedding, B * S, E, p['WV.weight'], p['WV.bias'], 1);
  const attention = new Float64Array(B * S);
  const weighted = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let max = -Infinity;
    const row = attention.subarray(b * S, (b + 1) * S);
    for (let s = 0; s < S; s++) {
      let dot = 0;
      for (let k = 0; k < A; k++) dot += p.query[k] * keys[(b * S + s) * A + k];
      row[s] = dot / Math.sqrt(A);
      max = Math.max(max, row[s]);
    }
    let sum = 0;
    for (let s = 0; s < S; s++) sum += (row[s] = Math.exp(row[s] - max));
    for (let s = 0; s < S; s++) {
      row[s] /= sum;
      weighted[b] += row[s] * values[b * S + s];
    }
  }
  const hidden = linear(weighted, B, 1, p['nn.0.weight'], p['nn.0.bias'], H).map((v) => Math.max(v, 0));
  const forward = linear(hidden, B, H, p['nn.2.weight'], p['nn.2.bias'], 1).map((v) => 1 / (1 + Math.exp(-v)));
  const y = FIXED_INPUT.map((r) => (r.filter((d) => d === 2).length > r.filter((d) => d === 4).length ? 1 : 0));
  return { batch: Float64Array.from(ids), batchY: Float64Array.from(y), embedding, keys, values, attention,
    weighted, forward };
}

export const attentionModelBuild = {
  ...common,
  name: 'attention-model',
  title: 'AttentionModel (notebook 05)',
  stateDict: { 'query': sharedWeights.query,
    'embed.weight': pattern([10, E], { mul: 7, mod: 13, shift: 6, scale: 4 }), ...sharedWeights },
  notes: [],
  notesAfter: [NN_INPUT_NOTE],
  embedCode: EMBED_CODE.lookup,
  steps: stepsWith(EMBED_CODE.lookup),
  pipeline() { return pipelineOf(this.steps); },
  compute: computeSteps,
  // The same build at other sizes ({E, A}: the lab's embedDim and attDim), for build_section.js.
  withSizes: (sizes) => sized(attentionModelBuild, sizes),
};

export const attentionModelOneHotBuild = {
  ...common,
  name: 'attention-model-one-hot',
  title: 'AttentionModel, one-hot embedding (notebook 05)',
  stateDict: { 'query': sharedWeights.query,
    'embed.weight': pattern([E, 10], { mul: 7, mod: 13, shift: 6, scale: 4 }),
    'embed.bias': pattern([E], { mul: 2, mod: 5, shift: 2, scale: 8 }), ...sharedWeights },
  notesAfter: [NN_INPUT_NOTE],
  notes: ['The notebook\'s "Alternatively": self.embed = torch.nn.Linear(10, 5), called on '
    + 'F.one_hot(x, 10).float() (import torch.nn.functional as F), so its weight is [5, 10] and its bias is added '
    + 'to every digit\'s vector.'],
  embedCode: EMBED_CODE.oneHot,
  steps: stepsWith(EMBED_CODE.oneHot),
  pipeline() { return pipelineOf(this.steps); },
  compute: computeSteps,
  withSizes: (sizes) => sized(attentionModelOneHotBuild, sizes),
};

// Notebook 05's pipeline (its figure of the QKV procedure), drawn under the build's steps (pipeline_figure.js):
// where each step sits, which steps it reads, in the shapes of the build's steps. The query is a
// parameter, not a step: it is drawn where the attention reads it.
const PLACES = { batch: [1, 0], embedding: [1, 1], query: [0, 2], keys: [1, 2], values: [2, 2], attention: [0.5, 3],
  weighted: [1.5, 4], forward: [1.5, 5] };
const READS = [['batch', 'embedding'], ['embedding', 'keys'], ['embedding', 'values'], ['query', 'attention'],
  ['keys', 'attention'], ['attention', 'weighted'], ['values', 'weighted'], ['weighted', 'forward']];
const SHORT = { batch: '1. make_batch', embedding: '2. embedding', keys: '3. keys', values: '4. values',
  attention: '5. attention', weighted: '6. weighted', forward: '7. forward' };
function pipelineOf(steps) {
  const A = steps.find((s) => s.name === 'keys').shape[2];
  const nodes = steps.map((s) => ({ id: s.name, label: SHORT[s.name], shape: s.shown ?? s.shape, code: s.code,
    col: PLACES[s.name][0], row: PLACES[s.name][1] }));
  nodes.splice(2, 0, { id: 'query', label: 'query', shape: [1, A], code: 'model.query, a learned parameter',
    col: PLACES.query[0], row: PLACES.query[1] });
  return { title: 'Notebook 05\'s AttentionModel, step by step', nodes, edges: READS.map(([from, to]) => ({ from, to })) };
}

const resizedBuilds = new Map();
/** `build` with its steps' shapes at embed_dim and att_dim ({E, A}); itself at the notebook's (E, for both). */
function sized(build, { E: embedDim = E, A: attDim = E } = {}) {
  if (embedDim === E && attDim === E) return build;
  const key = `${build.name} ${embedDim} ${attDim}`;
  if (!resizedBuilds.has(key)) {
    resizedBuilds.set(key, { ...build, sizes: { E: embedDim, A: attDim }, steps: stepsWith(build.embedCode, embedDim, attDim) });
  }
  return resizedBuilds.get(key);
}

/**
 * The build of a model's weights: the one-hot one where they have the Linear's 'embed.bias', with the
 * steps' shapes of the weights' embed_dim and att_dim.
 */
export function attentionModelBuildOf(params) {
  const build = params?.['embed.bias'] ? attentionModelOneHotBuild : attentionModelBuild;
  if (!params?.['embed.weight'] || !params.query || !params['nn.0.bias']) return build;
  return sized(build, sizesOf(params));
}

/** make_batch is random: its output is checked against its rule, not against numbers. -> {ok, message}. */
function judgeBatch(theirs) {
  if (theirs.length !== 2) return { ok: false, message: `make_batch returns two tensors, X and y; ${theirs.length} `
    + `${theirs.length === 1 ? 'was' : 'were'} given. Paste what print(X, y) shows.` };
  const [X, y] = theirs;
  if (X.shape.length !== 2 || X.shape[1] !== S) return { ok: false, message: `X has shape ${shapeText(X.shape)}; it `
    + 'should be (N, 10): N sequences of 10 digits.' };
  const N = X.shape[0];
  if (y.shape.join() !== `${N},1`) return { ok: false, message: `y has shape ${shapeText(y.shape)}; for ${N} sequences `
    + `it should be (${N}, 1).` };
  for (let i = 0; i < X.data.length; i++) {
    const d = X.data[i];
    if (!Number.isInteger(d) || d < 0 || d > 9) return { ok: false, message: `X[${Math.floor(i / S)}, ${i % S}] is `
      + `${formatNumber(d)}: the digits are integers 0 to 9 (torch.randint(0, 10, ...)).` };
  }
  for (let n = 0; n < N; n++) {
    const row = Array.from(X.data.subarray(n * S, (n + 1) * S));
    const twos = row.filter((d) => d === 2).length, fours = row.filter((d) => d === 4).length;
    const want = twos > fours ? 1 : 0;
    if (y.data[n] !== want) return { ok: false, message: `Row ${n} has ${twos} two${twos === 1 ? '' : 's'} and `
      + `${fours} four${fours === 1 ? '' : 's'}: y[${n}] should be ${want}, yours is ${formatNumber(y.data[n])}.` };
  }
  return { ok: true, message: `Matches the rule: X ${shapeText(X.shape)} of digits 0 to 9, y ${shapeText(y.shape)} is `
    + `1 exactly where a row has more 2s than 4s (${N} rows checked).` };
}
