// The Pretrained lab's sections: the forward of the opened BERT (every layer's attention through the
// kernel on the page's backend, ctx.attention: WebGPU included), then the model view, the head view
// and heatmap, the neuron view and the [MASK] fill-in, as view models. No DOM here.
//
// ctx.opened is what the lab's open.load returned: {model (a BERT), tokenizer, options, summary, name}.

import { logitChange, offText, selfAttentionScores, switchGrid, topHeads } from './ablation_figures.js';
import { headListText, passHeads } from './head_list.js';
import { tokenLabels } from './token_labels.js';
import { heatmapRange } from './common.js';

export { tokenLabels };

const SPECIAL = new Set(['[CLS]', '[SEP]', '[PAD]']);
/**
 * Runs the model on the text (and pair), layer by layer with the kernel on ctx's backend; cached on
 * the opened model by (text, pair, backend), so the four sections share one forward.
 */
export async function runModel(ctx, v) {
  const opened = ctx.opened;
  if (!opened) throw new Error('Open a checkpoint folder first (above).');
  const text = String(v.text).trim();
  if (!text) throw new Error('Type a sentence.');
  const pair = String(v.pair ?? '').trim();
  const ablate = v.ablate ?? '';
  const key = JSON.stringify([text, pair, ctx.backend, ablate]);
  if (opened.cache?.key === key) return opened.cache;
  const { model: bert, tokenizer } = opened;
  const { tokens, ids, typeIds } = tokenizer.encode(text, pair || null);
  const L = bert.config.layers, H = bert.config.heads, D = bert.config.hiddenSize / H, T = ids.length;
  const masks = tokens.flatMap((t, i) => (t === '[MASK]' ? [i] : []));
  // With heads switched off: first the whole model's guesses (what the switch changes), then the pass shown.
  const heads = passHeads(bert, ablate);
  let before = null;
  if (ablate) {
    await bert.forwardWith(ids, typeIds, ctx.attention);
    before = masks.map((i) => ({ position: i, top: bert.predict(i, 5) }));
  }
  // Every layer's attention call through the page's kernel (ctx.attention: WebGPU included).
  const last = await bert.forwardWith(ids, typeIds, ctx.attention, { heads });
  const choice = last?.choice ?? null;
  const attentions = Array.from({ length: L }, (_, l) => bert.attention(l));
  const queries = Array.from({ length: L }, (_, l) => bert.queries(l));
  const keys = Array.from({ length: L }, (_, l) => bert.keys(l));
  const named = (p) => ({ ...p, token: tokenizer.idToToken(p.id) });
  const predictions = masks.map((i) => ({ position: i, top: bert.predict(i, 5).map(named) }));
  // The whole model's first guess at each [MASK] (the chosen token) and its logit with the heads off.
  const changes = before && masks.map((i, m) => {
    const chosen = before[m].top[0];
    const after = ablate ? bert.predict(i, bert.config.vocabSize).find((p) => p.id === chosen.id) : chosen;
    return { position: i, before: before[m].top.map(named),
      chosen: { token: tokenizer.idToToken(chosen.id), id: chosen.id, logitBefore: chosen.logit,
        logitAfter: after.logit, change: after.logit - chosen.logit } };
  });
  opened.cache = { key, tokens, ids: Array.from(ids), typeIds: Array.from(typeIds), L, H, D, T, attentions, queries,
    keys, predictions, choice, mlm: bert.summary.mlm, name: opened.name, ablate, ...(changes ? { changes } : {}) };
  return opened.cache;
}

/** The layer and head the values ask for, within this model (a smaller model keeps the page working). */
export function pick(v, r) {
  const layer = Math.min(v.layer, r.L - 1), head = Math.min(v.head, r.H - 1);
  const notes = [];
  if (layer !== v.layer) notes.push(`layer ${v.layer} does not exist in this ${r.L}-layer model: `
    + `showing layer ${layer}`);
  if (head !== v.head) notes.push(`head ${v.head} does not exist (${r.H} heads): showing head ${head}`);
  return { layer, head, notes };
}

/** One head's [T, T] matrix, or the mean of the layer's heads. */
export function headMatrix(r, layer, head, average) {
  const T = r.T, w = r.attentions[layer];
  if (!average) return w.slice(head * T * T, (head + 1) * T * T);
  const out = new Float32Array(T * T);
  for (let h = 0; h < r.H; h++) for (let i = 0; i < T * T; i++) out[i] += w[h * T * T + i] / r.H;
  return out;
}

