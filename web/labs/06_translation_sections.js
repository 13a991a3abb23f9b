// The Translation lab's sections: the opened Marian model translates (greedy or beam search, in the
// core: core/models/marian.*), word by word (a step button and play); the cross-attention that
// produced each generated token, as a heatmap and as lines between the two sentences; and the views
// of one kind of attention (the encoder's, the decoder's or the cross-attention): the model view (a
// thumbnail per layer and head) and the head view of the chosen one. Every figure shows the generated
// tokens up to "Tokens shown". No DOM here. ctx.opened: {model (a Marian), tokenizer, name}.
//
// Shapes (docs/translation.md): S source pieces (</s> included), T generated tokens (</s> included), L
// decoder layers x H heads, Le encoder layers x He heads; n <= T tokens shown. r.cross[t]: L x H x S,
// the cross-attention while choosing generated token t; r.encoder[l]: He x S x S; r.decoder[l]: H x
// (T + 1) x (T + 1), over the decoder's inputs (<start> and the generated tokens).
import { logitChange, offText, switchGrid, topHeads } from './ablation_figures.js';
import { headListText, passHeads } from './head_list.js';
import { tokenLabels } from './token_labels.js';
import { visibleToken } from './visible_text.js';
import { BACKEND_LABELS, cpuKernel } from '../backends.js';
import { heatmapRange } from './common.js';

// Where each part runs. The decoding loop (choosing each word, with its key/value cache and beams) runs
// in the core on a CPU kernel: SIMD128, or scalar when that is asked for. The attention the figures show
// is computed again by the encoder and a teacher-forced decoder over the translation, every call through
// the page's kernel (ctx.attention: WebGPU where it is chosen), and that is the backend the badge names.

/** The badge's choice: the kernel that computed the attention shown, and where the decoding loop ran. */
export function choiceOf(shown, backend) {
  const loop = BACKEND_LABELS[cpuKernel(backend)];
  const reason = shown.backend === cpuKernel(backend)
    ? `${shown.reason}; it ran the decoding loop and the attention shown`
    : `${shown.reason}; it ran the attention shown, and the decoding loop (choosing each word) ran the `
      + `${loop} CPU kernel`;
  return { backend: shown.backend, reason };
}

/** generated token t's cross-attention [L x H x S], from a teacher-forced pass's per-layer [H, T', S] (row t). */
function crossPerToken(layers, L, H, S, count) {
  const rows = layers[0].length / (H * S);
  return Array.from({ length: count }, (_, t) => {
    const out = new Float32Array(L * H * S);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) out.set(layers[l].subarray((h * rows + t) * S,
      (h * rows + t + 1) * S), (l * H + h) * S);
    return out;
  });
}

