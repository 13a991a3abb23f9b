// The figures of a circuits run (issue 44), from web/labs/circuits.js's records: the logit difference
// and its parts' sum, each head's direct share (a layers x heads grid), each layer's attention and MLP
// beside the embeddings (bars), and one grid per patching site, the clean prompt's tokens or the heads on
// its x axis. The Writing lab's and the Induction lab's Circuits sections draw them, and `attnlab
// attribute|patch --png/--svg` writes the same figures. Each figure names its TransformerLens hook. No DOM.
import { cacheJson, cacheTensors, constantWords, PATCH_SITES } from './circuits.js';
import { writeSafetensors } from '../io/safetensors.js';
import { tokenLabels } from './token_labels.js';
import { visibleToken } from './visible_text.js';

const extent = (values) => Math.max(1e-6, ...values.map(Math.abs));
const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;
// A cell wide enough for its text at the heatmap's 12 px (heatmap.js leaves out text it would have to
// shrink, about 0.68 em a character and 2 px each side), and no narrower than 28 px.
const cellFor = (texts) => Math.max(28, Math.ceil(4 + 0.68 * 12 * Math.max(0, ...(texts ?? []).map((t) => t.length))));
const numbered = (n, word) => Array.from({ length: n }, (_, i) => `${word} ${i}`);

/** The metric in words: logit(“ Mary”) − logit(“ John”). */
export function differenceWords(record) {
  return `logit(“${visibleToken(record.answer.text)}”) − logit(“${visibleToken(record.wrong.text)}”)`;
}

/** An attribution record ({layers, heads} from the model) -> the sum's line, the head grid and the layer bars. */
export function attributionFigures(a, { layers: L, heads: H }) {
  const heads = numbered(H, 'head'), layers = numbered(L, 'layer');
  const diff = differenceWords(a);
  const headValues = a.heads.flat();
  const cellText = L * H <= 64 ? headValues.map((x) => x.toFixed(1)) : undefined;
  // Each layer's attention (its heads and bias) and MLP, beside the embeddings, as TransformerLens's
  // decompose_resid lists them.
  const parts = [{ label: 'embed', value: a.embed }, ...(a.posEmbed !== 0 ? [{ label: 'pos', value: a.posEmbed }] : []),
    ...a.mlp.flatMap((m, l) => [{ label: `${l} attn`, value: a.heads[l].reduce((s, x) => s + x, 0) + a.attnBias[l] },
      { label: `${l} mlp`, value: m }])];
  return [
    { kind: 'text', id: 'circuits-sum', text: `${diff} after the clean prompt: ${a.logitDiff.toFixed(3)}. The parts `
      + `below add up to ${a.total.toFixed(3)}`
      + `${a.constant ? ` (with ${constantWords(a)}, ${signed(a.constant)})` : ''}.` },
    { kind: 'text', id: 'circuits-dla-what', text: 'Below: each head\'s direct share (its output blocks.L.attn.hook_z '
      + `through its rows of W_O, ${a.finalNorm ? 'divided by ln_final.hook_scale, ' : ''}dotted with W_U[answer] − `
      + 'W_U[wrong]), then each layer\'s attention and MLP beside the embeddings. Positive pushes towards the answer.' },
    { kind: 'heatmap', id: 'circuits-dla-heads', cell: cellFor(cellText), palette: 'diverging', title: 'Direct share per head',
      label: `Direct share per head of ${diff} (blocks.L.attn.hook_z times W_O)`,
      rows: L, cols: H, values: Float32Array.from(headValues), range: [-extent(headValues), extent(headValues)],
      xTitle: 'head', yTitle: 'layer', xTicks: heads.map((_, h) => String(h)), yTicks: layers.map((_, l) => String(l)),
      xNames: heads, yNames: layers, valueName: 'share',
      cellText },
    { kind: 'bars', id: 'circuits-dla-layers', title: 'Direct share per layer',
      values: parts.map((x) => x.value), labels: parts.map((x) => x.label), xTitle: 'hook_embed, hook_attn_out, '
      + 'hook_mlp_out', yTitle: 'share' },
  ];
}