/** The token positions shown: all, or without [CLS]/[SEP]/[PAD]. */
export const shownPositions = (r, hide) => r.tokens.flatMap((t, i) => (hide && SPECIAL.has(t) ? [] : [i]));

/** A [T, T] matrix restricted to some positions (rows and columns). */
export function restrict(m, T, keep) {
  const n = keep.length, out = new Float32Array(n * n);
  keep.forEach((i, a) => keep.forEach((j, b) => { out[a * n + b] = m[i * T + j]; }));
  return out;
}

const max = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);
const hideNote = (hide) => (hide ? ' [CLS] and [SEP] hidden: rows no longer sum to 1 (the weight they '
  + 'took is not shown).' : '');

const model = {
  id: 'model',
  title: 'Model view: every layer and head',
  text: 'One thumbnail per head, a row per layer: rows of each are the queries (tokens attending), columns the keys. '
    + 'Early layers often attend to neighbours or to the token itself; later ones to [SEP] or [CLS] (a "no-op"). Click '
    + 'a head to open it below.',
  properties: ['text', 'pair', 'hideSpecial'],
  dependsOn: ['text', 'pair', 'hideSpecial', 'layer', 'head', 'backend', 'ablate'],
  needsOpen: true,
  async compute(ctx, v) {
    return runModel(ctx, v);
  },
  figures(r, v) {
    const keep = shownPositions(r, v.hideSpecial);
    const n = keep.length;
    const { layer, head } = pick(v, r);
    const attentions = new Float32Array(r.L * r.H * n * n);
    for (let l = 0; l < r.L; l++) for (let h = 0; h < r.H; h++) {
      attentions.set(restrict(headMatrix(r, l, h, false), r.T, keep), (l * r.H + h) * n * n);
    }
    return [
      { kind: 'text', id: 'model-tokens', text: `${r.name}: ${r.T} tokens — ${r.tokens.join(' ')}` },
      { kind: 'modelgrid', id: 'model-grid', title: `${r.L} layers × ${r.H} heads (0 to 1 per `
        + `cell).${hideNote(v.hideSpecial)}`,
        layers: r.L, heads: r.H, tokens: tokenLabels(keep.map((i) => r.tokens[i])), attentions,
        selected: { layer, head }, picks: { layer: 'layer', head: 'head' } },
    ];
  },
};

const headView = {
  id: 'head',
  title: 'Head view: who attends to whom',
  text: 'Each query token on the left sends a line to every key on the right, as dark as its weight. Hover or click a '
    + 'token to keep only its lines. The heatmap shows the same numbers.',
  properties: ['layer', 'head', 'average'],
  dependsOn: ['text', 'pair', 'hideSpecial', 'layer', 'head', 'average', 'backend', 'ablate'],
  needsOpen: true,
  async compute(ctx, v) {
    return runModel(ctx, v);
  },
  figures(r, v) {
    const { layer, head, notes } = pick(v, r);
    const keep = shownPositions(r, v.hideSpecial);
    const labels = tokenLabels(keep.map((i) => r.tokens[i]));
    const m = restrict(headMatrix(r, layer, head, v.average), r.T, keep);
    const which = v.average ? `layer ${layer}, mean of the ${r.H} heads` : `layer ${layer}, head ${head}`;
    const figures = [];
    if (notes.length) figures.push({ kind: 'text', id: 'head-note', status: 'bad', text: `${notes.join('; ')}.` });
    figures.push(
      { kind: 'headview', id: 'head-lines', title: `Head view, ${which}`, tokens: labels, weights: m,
        caption: `Line opacity = weight (1 = solid).${hideNote(v.hideSpecial)}`, picks: { token: 'token' } },
      { kind: 'heatmap', id: 'head-heatmap', cell: labels.length > 40 ? 10 : 20, recordLabels: true,
        title: `Attention weights, ${which}`, rows: labels.length, cols: labels.length, values: m,
        range: heatmapRange(m, v.colourRange), xTitle: 'key (attended to)', yTitle: 'query (attending)', xTicks: labels,
        yTicks: labels, xNames: labels.map((t) => `key ${t}`), yNames: labels.map((t) => `query ${t}`) },
    );
    return figures;
  },
};