/** Translates (cached on the opened model by text, beams, max length and backend). */
export async function runTranslation(ctx, v) {
  const opened = ctx.opened;
  if (!opened) throw new Error('Open a checkpoint folder first (above).');
  const text = String(v.text).trim();
  if (!text) throw new Error('Type a sentence to translate.');
  const ablate = v.ablate ?? '';
  const key = JSON.stringify([text, v.beams, v.maxLength, ctx.backend, ablate]);
  if (opened.cache?.key === key) return opened.cache;
  const { model: marian, tokenizer } = opened;
  const c = marian.config;
  const loop = cpuKernel(ctx.backend, ctx.module?.cpuBackends);
  const source = tokenizer.encode(text);
  const maxLength = Math.min(v.maxLength, c.maxPositions);
  // With cross-attention heads switched off: first the whole model's translation (what the switch changes).
  // The encoder has no switched heads: one encoder pass serves both.
  const heads = passHeads(marian, ablate);
  marian.encode(source.ids, { backend: loop });
  let before = null;
  if (ablate) {
    const whole = marian.generate({ beams: v.beams, maxLength, backend: loop });
    before = { ids: whole.ids, targetPieces: whole.ids.slice(1).map((id) => tokenizer.idToToken(id)),
      translation: tokenizer.decode(whole.ids) };
  }
  const g = marian.generate({ beams: v.beams, maxLength, backend: loop, heads });
  const logit = before ? chosenLogit(marian, heads, before.ids, g.ids, loop, tokenizer) : null;
  // The attention shown: the encoder, then the decoder teacher-forced over the translation (its row t is
  // where it chose generated token t+1: the same numbers as the decoding loop's, the kernel aside).
  await marian.encodeWith(source.ids, ctx.attention);
  const encoder = Array.from({ length: c.encoderLayers }, (_, l) => marian.encoderAttention(l));
  const shown = await marian.decodeWith(g.ids, ctx.attention, { heads });
  const decoder = Array.from({ length: c.decoderLayers }, (_, l) => marian.decoderAttention(l));
  const crossLayers = Array.from({ length: c.decoderLayers }, (_, l) => marian.crossAttention(l));
  const target = g.ids.slice(1).map((id) => tokenizer.idToToken(id));
  opened.cache = {
    key, choice: choiceOf(shown.choice, ctx.backend), name: opened.name, sourcePieces: source.pieces,
    sourceIds: Array.from(source.ids), targetPieces: target, ids: g.ids, translation: tokenizer.decode(g.ids),
    cross: crossPerToken(crossLayers, c.decoderLayers, c.decoderHeads, source.ids.length, target.length),
    steps: g.steps.map((s) => ({ ...s, text: s.beams.map((b) => tokenizer.decode(b)) })),
    score: g.score, beams: v.beams, encoder, decoder, L: c.decoderLayers, H: c.decoderHeads, Le: c.encoderLayers,
    He: c.encoderHeads, ablate, ...(before ? { before, logit } : {}),
  };
  return opened.cache;
}

/**
 * What switching the heads off did to the choice (issue 39, item 4): at the first generated token where
 * the translation with the heads off leaves the whole model's (or the first token, where they agree),
 * the decoder teacher-forced over the prefix both share; the logit there of the whole model's token and
 * of the one written with the heads off, with every head and with `heads` ([{layer, head}]) off. Runs
 * after encode(): the encoder has no switched heads, so one encoder pass serves both decodes.
 * -> {position (1 = the first generated token), whole: {id, piece, on, off}, off: {id, piece, on, off}}
 */
function chosenLogit(marian, heads, wholeIds, offIds, backend, tokenizer) {
  let p = 1;
  while (p < wholeIds.length && p < offIds.length && wholeIds[p] === offIds[p]) p++;
  if (p >= wholeIds.length || p >= offIds.length) p = 1; // the same translation: its first token
  const prefix = Int32Array.from(wholeIds.slice(0, p));
  const row = (off) => {
    marian.decode(prefix, { backend, heads: off });
    const logits = marian.logits(), V = logits.length / p;
    return logits.subarray((p - 1) * V, p * V);
  };
  const on = row([]);
  const off = row(heads);
  const token = (id) => ({ id, piece: tokenizer.idToToken(id), on: on[id], off: off[id] });
  return { position: p, whole: token(wholeIds[p]), off: token(offIds[p]) };
}

/** How many generated tokens to show: `shown` (0 = all). */
const shownCount = (r, v) => (v.shown > 0 ? Math.min(v.shown, r.targetPieces.length) : r.targetPieces.length);

function pickLayerHead(layerAsked, headAsked, L, H) {
  const layer = Math.min(layerAsked, L - 1), head = Math.min(headAsked, H - 1);
  const notes = [];
  if (layer !== layerAsked) notes.push(`layer ${layerAsked} does not exist (${L} layers): showing ${layer}`);
  if (head !== headAsked) notes.push(`head ${headAsked} does not exist (${H} heads): showing ${head}`);
  return { layer, head, notes };
}

const maxOf = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);

/** The cross-attention of the first n generated tokens, layer and head (l, h): [n, S]. */
function crossHead(r, n, l, h) {
  const S = r.sourcePieces.length, out = new Float32Array(n * S);
  for (let t = 0; t < n; t++) out.set(r.cross[t].subarray((l * r.H + h) * S, (l * r.H + h + 1) * S), t * S);
  return out;
}

