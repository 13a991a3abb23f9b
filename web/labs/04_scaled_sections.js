// The Scaled dot-product lab's sections (course notebooks 04 and 03). Each declares its text, the
// properties that steer it, what the worker computes and the figures that show it. Every matrix comes
// from the core: the score stages (module.attentionScoreStages), the softmax and weighted sum (the
// attention kernel on the page's backend, ctx.attention), the projections and dropout (the course's
// SelfAttention, module.SelfAttention), the entropies (module.rowEntropies). No DOM here.
import { heatmapRange } from './common.js';

export const MAX_TOKENS = 32; // per sentence: more would not label legibly
export const MAX_SENTENCES = 4;

/** rows x d standard normal draws from the module's seeded RNG (the same on every backend and machine). */
function normalMatrix(rng, rows, d) {
  const out = new Float32Array(rows * d);
  for (let i = 0; i < out.length; i++) out[i] = rng.normal();
  return out;
}

/** [T, S] additive causal mask: a query sees itself and the keys before it. */
export function causalMask(T, S = T) {
  const m = new Float32Array(T * S);
  for (let t = 0; t < T; t++) for (let s = t + 1; s < S; s++) m[t * S + s] = -Infinity;
  return m;
}

const SUBSCRIPTS = '₀₁₂₃₄₅₆₇₈₉';
const subscript = (n) => String(n).split('').map((d) => SUBSCRIPTS[Number(d)]).join('');

/** Token labels; a word that occurs more than once gets its position as a subscript ("the₀", "the₄"). */
export function tokenLabels(tokens) {
  const count = new Map();
  for (const t of tokens) count.set(t.toLowerCase(), (count.get(t.toLowerCase()) ?? 0) + 1);
  return tokens.map((t, i) => (count.get(t.toLowerCase()) > 1 ? `${t}${subscript(i)}` : t));
}

