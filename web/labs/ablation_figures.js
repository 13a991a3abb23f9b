// What the "Switch heads off" sections of the Pretrained, Translation and Writing labs share (issue 39,
// item 4): the grid whose heads a click switches off or on (a model view with `toggles`: section_panel.js
// puts the clicked head in or out of the ablate property; `off`: the heads drawn dimmed and crossed), the
// heads a score ranks highest (the button that switches them off), and two scores read off a pass's
// attention. The numbers come from the model's pass with the heads off (a pass takes its heads:
// wasm_bindings/js/checkpoint_model.js); this file only arranges them. No DOM here.
import { heads as headsOf } from './head_list.js';

/** The model view whose thumbnails switch their head off or on (the property `ablate`). */
export function switchGrid({ id = 'ablate-grid', layers, heads, attentions, ablate, title, ...tokens }) {
  const off = headsOf(ablate);
  return { kind: 'modelgrid', id, layers, heads, attentions, ...tokens, off, toggles: 'ablate',
    title: title ?? `${layers} layers × ${heads} heads: click a head to switch it off or on`,
    // A click switches; the head clicked is not a selection to outline.
    selected: null };
}

/** The words for the heads off: 'Heads switched off: layer 0 head 1, layer 1 head 0.' or that every head is on. */
export function offText(ablate) {
  const off = headsOf(ablate);
  if (!off.length) return 'Every head is on: click a head above to switch it off.';
  return `Heads switched off (${off.length}): ${off.map((h) => `${h.layer}.${h.head}`).join(', ')} (layer.head, from `
    + '0): their output is zeroed before the output projection.';
}

/** The k heads a score [L * H] ranks highest, highest first: [{layer, head, score}]. */
export function topHeads(scores, H, k = 3) {
  return Array.from(scores, (score, i) => ({ layer: Math.floor(i / H), head: i % H, score }))
    .sort((a, b) => b.score - a.score || a.layer - b.layer || a.head - b.head)
    .slice(0, Math.min(k, scores.length));
}

/**
 * Scores of each head of a self-attention pass ([L] of [H, T, T]) over its T tokens: previous (mean of
 * a[t, t-1]) and first (mean of a[t, 0]) over t = 1 .. T-1, as the Writing lab's head roles define them
 * (core/models/decoder_probes.h), here on the text shown. [L * H] each.
 */
export function selfAttentionScores(attentions, H, T) {
  const L = attentions.length, previous = new Float32Array(L * H), first = new Float32Array(L * H);
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
    const w = attentions[l], base = h * T * T;
    let p = 0, f = 0;
    for (let t = 1; t < T; t++) {
      p += w[base + t * T + t - 1];
      f += w[base + t * T];
    }
    previous[l * H + h] = T > 1 ? p / (T - 1) : 0;
    first[l * H + h] = T > 1 ? f / (T - 1) : 0;
  }
  return { previous, first };
}

/** A logit's change as the page writes it: '5.123 → 3.456 (−1.667)'. */
export const logitChange = (before, after) => {
  const d = after - before;
  return `${before.toFixed(3)} → ${after.toFixed(3)} (${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(3)})`;
};
