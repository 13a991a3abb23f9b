// The Translation lab's sections: the opened Marian model translates (greedy or beam search, in the
// core: core/models/marian.*), word by word; the cross-attention that produced each generated token;
// the encoder's and decoder's self-attention. No DOM here. ctx.opened: {marian, tokenizer, name}.
import { tokenLabels } from './05_pretrained_sections.js';

// The Marian model calls the CPU kernels from the core (its decoding loop is in C++): WebGPU is not
// staged for it, and the badge says so.
export function choiceOf(backend) {
  if (backend === 'scalar') return { backend: 'scalar', reason: 'forced: scalar', label: 'Scalar ran: forced: scalar' };
  const reason = backend === 'webgpu' ? 'the translation model\'s decoding loop runs the CPU kernels (WebGPU is not staged for it)' : 'the CPU kernel for the decoding loop';
  return { backend: 'simd128', reason, label: `SIMD128 ran: ${reason}` };
}

/** Translates (cached on the opened model by text, beams, max length and backend). */
export function runTranslation(ctx, v) {
  const opened = ctx.opened;
  if (!opened) throw new Error('Open a checkpoint folder first (above).');
  const text = String(v.text).trim();
  if (!text) throw new Error('Type a sentence to translate.');
  const choice = choiceOf(ctx.backend);
  const key = JSON.stringify([text, v.beams, v.maxLength, choice.backend]);
  if (opened.cache?.key === key) return opened.cache;
  const { marian, tokenizer } = opened;
  const c = marian.config;
  const backend = choice.backend;
  const source = tokenizer.encode(text);
  marian.encode(source.ids, { backend });
  const maxLength = Math.min(v.maxLength, c.maxPositions);
  const g = marian.generate({ beams: v.beams, maxLength, backend });
  const encoder = Array.from({ length: c.encoderLayers }, (_, l) => marian.encoderAttention(l));
  // The decoder's self-attention over the generated tokens: one teacher-forced pass.
  marian.decode(g.ids, { backend });
  const decoder = Array.from({ length: c.decoderLayers }, (_, l) => marian.decoderAttention(l));
  const target = g.ids.slice(1).map((id) => tokenizer.idToToken(id));
  opened.cache = {
    key, choice, name: opened.name, sourcePieces: source.pieces, sourceIds: Array.from(source.ids), targetPieces: target, ids: g.ids,
    translation: tokenizer.decode(g.ids), cross: g.cross, steps: g.steps.map((s) => ({ ...s, text: s.beams.map((b) => tokenizer.decode(b)) })),
    score: g.score, beams: v.beams, encoder, decoder, L: c.decoderLayers, H: c.decoderHeads, Le: c.encoderLayers, He: c.encoderHeads,
  };
  return opened.cache;
}

/** How many generated tokens to show: `shown` (0 = all). */
const shownCount = (r, v) => (v.shown > 0 ? Math.min(v.shown, r.targetPieces.length) : r.targetPieces.length);

function pickLayerHead(v, L, H) {
  const layer = Math.min(v.layer, L - 1), head = Math.min(v.head, H - 1);
  const notes = [];
  if (layer !== v.layer) notes.push(`layer ${v.layer} does not exist (${L} layers): showing ${layer}`);
  if (head !== v.head && !v.average) notes.push(`head ${v.head} does not exist (${H} heads): showing ${head}`);
  return { layer, head, notes };
}

const translate = {
  id: 'translate',
  title: 'Translate, word by word',
  text: 'The encoder reads the whole source sentence once; the decoder then writes the translation one token at a time, each '
    + 'new token looking at the source through cross-attention. Step through it, or show it all. With several beams, the '
    + 'search keeps the best partial translations at each step (their summed log-probabilities below).',
  properties: ['text', 'beams', 'maxLength', 'shown'],
  actions: [
    { id: 'step', label: 'Next word', title: 'Show one more generated token', change: (v) => ({ ...v, shown: v.shown + 1 }) },
    { id: 'all', label: 'Show all', title: 'Show the whole translation', change: (v) => ({ ...v, shown: 0 }) },
    { id: 'restart', label: 'From the start', title: 'Show the first generated token only', change: (v) => ({ ...v, shown: 1 }) },
  ],
  dependsOn: ['text', 'beams', 'maxLength', 'shown', 'backend'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r, v) {
    const n = shownCount(r, v);
    const words = r.targetPieces.slice(0, n);
    const figures = [
      { kind: 'text', id: 'translation', status: 'ok', text: `${r.translation}${n < r.targetPieces.length ? `  (showing ${n} of ${r.targetPieces.length} tokens: ${words.join(' ')})` : ''}` },
      { kind: 'text', id: 'pieces', text: `Source pieces (${r.sourcePieces.length}): ${r.sourcePieces.join(' ')} · generated (${r.targetPieces.length}): ${r.targetPieces.join(' ')}` },
    ];
    if (r.beams > 1 && r.steps.length) {
      const k = Math.min(Math.max(1, n), r.steps.length) - 1;
      const s = r.steps[k];
      figures.push({ kind: 'text', id: 'beams', text: `Beams after step ${k + 1} (summed log-probability): ${s.text.map((t, b) => `“${t}” ${s.scores[b].toFixed(2)}`).join(' · ')}`
        + `${s.finished.length ? ` · ${s.finished.length} finished with </s> at this step` : ''}. Best final score (÷ length): ${r.score.toFixed(3)}.` });
    }
    return figures;
  },
};