/** A patching record -> the differences' line and one grid per site (id circuits-patch-<site>). */
export function patchingFigures(p, { layers: L, heads: H }) {
  const heads = numbered(H, 'head'), layers = numbered(L, 'layer');
  const tokens = tokenLabels(p.clean.tokens.map(visibleToken));
  const figures = [
    { kind: 'text', id: 'circuits-patch-sum', text: `${differenceWords(p)}: clean ${p.cleanDiff.toFixed(3)}, corrupted `
      + `${p.corruptDiff.toFixed(3)}. Each cell below: the corrupted run with that one activation copied from the clean `
      + 'run, (patched − corrupted) / (clean − corrupted).' },
  ];
  for (const [name, grid] of Object.entries(p.grids)) {
    const site = PATCH_SITES.find((s) => s.name === name);
    const byHead = grid.cols === 'head';
    const values = grid.values.flat();
    const cols = byHead ? H : tokens.length;
    const reach = Math.max(1, extent(values));
    // Narrower cells for longer prompts, so that 20 positions still fit a phone's width at full size.
    const cell = cols > 24 ? 14 : cols > 12 ? 16 : 24;
    figures.push({ kind: 'heatmap', id: `circuits-patch-${name}`, cell, palette: 'diverging',
      title: `${name} (${grid.hook.replace('{L}', 'L')})`, label: `Patching ${name}: ${site.about} (${grid.hook})`,
      rows: L, cols, values: Float32Array.from(values), range: [-reach, reach],
      xTitle: byHead ? 'head' : 'position (the clean prompt\'s token)', yTitle: 'layer',
      xTicks: byHead ? heads.map((_, h) => String(h)) : tokens, yTicks: layers.map((_, l) => String(l)),
      xNames: byHead ? heads : p.clean.tokens.map((t, i) => `position ${i} ${visibleToken(t)}`), yNames: layers,
      valueName: 'recovered', recordLabels: true });
  }
  return figures;
}

/** {L, H, attribution, patching} -> every figure of the Circuits section, attribution first. */
export const circuitsFigures = (r) => [...attributionFigures(r.attribution, { layers: r.L, heads: r.H }),
  ...patchingFigures(r.patching, { layers: r.L, heads: r.H })];

/**
 * The cache's download, or why it is not offered: r.patching.cache (kept by the section), r.stem (the
 * files' name), r.cacheBound (the floats it would have been, when past the page's bound).
 */
export function cacheFigures(r) {
  if (r.patching.cache) return [activationCacheFigure(r.patching.cache, `${r.stem}-cache`)];
  if (!r.cacheBound) return [];
  return [{ kind: 'text', id: 'circuits-cache-size', text: `The clean run's activations would be about `
    + `${Math.round(4 * r.cacheBound / 2 ** 20)} MB here, more than this page keeps for a download: \`attnlab patch `
    + '--cache FILE.safetensors` writes them (docs/circuits.md).' }];
}

/**
 * A run's activation cache ([{name, shape, values}], the clean prompt's) -> its download buttons: safetensors
 * (float32, the masked scores -inf, as TransformerLens keeps them) and JSON (-inf as null), each under the
 * hook names, so `cache["blocks.1.attn.hook_z"]` in a notebook reads the same numbers.
 */
export function activationCacheFigure(cache, stem) {
  const floats = cache.reduce((n, a) => n + a.values.length, 0);
  return { kind: 'files', id: 'circuits-cache', title: 'The clean run\'s activations',
    text: `${cache.length} activations (${(4 * floats / 2 ** 20).toFixed(1)} MB as float32), each under its `
      + 'TransformerLens hook name (hook_embed, blocks.0.hook_resid_pre, blocks.0.attn.hook_pattern, …): load the '
      + 'safetensors file with safetensors.torch.load_file, or read the JSON.',
    files: [
      { id: 'circuits-cache-safetensors', label: 'Cache (.safetensors)', name: `${stem}.safetensors`,
        type: 'application/octet-stream', make: () => writeSafetensors(cacheTensors(cache), { format: 'pt' }) },
      { id: 'circuits-cache-json', label: 'Cache (.json)', name: `${stem}.json`, type: 'application/json',
        make: () => `${JSON.stringify(cacheJson(cache))}\n` },
    ] };
}