const neuron = {
  id: 'neuron',
  title: 'Neuron view: how one query scores every key',
  text: 'For one query token of the head above: its query vector q, every key vector k, their elementwise products '
    + 'q∘k (the sum of a row is q·k), q·k/√d, and the softmax that turns the scores into the weights '
    + 'of the head view.',
  properties: ['token'],
  dependsOn: ['text', 'pair', 'layer', 'head', 'token', 'backend', 'ablate'],
  needsOpen: true,
  async compute(ctx, v) {
    return runModel(ctx, v);
  },
  figures(r, v) {
    const { layer, head } = pick(v, r);
    const t = Math.min(v.token, r.T - 1);
    const T = r.T, D = r.D;
    const q = r.queries[layer].slice((head * T + t) * D, (head * T + t + 1) * D);
    const K = r.keys[layer].slice(head * T * D, (head + 1) * T * D);
    const products = new Float32Array(T * D);
    const dots = new Float32Array(T);
    for (let s = 0; s < T; s++) for (let d = 0; d < D; d++) {
      products[s * D + d] = q[d] * K[s * D + d];
      dots[s] += products[s * D + d];
    }
    const scaled = dots.map((x) => x / Math.sqrt(D));
    const weights = r.attentions[layer].slice((head * T + t) * T, (head * T + t + 1) * T);
    const labels = tokenLabels(r.tokens);
    const dims = Array.from({ length: D }, (_, d) => (d % 8 === 0 ? String(d) : ''));
    const bound = (xs) => Math.max(1e-6, ...Array.from(xs, Math.abs));
    const cell = D > 32 ? 6 : 14;
    const note = t !== v.token ? ` (token ${v.token} is past the end: showing ${t})` : '';
    return [
      { kind: 'text', id: 'neuron-what', text: `Layer ${layer}, head ${head}, query token ${t} `
        + `"${labels[t]}"${note}: d = ${D}.` },
      { kind: 'heatmap', id: 'neuron-q', cell, title: `q ("${labels[t]}")`, rows: 1, cols: D, values: q,
        palette: 'diverging', range: [-bound(q), bound(q)], xTitle: 'dimension', yTitle: '', xTicks: dims,
        yTicks: [labels[t]] },
      { kind: 'heatmap', id: 'neuron-k', cell, title: 'k of every token', rows: T, cols: D, values: K,
        palette: 'diverging', range: [-bound(K), bound(K)], xTitle: 'dimension', yTitle: 'key', xTicks: dims,
        yTicks: labels },
      { kind: 'heatmap', id: 'neuron-qk', cell, title: 'q ∘ k (each row sums to q·k)', rows: T, cols: D,
        values: products, palette: 'diverging', range: [-bound(products), bound(products)], xTitle: 'dimension',
        yTitle: 'key', xTicks: dims, yTicks: labels },
      { kind: 'bars', id: 'neuron-scores', title: 'q·k / √d per key', values: Array.from(scaled), labels,
        xTitle: 'key', yTitle: 'q·k/√d', highlight: weights.indexOf(max(weights)) },
      { kind: 'bars', id: 'neuron-softmax', title: `softmax → the weights of "${labels[t]}" (sum 1)`,
        values: Array.from(weights), labels, xTitle: 'key', yTitle: 'weight',
        highlight: weights.indexOf(max(weights)) },
    ];
  },
};

const fill = {
  id: 'mask',
  title: 'Fill in [MASK]',
  text: 'BERT was trained to guess hidden words. Put [MASK] in the sentence: the masked-language-model head (when the '
    + 'checkpoint has it) gives its five most likely tokens.',
  properties: [],
  actions: [{ id: 'mask-word', label: 'Mask a word', title: 'Replace the sentence\'s last word with [MASK]',
    change: (v) => ({ ...v, text: maskLastWord(v.text) }) }],
  dependsOn: ['text', 'pair', 'backend', 'ablate'],
  needsOpen: true,
  async compute(ctx, v) {
    return runModel(ctx, v);
  },
  figures(r) {
    if (!r.mlm) return [{ kind: 'text', id: 'mask-none', text: 'This checkpoint has no masked-language-model head (no '
      + 'cls.predictions.* tensors: a BertModel, not a BertForMaskedLM).' }];
    if (!r.predictions.length) return [{ kind: 'text', id: 'mask-none', text: 'No [MASK] in the sentence: type [MASK] '
      + 'where a word should be, or press "Mask a word".' }];
    return r.predictions.map(({ position, top }, i) => ({
      kind: 'bars', id: `mask-${i}`, title: `[MASK] at position ${position}: `
        + `${top.map((p) => `${p.token} ${(100 * p.probability).toFixed(1)}%`).join(', ')}`,
      values: top.map((p) => p.probability), labels: top.map((p) => p.token), xTitle: 'token', yTitle: 'probability',
      highlight: 0,
    }));
  },
};