/**
 * The cross-attention of the first n generated tokens, the mean over the heads of layers [from, L): [n, S].
 * from = L - 1 is notebook 04's figure (the last layer, its heads averaged); from = 0 averages every layer.
 */
function crossMean(r, n, from = 0) {
  const S = r.sourcePieces.length, count = (r.L - from) * r.H, out = new Float32Array(n * S);
  for (let t = 0; t < n; t++) {
    for (let i = from * r.H * S; i < r.L * r.H * S; i++) out[t * S + (i % S)] += r.cross[t][i] / count;
  }
  return out;
}

/** The cross view chosen -> {values [n, S], which (the figures' words), notes}. */
export function crossView(r, n, v) {
  if (v.crossView === 'one') {
    const { layer, head, notes } = pickLayerHead(v.layer, v.head, r.L, r.H);
    return { values: crossHead(r, n, layer, head), which: `layer ${layer}, head ${head}`, notes };
  }
  if (v.crossView === 'all') return { values: crossMean(r, n),
    which: `mean of all ${r.L} layers × ${r.H} heads`, notes: [] };
  return { values: crossMean(r, n, r.L - 1), which: `last layer (${r.L - 1}), mean of its ${r.H} heads`, notes: [] };
}

/**
 * One kind of attention, as the views section shows it: {name, L, H, queries, keys, axes (the figures'
 * token fields: one list for self-attention, two for cross-attention), queryTitle, keyTitle, at(l, h)
 * -> [queries x keys], note}. Encoder: source x source (all of it: the encoder reads the whole sentence
 * before the first word is generated); decoder: its first n inputs x the same, causal; cross: the
 * first n generated tokens x source.
 */
function attentionKind(r, side, n) {
  const source = tokenLabels(r.sourcePieces);
  const generated = tokenLabels(r.targetPieces);
  const self = (tokens) => ({ queries: tokens, keys: tokens, axes: { tokens }, queryTitle: 'query', keyTitle: 'key' });
  if (side === 'encoder') {
    const S = source.length;
    return { name: 'Encoder self-attention', L: r.Le, H: r.He, ...self(source),
      at: (l, h) => r.encoder[l].slice(h * S * S, (h + 1) * S * S),
      note: 'The encoder reads the whole source sentence at once, before the first word is written: "Tokens shown" '
        + 'does not change it.' };
  }
  if (side === 'decoder') {
    // A generated token is labelled the same as an input as it is in the cross-attention's rows.
    const inputs = ['<start>', ...generated];
    const D = inputs.length; // T + 1: r.decoder's positions
    return { name: 'Decoder self-attention', L: r.L, H: r.H, ...self(inputs.slice(0, n)),
      at: (l, h) => {
        const m = new Float32Array(n * n), w = r.decoder[l];
        for (let i = 0; i < n; i++) m.set(w.subarray((h * D + i) * D, (h * D + i) * D + n), i * n);
        return m;
      },
      note: `Rows and columns are the decoder's inputs: <start>, then each generated token fed back in. Each row is `
        + `where the decoder chose the next token (the <start> row chose the first): the ${n} positions behind the `
        + `${n} token${n === 1 ? '' : 's'} shown. A position sees only itself and the inputs before it (causal): the `
        + 'upper triangle is empty.' };
  }
  const shown = generated.slice(0, n);
  return { name: 'Cross-attention', L: r.L, H: r.H, queries: shown, keys: source, queryTitle: 'generated',
    keyTitle: 'source', axes: { queryTokens: shown, keyTokens: source, queryTitle: 'generated', keyTitle: 'source' },
    at: (l, h) => crossHead(r, n, l, h),
    note: 'Rows are the generated tokens, columns the source tokens: each row is where the decoder looked while '
      + 'choosing that token.' };
}