/** Words and punctuation marks, in order (letters and digits of any script stay together). */
export function tokenize(text) {
  return String(text).match(/[\p{L}\p{M}\p{N}'’]+|[^\s\p{L}\p{M}\p{N}]/gu) ?? [];
}

/** The text box -> sentences of tokens, or {error} naming the problem. Sentences are separated by '|'. */
export function parseSentences(text) {
  const parts = String(text).split('|').map((s) => s.trim()).filter(Boolean);
  if (!parts.length) return { error: 'Type a sentence (or several, separated by |).' };
  if (parts.length > MAX_SENTENCES) return { error: `${parts.length} sentences: at most ${MAX_SENTENCES} in a batch.` };
  const sentences = parts.map(tokenize);
  const long = sentences.findIndex((s) => s.length > MAX_TOKENS);
  if (long >= 0) return { error: `Sentence ${long + 1} has ${sentences[long].length} tokens: at most ${MAX_TOKENS} fit `
    + 'a heatmap legibly.' };
  const empty = sentences.findIndex((s) => s.length === 0);
  if (empty >= 0) return { error: `Sentence ${empty + 1} has no word in it.` };
  return { sentences };
}

/**
 * The sentence section's input x [N, L, E]; padding positions are zeros. 'position' (the notebook's
 * torch.randn(batch_size, seq_len, hidden_dim)): N * L * E normals from the seed, in x's order, one
 * vector per position whatever its word. 'word': one seeded vector per distinct word, lower-cased.
 */
function randomVectors(ctx, sentences, L, E, v) {
  const x = new Float32Array(sentences.length * L * E);
  if (v.embeddings === 'word') {
    sentences.forEach((words, b) => words.forEach((word, t) => {
      const rng = ctx.rng(wordSeed(word, v.seed));
      for (let e = 0; e < E; e++) x[(b * L + t) * E + e] = rng.normal();
      rng.delete();
    }));
    return x;
  }
  // wordSeed('') mixes the seed as a word's does, and no word is empty: a stream of its own, apart from the
  // projections' (SelfAttention draws from the seed itself) and from every word's.
  const rng = ctx.rng(wordSeed('', v.seed));
  for (let i = 0; i < x.length; i++) x[i] = rng.normal();
  rng.delete();
  sentences.forEach((words, b) => x.fill(0, (b * L + words.length) * E, (b + 1) * L * E));
  return x;
}

/** FNV-1a of a word: its embedding's seed, mixed with the lab's seed (the same word, the same vector). */
function wordSeed(word, seed) {
  let h = 0x811c9dc5 ^ seed;
  for (const ch of word.toLowerCase()) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const MATRIX_NAMES = ['q', 'k', 'v'];

/** Edits the page kept for this draw and shape: {'q:r:c': value}. Others are of another draw: ignored. */
export const editKey = (v) => `${v.draw}/${v.tokens}/${v.dk}`;

// ---- 1. Step by step (notebook 04's SimpleAttention) ----

const DKS = [1, 2, 4, 8, 16, 32, 64, 128, 256]; // the saturation curve's widths
const CURVE_DRAWS = 32; // random Q, K per width, as one batch of the kernel

// The curve's points depend on the draw, the token count, the width and the backend only: not on the
// cells the user edits, nor on the slider's other positions. Each width has its own draws, so a point
// is computed once and reused (about 100 ms of kernel calls per edit otherwise); bounded.
const curvePoints = new Map();
const CURVE_CACHE = 64;

/**
 * One width of the curve: mean softmax entropy over CURVE_DRAWS random draws of unit-variance Q and K
 * (T x T), with and without the 1/sqrt(d_k) scale; and the variance of q.k, which is d_k for
 * unit-variance entries.
 */
async function curvePoint(ctx, seed, T, D) {
  const key = `${ctx.backend ?? 'auto'}/${seed}/${T}/${D}`;
  if (curvePoints.has(key)) return curvePoints.get(key);
  const rng = ctx.rng(((seed + 1000003) * 512 + D) % 4294967296); // D <= 256: a stream per width
  let point;
  try {
    const B = CURVE_DRAWS;
    const q = normalMatrix(rng, B * T, D), k = normalMatrix(rng, B * T, D);
    const v = new Float32Array(B * T * D);
    const entropyAt = async (scale) => {
      const { weights } = await ctx.attention({ B, H: 1, T, S: T, D, q, k, v, scale });
      const h = ctx.module.rowEntropies(weights, B * T, T);
      return h.reduce((a, b) => a + b, 0) / h.length;
    };
    const scaled = await entropyAt(1 / Math.sqrt(D));
    const unscaled = await entropyAt(1);
    // Every q row against every k row of the batch: independent pairs, so their variance is d_k.
    const { scores } = ctx.module.attentionScoreStages({ T: B * T, S: B * T, D, q, k, scale: 1 });
    let sum = 0, sq = 0;
    for (const x of scores) { sum += x; sq += x * x; }
    const mean = sum / scores.length;
    point = { dk: D, scaled, unscaled, variance: sq / scores.length - mean * mean };
  } finally {
    rng.delete();
  }
  if (curvePoints.size >= CURVE_CACHE) curvePoints.delete(curvePoints.keys().next().value);
  curvePoints.set(key, point);
  return point;
}

/** The curve at the widths DKS and the slider's own d_k. */
async function saturationCurve(ctx, seed, T, dk) {
  const points = [];
  for (const D of [...new Set([...DKS, dk])].sort((a, b) => a - b)) points.push(await curvePoint(ctx, seed, T, D));
  return points;
}

const steps = {
  id: 'steps',
  title: '1. Step by step: softmax(QK^T / √d_k) V',
  text: 'Five tokens, each with a query, a key and a value of d_k numbers drawn at random (unit variance). Follow one '
    + 'query: its dot product with every key (QK^T), divided by √d_k, masked, turned into weights by the softmax '
    + '(each row sums to 1), and the weighted sum of the values. Edit any cell of Q, K or V and everything after it '
    + 'follows; hover a cell to see where it comes from.',
  properties: ['tokens', 'dk', 'scaled', 'stepMask', 'draw'],
  actions: [{ id: 'reroll', label: 'New random Q, K, V', title: 'Draw new random matrices (your edits belong '
    + 'to the old ones)',
    change: (v) => ({ ...v, draw: v.draw + 1 }) }],
  dependsOn: ['tokens', 'dk', 'scaled', 'stepMask', 'draw', 'backend'],
  input: 'edits',
  async compute(ctx, v, input) {
    const T = v.tokens, D = v.dk;
    const rng = ctx.rng(v.draw);
    const m = { q: normalMatrix(rng, T, D), k: normalMatrix(rng, T, D), v: normalMatrix(rng, T, D) };
    rng.delete();
    const edits = input?.key === editKey(v) ? input.cells : {};
    const edited = [];
    for (const [cell, value] of Object.entries(edits)) {
      const [name, r, c] = cell.split(':');
      if (!MATRIX_NAMES.includes(name) || !(r < T) || !(c < D) || !Number.isFinite(value)) continue;
      m[name][Number(r) * D + Number(c)] = value;
      edited.push(cell);
    }
    const scale = v.scaled ? 1 / Math.sqrt(D) : 1;
    const mask = v.stepMask === 'causal' ? causalMask(T) : undefined;
    const stages = ctx.module.attentionScoreStages({ T, S: T, D, q: m.q, k: m.k, scale, mask });
    const { weights, out, choice } = await ctx.attention({ B: 1, H: 1, T, S: T, D, q: m.q, k: m.k,
      v: m.v, scale, mask });
    const entropy = ctx.module.rowEntropies(weights, T, T);
    return { T, D, scale, causal: !!mask, ...m, ...stages, weights, out, entropy: Array.from(entropy), edited, choice,
      curve: await saturationCurve(ctx, v.draw, T, D) };
  },
  figures: stepFigures,
};

const fmt = (x) => (x === -Infinity ? '−∞' : Number.isInteger(x) ? String(x) : x.toFixed(2).replace('-', '−'));
const rowSums = (w, T, S) => Array.from({ length: T },
  (_, t) => w.slice(t * S, (t + 1) * S).reduce((a, b) => a + b, 0));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function stepFigures(r, v) {
  const T = r.T, D = r.D;
  const tok = Array.from({ length: T }, (_, i) => `t${i}`);
  const dims = Array.from({ length: D }, (_, i) => `d${i}`);
  const q = (t) => Array.from(r.q.slice(t * D, (t + 1) * D));
  const k = (s) => Array.from(r.k.slice(s * D, (s + 1) * D));
  const scaleText = r.scale === 1 ? 'no scale' : `÷ √${D} = × ${r.scale.toFixed(3)}`;
  const dot = (t, s) => {
    const terms = q(t).map((a, d) => `${fmt(a)}×${fmt(k(s)[d])}`);
    const shown = terms.length > 6 ? [...terms.slice(0, 3), '…', ...terms.slice(-2)] : terms;
    return `q${t}·k${s} = ${shown.join(' + ')} = ${fmt(r.scores[t * T + s])}`;
  };
  const sums = rowSums(r.weights, T, T);
  const maxEntropy = Math.log(T);
  const h = mean(r.entropy);
  const here = r.curve.find((p) => p.dk === D);
  const editable = { editable: true, editKey: editKey(v), edited: r.edited };
  const matrix = (id, label, values, rows, cols, rowNames,
    colNames, extra = {}) => ({ id, label, values: Array.from(values), rows, cols, rowNames, colNames, ...extra });
  return [
    { kind: 'matrices', id: 'inputs', title: 'Inputs: a query, a key and a value per token (edit any cell)',
      items: [
        matrix('q', 'Q (queries)', r.q, T, D, tok, dims, editable),
        matrix('k', 'K (keys)', r.k, T, D, tok, dims, editable),
        matrix('v', 'V (values)', r.v, T, D, tok, dims, editable),
      ] },
    { kind: 'matrices', id: 'stages', title: 'Stages: rows are queries, columns keys',
      note: 'Colours: orange below 0, purple above (each matrix on its own scale); the softmax on the colour scale of '
        + 'the settings, 0 to 1; hatched: blocked by the mask (−∞).',
      items: [
        matrix('scores', 'QK^T', r.scores, T, T, tok, tok,
          { explain: (t, s) => ({ text: dot(t, s), from: [['q', 'row', t], ['k', 'row', s]] }) }),
        matrix('scaled', `÷ √d_k (${scaleText})`, r.scaled, T, T, tok, tok,
          { explain: (t, s) => ({ text: `${fmt(r.scores[t * T + s])} × ${r.scale.toFixed(4)} = `
            + `${fmt(r.scaled[t * T + s])}`, from: [['scores', 'cell', t, s]] }) }),
        matrix('masked', r.causal ? '+ mask (causal: −∞ above the diagonal)' : '+ mask (none)', r.masked, T, T, tok,
          tok, { explain: (t, s) => ({ text: r.causal && s > t ? `key ${s} comes after query ${t}: blocked (−∞), its `
            + 'weight will be exactly 0'
            : `${fmt(r.scaled[t * T + s])} + 0 = ${fmt(r.scaled[t * T + s])} (allowed)`,
            from: [['scaled', 'cell', t, s]] }) }),
        matrix('weights', 'softmax (row sums →)', r.weights, T, T, tok, tok, { palette: 'weights', sums,
          explain: (t, s) => ({ text: `e^${fmt(r.masked[t * T + s])} / Σ_s e^(row ${t} of the masked scores) = `
            + `${r.weights[t * T + s].toFixed(4)}: row ${t} sums to ${sums[t].toFixed(4)}`,
            from: [['masked', 'row', t]] }) }),
        matrix('out', 'output = weights × V', r.out, T, D, tok, dims,
          { explain: (t, d) => ({ text: `Σ_s w${t},s × v_s,${d} = ${Array.from({ length: T }, (_, s) => `${r.weights[t * T + s].toFixed(2)}×${fmt(r.v[s * D + d])}`).join(' + ')} = ${fmt(r.out[t * D + d])}`,
            from: [['weights', 'row', t], ['v', 'col', d]] }) }),
      ] },
    { kind: 'text', id: 'entropy', text: `Softmax entropy, mean over the ${T} rows: ${h.toFixed(3)} nats (uniform: log `
      + `${T} = ${maxEntropy.toFixed(3)}; one-hot: 0). With unit-variance entries, q·k has variance d_k (measured `
      + `here: ${here ? here.variance.toFixed(1) : '—'} at d_k = ${D}): without the √d_k scale the scores grow `
      + 'with d_k and the softmax saturates towards one key; with it they keep variance 1.',
    status: r.scale === 1 && D >= 16 && h < 0.5 * maxEntropy ? 'bad' : '' },
    { kind: 'chart', id: 'saturation', title: 'Softmax entropy vs d_k', width: 560, height: 270,
      xTitle: `d_k (log scale); each point: the mean over ${CURVE_DRAWS} random draws of Q and K`,
      yTitle: 'entropy (nats)', xMin: 0, xMax: Math.log2(DKS.at(-1)),
      xTicks: DKS.map((d) => ({ x: Math.log2(d), label: String(d) })), yMin: 0, yMax: Math.ceil(maxEntropy * 10) / 10,
      series: [
        { label: 'scaled by 1/√d_k', kind: 'curve',
          points: r.curve.map((p) => ({ x: Math.log2(p.dk), y: p.scaled })) },
        { label: 'unscaled', kind: 'curve', dashed: true,
          points: r.curve.map((p) => ({ x: Math.log2(p.dk), y: p.unscaled })) },
        { label: `uniform (log ${T})`, kind: 'dashed', y: maxEntropy },
        { label: `these Q, K (d_k = ${D})`, kind: 'points', points: [{ x: Math.log2(D), y: h }] },
      ] },
  ];
}

// ---- 2. Self-attention over a sentence (notebook 03's SelfAttention) ----

const sentence = {
  id: 'sentence',
  title: '2. Self-attention over a sentence',
  text: 'As in the notebook, each position gets a random vector (torch.randn(batch_size, seq_len, hidden_dim)): the '
    + 'words only name the rows. The course\'s SelfAttention projects them to queries, keys and values with three '
    + 'random Linear layers and divides by √(embedding size). The pattern you see is arbitrary: nothing here was '
    + 'trained, so it means nothing yet. Meaning comes from training, which the other labs show. What you can see: '
    + 'switch "Random vectors" to one per word and a repeated word gets identical rows (without position information '
    + 'attention cannot tell "the₀" from "the₄"); a causal mask hides the future, a padding mask hides the padding '
    + 'of shorter sentences, and dropout (train mode) zeroes weights and scales up the rest.',
  properties: ['text', 'embeddings', 'sentenceMask', 'embedDim', 'seed', 'mode', 'dropout', 'dropDraw', 'threshold'],
  actions: [{ id: 'redrop', label: 'Drop again', title: 'Another random dropout pattern (train mode)',
    // Eval mode has no dropout to draw again: the button is off there, saying why (issue 45, item 4).
    when: (v) => v.mode === 'train', whenText: 'train mode only: eval has no dropout',
    change: (v) => ({ ...v, dropDraw: v.dropDraw + 1 }) }],
  dependsOn: ['text', 'embeddings', 'sentenceMask', 'embedDim', 'seed', 'mode', 'dropout', 'dropDraw', 'backend'],
  async compute(ctx, v) {
    const parsed = parseSentences(v.text);
    if (parsed.error) throw new Error(parsed.error);
    const { sentences } = parsed;
    const N = sentences.length, L = Math.max(...sentences.map((s) => s.length)), E = v.embedDim;
    const x = randomVectors(ctx, sentences, L, E, v);
    const mask = new Float32Array(N * L * L);
    sentences.forEach((words, b) => {
      for (let t = 0; t < L; t++) {
        for (let s = 0; s < L; s++) {
          const blocked = (v.sentenceMask === 'causal' && s > t)
            || (v.sentenceMask === 'padding' && (t >= words.length || s >= words.length));
          if (blocked) mask[(b * L + t) * L + s] = -Infinity;
        }
      }
    });
    const layer = new ctx.module.SelfAttention(E, { dropout: v.dropout, seed: v.seed });
    try {
      const { softmax, weights, output, choice } = await layer.forwardWith(x,
        { batch: N, length: L, mask: v.sentenceMask === 'none' ? null : mask, train: v.mode === 'train',
          seed: v.dropDraw }, ctx.attention);
      return { sentences, L, E, softmax, weights, output, choice };
    } finally {
      layer.delete();
    }
  },
  figures: sentenceFigures,
};

function sentenceFigures(r, v) {
  const L = r.L, train = v.mode === 'train';
  const figures = [];
  let zeroed = 0, dropped = 0;
  r.sentences.forEach((words, b) => {
    const labels = tokenLabels([...words, ...Array(L - words.length).fill('[pad]')]);
    const w = r.weights.slice(b * L * L, (b + 1) * L * L);
    const soft = r.softmax.slice(b * L * L, (b + 1) * L * L);
    for (let i = 0; i < w.length; i++) if (soft[i] > 0) { dropped++; if (w[i] === 0) zeroed++; }
    // 0 to the largest weight, or smallest to largest as the notebook's seaborn heatmap (colourRange); never
    // a fixed 0..1 (untrained weights are close to uniform: they would all look the same).
    const top = Math.max(1e-6, ...w);
    const name = r.sentences.length > 1 ? `sentence ${b + 1}` : 'the sentence';
    // Cells as large as a short sentence allows (a 5-token one is 240 px, not 110 beside empty space),
    // down to 22 px for a long one; the page shrinks them further where the panel is narrower.
    figures.push({ kind: 'heatmap', id: `sentence-${b}`, cell: Math.max(22, Math.min(48, Math.floor(240 / L))),
      recordLabels: true, title: `Self-attention weights, ${name}${train ? ' (train mode: after dropout)' : ''}`,
      rows: L, cols: L, values: w, range: heatmapRange(w, v.colourRange), xTitle: 'key (attended to)', yTitle: 'query (attending)',
      xTicks: labels, yTicks: labels, xNames: labels.map((t) => `key ${t}`), yNames: labels.map((t) => `query ${t}`) });
    figures.push({ kind: 'graph', id: `flow-${b}`, title: `Attention flow, ${name}: edges with weight `
      + `above ${v.threshold}`,
      nodes: labels, edges: edgesOf(w, L, v.threshold), maxWeight: top,
      empty: `No weight above ${v.threshold} (uniform would be 1/${words.length} = ${(1 / words.length).toFixed(3)}): `
        + 'lower the threshold.' });
  });
  const sumText = train
    ? `Dropout (train mode, p = ${v.dropout}): ${zeroed} of ${dropped} weights were set to 0 and the others multiplied `
      + `by 1/(1 − p) = ${(1 / (1 - v.dropout)).toFixed(3)}, so each weight keeps its expected value but a row no `
      + `longer sums to 1 (row 0 sums to ${rowSums(r.weights, L, L)[0].toFixed(3)}). Switch to eval mode to see the `
      + 'weights the model would use.'
    : 'Eval mode: no dropout; every row of weights sums to 1 (a fully masked padding row is all zeros: it has no '
      + 'key to attend to).';
  // Notebook 03 never calls eval(): its SelfAttention(input_dim=8) is in train mode, so the heatmap it draws
  // has been through dropout 0.1. Said beside this heatmap, where a student compares the two.
  const notebookText = train
    ? ' This is how notebook 03 drew its heatmap: its SelfAttention is never put in eval(), so its weights went '
      + 'through dropout 0.1.'
    : ' Notebook 03\'s own heatmap is not this one: its SelfAttention is never put in eval(), so it drew the weights '
      + 'after dropout 0.1 (some 0, rows not summing to 1). Mode train (dropout on) draws it that way.';
  figures.push({ kind: 'text', id: 'dropout', text: sumText + notebookText });
  return figures;
}

/** Query -> key edges above the threshold (a row's own weight on itself is a loop). */
function edgesOf(w, L, threshold) {
  const edges = [];
  for (let t = 0; t < L; t++) for (let s = 0; s < L; s++) if (w[t * L + s] > threshold) edges.push({ from: t, to: s,
    weight: w[t * L + s] });
  return edges;
}

// ---- 3. Why attention (notebook 04's motivation) ----

const CHAIN = ['The', 'cat', 'sat', 'on', 'the', 'mat'];

const why = {
  id: 'why',
  title: '3. Why attention?',
  text: 'A recurrent network (RNN, LSTM) reads a sentence one word at a time and carries everything it has read in one '
    + 'state vector of fixed size. To relate "mat" to "cat" the information must survive every step between them, '
    + 'squeezed into that state, and the steps cannot run in parallel because each needs the one before. '
    + 'Attention lets every position look at every other position directly: one step, whatever the distance, with a '
    + 'weight for each pair computed from the data (softmax of query · key), and all positions at once. The price: '
    + 'the weights grow with the square of the length, and attention alone knows no order (the sentence above, with '
    + 'one random vector per word, gives a repeated word identical rows), which is why Transformers add '
    + 'position information.',
  properties: [],
  figures: () => [
    { kind: 'graph', id: 'rnn-chain', title: 'RNN: one fixed-size state, passed along one word at a time',
      layout: 'line', nodes: CHAIN, edges: CHAIN.slice(1).map((_, i) => ({ from: i, to: i + 1, weight: 1 })),
      maxWeight: 1, arrowsOnly: true },
    { kind: 'graph', id: 'attention-all', title: 'Attention: "mat" reads every word directly (one step each)',
      layout: 'line', nodes: CHAIN, edges: CHAIN.map((_, i) => ({ from: CHAIN.length - 1,
        to: i, weight: 1 })).filter((e) => e.to !== e.from), maxWeight: 1, arrowsOnly: true },
  ],
};

export const SECTIONS = [steps, sentence, why];