const cross = {
  id: 'cross',
  title: 'Cross-attention: which source tokens each generated token read',
  text: 'Rows are the generated tokens, columns the source tokens: each row is where the decoder looked while choosing that '
    + 'token (one layer and head, or the mean of all heads and layers as notebook 04 draws it).',
  properties: ['layer', 'head', 'average'],
  dependsOn: ['text', 'beams', 'maxLength', 'shown', 'layer', 'head', 'average', 'backend'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r, v) {
    const n = shownCount(r, v), S = r.sourcePieces.length;
    const { layer, head, notes } = pickLayerHead(v, r.L, r.H);
    const values = new Float32Array(n * S);
    for (let t = 0; t < n; t++) {
      const w = r.cross[t];
      if (v.average) for (let i = 0; i < r.L * r.H * S; i++) values[t * S + (i % S)] += w[i] / (r.L * r.H);
      else values.set(w.subarray((layer * r.H + head) * S, (layer * r.H + head + 1) * S), t * S);
    }
    const xs = tokenLabels(r.sourcePieces), ys = tokenLabels(r.targetPieces.slice(0, n));
    const which = v.average ? 'all layers and heads averaged' : `layer ${layer}, head ${head}`;
    return [
      ...(notes.length ? [{ kind: 'text', id: 'cross-note', status: 'bad', text: `${notes.join('; ')}.` }] : []),
      { kind: 'heatmap', id: 'cross-heatmap', cell: S > 40 ? 12 : 22, recordLabels: true, title: `Cross-attention, ${which}`,
        rows: n, cols: S, values, range: [0, Math.max(1e-6, ...values)], xTitle: 'source token', yTitle: 'generated token',
        xTicks: xs, yTicks: ys, xNames: xs.map((t) => `source ${t}`), yNames: ys.map((t) => `generated ${t}`) },
    ];
  },
};

const self = {
  id: 'self',
  title: 'Self-attention: the encoder over the source, the decoder over its own words',
  text: 'The encoder\'s self-attention relates source tokens to each other; the decoder\'s is causal: a generated token sees '
    + 'only the tokens before it (the upper triangle is empty).',
  properties: ['side'],
  dependsOn: ['text', 'beams', 'maxLength', 'layer', 'head', 'average', 'side', 'backend'],
  needsOpen: true,
  compute: (ctx, v) => runTranslation(ctx, v),
  figures(r, v) {
    const encoder = v.side === 'encoder';
    const L = encoder ? r.Le : r.L, H = encoder ? r.He : r.H;
    const { layer, head } = pickLayerHead(v, L, H);
    const labels = tokenLabels(encoder ? r.sourcePieces : ['<start>', ...r.targetPieces]);
    const T = labels.length;
    const all = (encoder ? r.encoder : r.decoder)[layer];
    let m = all.slice(head * T * T, (head + 1) * T * T);
    if (v.average) {
      m = new Float32Array(T * T);
      for (let h = 0; h < H; h++) for (let i = 0; i < T * T; i++) m[i] += all[h * T * T + i] / H;
    }
    const which = v.average ? `layer ${layer}, heads averaged` : `layer ${layer}, head ${head}`;
    return [{ kind: 'heatmap', id: 'self-heatmap', cell: T > 40 ? 10 : 20, recordLabels: true, title: `${encoder ? 'Encoder' : 'Decoder'} self-attention, ${which}`,
      rows: T, cols: T, values: m, range: [0, Math.max(1e-6, ...m)], xTitle: 'key', yTitle: 'query', xTicks: labels, yTicks: labels }];
  },
};

export const SECTIONS = [translate, cross, self];