const translate = {
  id: 'translate',
  title: 'Translate, word by word',
  text: 'The encoder reads the source once; the decoder writes the translation a token at a time, each looking at '
    + 'the source through cross-attention (the heatmap below). Every figure shows the tokens written so far.',
  properties: ['text', 'shown'],
  actions: [
    { id: 'play', label: '▶ Play', pauseLabel: '❚❚ Pause', title: 'Show the translation one generated token at a '
      + 'time (Pause stops it)',
      play: {
        everyMs: 600, // a readable pace: a word, then a look at its figures
        // From the first token when the whole translation is already shown; else from where it is.
        start: (v, r) => (shownCount(r, v) >= r.targetPieces.length ? { ...v, shown: 1 } : v),
        next: (v, r) => (shownCount(r, v) >= r.targetPieces.length ? null : { ...v, shown: shownCount(r, v) + 1 }),
      } },
    { id: 'step', label: 'Next word', title: 'Show one more generated token (after the last one, start '
      + 'again from the first)',
      change: (v, r) => ({ ...v, shown: !r || shownCount(r, v) >= r.targetPieces.length ? 1 : shownCount(r, v) + 1 }) },
    { id: 'all', label: 'Show all', title: 'Show the whole translation', change: (v) => ({ ...v, shown: 0 }) },
    { id: 'restart', label: 'From the start', title: 'Show the first generated token only',
      change: (v) => ({ ...v, shown: 1 }) },
  ],
  dependsOn: ['text', 'beams', 'maxLength', 'shown', 'backend', 'ablate'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  // The translation only, so that the cross-attention's heatmap follows it on the first screen; the
  // pieces and the beams go under the heatmap (tokenDetails).
  figures(r, v) {
    const n = shownCount(r, v);
    const words = r.targetPieces.slice(0, n);
    return [{ kind: 'text', id: 'translation',
      text: `${r.translation}${n < r.targetPieces.length ? `  (showing ${n} of ${r.targetPieces.length} tokens: ${words.join(' ')})` : ''}` }];
  },
};

/** The source's and the translation's pieces, and with several beams the search's state at the shown step. */
export function tokenDetails(r, n) {
  const figures = [{ kind: 'text', id: 'pieces', text: `Source pieces (${r.sourcePieces.length}): ${r.sourcePieces.join(' ')} · `
    + `generated (${r.targetPieces.length}): ${r.targetPieces.join(' ')}` }];
  if (r.beams > 1 && r.steps.length) {
    const k = Math.min(Math.max(1, n), r.steps.length) - 1;
    const s = r.steps[k];
    // A beam with no possible next token (at the length limit only </s> is allowed) has the score
    // -Infinity: it is counted as ended, not printed as a number.
    const live = s.text.flatMap((t, b) => (Number.isFinite(s.scores[b]) ? [`“${t}” ${s.scores[b].toFixed(2)}`] : []));
    const ended = s.text.length - live.length;
    const beams = live.length ? `Beams after step ${k + 1} (summed log-probability): ${live.join(' · ')}` : `Step ${k + 1}: no beam can go on`;
    figures.push({ kind: 'text', id: 'beams', text: `${beams}${ended && live.length ? ` · ${ended} ended` : ''}`
      + `${s.finished.length ? ` · ${s.finished.length} finished with </s> at this step` : ''}. Best final score `
      + `(÷ length): ${r.score.toFixed(3)}.` });
  }
  return figures;
}

// Notebook 04's cell for this figure does not run as written; what it meant, and what the lab does.
const NOTEBOOK_NOTE = 'In notebook 04 this figure\'s cell fails: model.generate(**inputs, output_attentions=True) '
  + 'returns only the token ids (the weights come back with return_dict_in_generate=True, in outputs.cross_attentions, '
  + 'one entry per generated token), and tokenizer.tokenize(translation) splits the French with the English tokenizer. '
  + 'Here the weights are those the model computed while writing each token, and the French pieces are the ones it '
  + 'wrote, from its target vocabulary.';

const cross = {
  id: 'cross',
  title: 'Cross-attention: which source tokens each generated token read',
  text: 'Each row is a generated token, each column a source token: where the decoder looked while choosing that token '
    + '(the last layer\'s heads averaged, as notebook 04 draws it; "Show" picks every layer, or one layer and head). '
    + 'The lines under it show the same numbers between the two sentences: hover or click a token to keep its lines.',
  properties: ['crossView', 'layer', 'head'],
  dependsOn: ['text', 'beams', 'maxLength', 'shown', 'crossView', 'layer', 'head', 'backend', 'ablate'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r, v) {
    const n = shownCount(r, v), S = r.sourcePieces.length;
    const { values, which, notes } = crossView(r, n, v);
    const xs = tokenLabels(r.sourcePieces), ys = tokenLabels(r.targetPieces).slice(0, n);
    return [
      ...(notes.length ? [{ kind: 'text', id: 'cross-note', status: 'bad', text: `${notes.join('; ')}.` }] : []),
      { kind: 'heatmap', id: 'cross-heatmap', cell: S > 40 ? 12 : 22, recordLabels: true,
        title: `Cross-attention, ${which}`, rows: n, cols: S, values, range: heatmapRange(values, v.colourRange),
        xTitle: 'source token', yTitle: 'generated token', xTicks: xs, yTicks: ys, xNames: xs.map((t) => `source ${t}`),
        yNames: ys.map((t) => `generated ${t}`) },
      { kind: 'headview', id: 'cross-lines', title: `Cross-attention lines, ${which}`, queryTokens: ys, keyTokens: xs,
        weights: values, queryTitle: 'generated', keyTitle: 'source',
        caption: `Line opacity = weight (1 = solid). ${n} of ${r.targetPieces.length} generated tokens; each `
          + `one's lines sum to 1.` },
      ...tokenDetails(r, n),
      { kind: 'text', id: 'cross-notebook', text: NOTEBOOK_NOTE },
    ];
  },
};

const views = {
  id: 'views',
  title: 'Views: every layer and head of the encoder, the decoder or the cross-attention',
  text: 'Choose which attention: the encoder\'s self-attention over the source, the decoder\'s (causal) self-attention '
    + 'over its own words, or the cross-attention from the translation to the source. The model view has one thumbnail '
    + 'per head, a row per layer; click one to open it in the head view and the heatmap below it.',
  properties: ['side', 'viewLayer', 'viewHead'],
  dependsOn: ['text', 'beams', 'maxLength', 'shown', 'side', 'viewLayer', 'viewHead', 'backend', 'ablate'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r, v) {
    const n = shownCount(r, v);
    const kind = attentionKind(r, v.side, n);
    const { layer, head, notes } = pickLayerHead(v.viewLayer, v.viewHead, kind.L, kind.H);
    const T = kind.queries.length, S = kind.keys.length;
    const attentions = new Float32Array(kind.L * kind.H * T * S);
    for (let l = 0; l < kind.L; l++) for (let h = 0; h < kind.H; h++) attentions.set(kind.at(l, h),
      (l * kind.H + h) * T * S);
    const m = kind.at(layer, head);
    const which = `layer ${layer}, head ${head}`;
    const axes = kind.axes;
    return [
      ...(notes.length ? [{ kind: 'text', id: 'views-note', status: 'bad', text: `${notes.join('; ')}.` }] : []),
      { kind: 'text', id: 'views-what', text: kind.note },
      { kind: 'modelgrid', id: 'views-grid', title: `${kind.name}: ${kind.L} layers × ${kind.H} heads `
        + '(0 to 1 per cell)',
        layers: kind.L, heads: kind.H, ...axes, attentions, selected: { layer, head },
        picks: { layer: 'viewLayer', head: 'viewHead' } },
      { kind: 'headview', id: 'views-lines', title: `${kind.name}, ${which}`, ...axes, weights: m,
        caption: 'Line opacity = weight (1 = solid). Hover or click a token to keep only its lines.' },
      { kind: 'heatmap', id: 'views-heatmap', cell: Math.max(T, S) > 40 ? 10 : 20, recordLabels: true,
        title: `${kind.name}, ${which}`, rows: T, cols: S, values: m, range: heatmapRange(m, v.colourRange),
        xTitle: `${kind.keyTitle} (attended to)`, yTitle: `${kind.queryTitle} (attending)`, xTicks: kind.keys,
        yTicks: kind.queries, xNames: kind.keys.map((t) => `${kind.keyTitle} ${t}`),
        yNames: kind.queries.map((t) => `${kind.queryTitle} ${t}`) },
    ];
  },
};

// Switch heads off (issue 39, item 4): click cross-attention heads to switch them off (their output zeroed
// before out_proj) and see the translation change; a button switches off the heads that focus most
// (each generated token's largest weight on one source token, averaged).
const TOP_K = 3;

/** Each cross-attention head's focus over the translation shown: the mean of each row's largest weight [L * H]. */
function crossFocus(r, n) {
  const S = r.sourcePieces.length, out = new Float32Array(r.L * r.H);
  for (let l = 0; l < r.L; l++) for (let h = 0; h < r.H; h++) {
    const w = crossHead(r, n, l, h);
    let sum = 0;
    for (let t = 0; t < n; t++) sum += maxOf(w.subarray(t * S, (t + 1) * S));
    out[l * r.H + h] = n ? sum / n : 0;
  }
  return out;
}

const switchOff = {
  id: 'ablate',
  title: 'Switch heads off',
  text: 'Attention weights show where a head looks, not what it does. Click a cross-attention head to switch it off '
    + '(its output is zeroed before the output projection, as TransformerLens zeroes hook_z) and see what the '
    + 'translation becomes; click it again to switch it back on.',
  properties: ['ablate'],
  actions: [
    { id: 'ablate-focus', label: `Switch off the ${TOP_K} most focused heads`, title: 'The cross-attention heads whose '
      + 'rows put the most weight on one source token',
      change: (v, r) => (r ? { ...v,
        ablate: headListText(topHeads(crossFocus(r, r.targetPieces.length), r.H, TOP_K)) } : v) },
    { id: 'ablate-none', label: 'Every head on', change: (v) => ({ ...v, ablate: '' }) },
  ],
  dependsOn: ['text', 'beams', 'maxLength', 'backend', 'ablate'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r) {
    const n = r.targetPieces.length, S = r.sourcePieces.length;
    const attentions = new Float32Array(r.L * r.H * n * S);
    for (let l = 0; l < r.L; l++) for (let h = 0; h < r.H; h++) attentions.set(crossHead(r, n, l, h),
      (l * r.H + h) * n * S);
    return [
      switchGrid({ layers: r.L, heads: r.H, attentions, queryTokens: tokenLabels(r.targetPieces),
        keyTokens: tokenLabels(r.sourcePieces), queryTitle: 'generated', keyTitle: 'source', ablate: r.ablate,
        title: `Cross-attention, ${r.L} layers × `
          + `${r.H} heads: click a head to switch it off or on` }),
      { kind: 'text', id: 'ablate-off', text: offText(r.ablate) },
      { kind: 'text', id: 'ablate-translation', text: r.before
        ? `With the heads off: ${r.translation} · with every head: `
          + `${r.before.translation}${r.before.translation === r.translation ? ' (the same)' : ''}`
        : `Translation: ${r.translation}` },
      ...(r.logit ? [{ kind: 'text', id: 'ablate-logit', text: logitText(r.logit) }] : []),
    ];
  },
};

/** The chosen token's logit line: where the translations part, each one's token, every head → heads off. */
export function logitText(l) {
  const where = l.whole.id === l.off.id ? `Token ${l.position}, the same with the heads off: `
    + `“${visibleToken(l.whole.piece)}”`
    : `Token ${l.position}, where the translations part: the whole model's “${visibleToken(l.whole.piece)}”`;
  const whole = `${where}, logit ${logitChange(l.whole.on, l.whole.off)} with the heads off`;
  return l.whole.id === l.off.id ? `${whole}.` : `${whole}; “${visibleToken(l.off.piece)}”, written instead, `
    + `${logitChange(l.off.on, l.off.off)}.`;
}

export const SECTIONS = [translate, cross, views, switchOff];