/** The last word of the text (not punctuation, not a special token) replaced with [MASK]. */
export function maskLastWord(text) {
  const words = [...String(text).matchAll(/[\p{L}\p{N}]+/gu)];
  if (!words.length) return `${text} [MASK]`;
  const w = words.at(-1);
  return `${text.slice(0, w.index)}[MASK]${text.slice(w.index + w[0].length)}`;
}

// Switch heads off (issue 39, item 4): click heads of the grid, see the [MASK] guesses change, and the
// whole model's first guess's logit before and after; a button switches off the heads that look most at
// the token before (their previous-token score on this sentence).
const TOP_K = 3;
const switchOff = {
  id: 'ablate',
  title: 'Switch heads off',
  text: 'Attention weights show where a head looks, not what it does. Click a head to switch it off (its output is '
    + 'zeroed before the layer\'s output projection, as TransformerLens zeroes hook_z) and see what the [MASK] guesses '
    + 'lose; click it again to switch it back on.',
  properties: ['ablate'],
  actions: [
    { id: 'ablate-previous', label: `Switch off the ${TOP_K} previous-token heads`, title: 'The heads whose weight on '
      + 'the token before is largest on this sentence',
      change: (v, r) => (r ? { ...v,
        ablate: headListText(topHeads(selfAttentionScores(r.attentions, r.H, r.T).previous, r.H, TOP_K)) } : v) },
    { id: 'ablate-none', label: 'Every head on', change: (v) => ({ ...v, ablate: '' }) },
  ],
  dependsOn: ['text', 'pair', 'backend', 'ablate'],
  needsOpen: true,
  async compute(ctx, v) {
    return runModel(ctx, v);
  },
  figures(r, v) {
    const figures = [
      switchGrid({ layers: r.L, heads: r.H, attentions: concatAttentions(r), tokens: tokenLabels(r.tokens),
        ablate: r.ablate }),
      { kind: 'text', id: 'ablate-off', text: offText(r.ablate) },
    ];
    if (!r.mlm) return [...figures, { kind: 'text', id: 'ablate-mask', text: 'This checkpoint has no [MASK] head: the '
      + 'attention above is what changes.' }];
    if (!r.predictions.length) return [...figures, { kind: 'text', id: 'ablate-mask', text: 'Put [MASK] in the '
      + 'sentence to see what the heads switched off change.' }];
    r.predictions.forEach(({ position, top }, i) => {
      const change = r.changes?.[i];
      figures.push({ kind: 'bars', id: `ablate-guesses-${i}`, values: top.map((p) => p.probability),
        labels: top.map((p) => p.token),
        title: `[MASK] at ${position}${r.ablate ? ', heads off' : ''}: ${top.map((p) => p.token).join(', ')}`,
        xTitle: 'token', yTitle: 'probability', highlight: 0 });
      if (change) {
        figures.push({ kind: 'text', id: `ablate-change-${i}`,
          text: 'With every head: '
            + `${change.before.map((p) => `${p.token} ${(100 * p.probability).toFixed(1)}%`).join(', ')}. Its first `
            + `guess “${change.chosen.token}”: logit `
            + `${logitChange(change.chosen.logitBefore, change.chosen.logitAfter)} with the heads off.` });
      }
    });
    return figures;
  },
};

/** Every layer's [H, T, T] one after another: [L * H * T * T], the model view's order. */
function concatAttentions(r) {
  const out = new Float32Array(r.L * r.H * r.T * r.T);
  r.attentions.forEach((w, l) => out.set(w, l * r.H * r.T * r.T));
  return out;
}

export const SECTIONS = [model, headView, neuron, fill, switchOff];
