// The Writing lab's Circuits section (issue 44): on the opened decoder, which heads and layers carry the
// answer of a prompt pair. Direct logit attribution splits logit(answer) - logit(wrong) of the clean
// prompt into what each head, layer bias, MLP and the embeddings wrote (a layers x heads grid, and bars
// per layer beside the embeddings); activation patching runs the corrupted prompt with one activation
// of the clean run put in its place (a grid per site, tokens or heads on the x axis). The numbers are
// web/labs/circuits.js's records, the CLI's own (`attnlab attribute`, `attnlab patch`); each figure
// names its TransformerLens hook. No DOM here.
import { attributionRecord, constantWords, patchingRecord, PATCH_SITES } from './circuits.js';
import { tokenLabels } from './token_labels.js';
import { visibleToken } from './visible_text.js';
import { cpuKernel } from '../backends.js';

const cpuOf = (ctx) => cpuKernel(ctx.backend, ctx.module?.cpuBackends);
// A macrotask between patching rows: the worker reads its messages there (a newer request, Stop).
const breathe = () => new Promise((resolve) => { setTimeout(resolve, 0); });
const extent = (values) => Math.max(1e-6, ...values.map(Math.abs));
const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;

export const circuits = {
  id: 'circuits',
  title: 'Circuits: which parts carry the answer',
  text: 'Two questions interpretability asks of a prompt. Which parts wrote the answer? The logit difference (how '
    + 'much more the model expects the answer than the wrong answer) is a sum over every head, MLP and the embeddings, '
    + 'so each part\'s share can be read off (direct logit attribution). Which activations does the answer need? Run '
    + 'the corrupted prompt, copy one activation in from the clean run, and see how much of the clean answer comes '
    + 'back: 1 all of it, 0 none (activation patching).',
  properties: ['circuits', 'clean', 'corrupt', 'answer', 'wrong', 'what'],
  dependsOn: ['circuits', 'clean', 'corrupt', 'answer', 'wrong', 'what', 'backend'],
  needsOpen: true,
  async compute(ctx, v) {
    const opened = ctx.opened;
    if (!opened) throw new Error('Open a checkpoint first (above).');
    if (!v.circuits) return { off: true };
    const { model, tokenizer } = opened;
    const backend = cpuOf(ctx);
    const key = JSON.stringify([v.clean, v.corrupt, v.answer, v.wrong, v.what, backend]);
    if (opened.circuits?.key !== key) {
      const attribution = attributionRecord(model, tokenizer, v.clean, v.answer, v.wrong, { backend });
      const patching = await patchingRecord(model, tokenizer, v.clean, v.corrupt, v.answer, v.wrong,
        { sites: v.what, backend, onRow: breathe });
      opened.circuits = { key, attribution, patching };
    }
    const { layers: L, heads: H } = model.config;
    return { L, H, ...opened.circuits };
  },
  figures(r) {
    if (r.off) {
      return [{ kind: 'text', id: 'circuits-off', text: 'Tick Find the circuit to split the clean prompt\'s answer '
        + 'into its parts and patch the corrupted run (a pass of the model per grid cell).' }];
    }
    const a = r.attribution, p = r.patching;
    const heads = Array.from({ length: r.H }, (_, h) => `head ${h}`);
    const layers = Array.from({ length: r.L }, (_, l) => `layer ${l}`);
    const tokens = tokenLabels(p.clean.tokens.map(visibleToken));
    const answer = visibleToken(a.answer.text), wrong = visibleToken(a.wrong.text);
    const diff = `logit(“${answer}”) − logit(“${wrong}”)`;
    const headValues = a.heads.flat();
    // Each layer's attention (its heads and bias) and MLP, beside the embeddings, as TransformerLens's
    // decompose_resid lists them.
    const parts = [{ label: 'embed', value: a.embed }, ...(a.posEmbed !== 0 ? [{ label: 'pos', value: a.posEmbed }] : []),
      ...a.mlp.flatMap((m, l) => [{ label: `${l} attn`, value: a.heads[l].reduce((s, x) => s + x, 0) + a.attnBias[l] },
        { label: `${l} mlp`, value: m }])];
    const figures = [
      { kind: 'text', id: 'circuits-sum', text: `${diff} after the clean prompt: ${a.logitDiff.toFixed(3)}. The parts `
        + `below add up to ${a.total.toFixed(3)}`
        + `${a.constant ? ` (with ${constantWords(a)}, ${signed(a.constant)})` : ''}.` },
      { kind: 'text', id: 'circuits-dla-what', text: 'Below: each head\'s direct share (its output blocks.L.attn.hook_z '
        + `through its rows of W_O, ${a.finalNorm ? 'divided by ln_final.hook_scale, ' : ''}dotted with W_U[answer] − `
        + 'W_U[wrong]), then each '
        + 'layer\'s attention and MLP beside the embeddings. Positive pushes towards the answer.' },
      { kind: 'heatmap', id: 'circuits-dla-heads', cell: 28, palette: 'diverging', title: 'Direct share per head',
        rows: r.L, cols: r.H, values: Float32Array.from(headValues), range: [-extent(headValues), extent(headValues)],
        xTitle: 'head', yTitle: 'layer', xTicks: heads.map((_, h) => String(h)), yTicks: layers.map((_, l) => String(l)),
        xNames: heads, yNames: layers, valueName: 'share',
        cellText: r.L * r.H <= 64 ? headValues.map((x) => x.toFixed(1)) : undefined },
      { kind: 'bars', id: 'circuits-dla-layers', title: 'Direct share per layer',
        values: parts.map((x) => x.value), labels: parts.map((x) => x.label), xTitle: 'hook_embed, hook_attn_out, '
        + 'hook_mlp_out', yTitle: 'share' },
      { kind: 'text', id: 'circuits-patch-sum', text: `${diff}: clean ${p.cleanDiff.toFixed(3)}, corrupted `
        + `${p.corruptDiff.toFixed(3)}. Each cell below: the corrupted run with that one activation copied from the clean `
        + 'run, (patched − corrupted) / (clean − corrupted).' },
    ];
    for (const [name, grid] of Object.entries(p.grids)) {
      const site = PATCH_SITES.find((s) => s.name === name);
      const byHead = grid.cols === 'head';
      const values = grid.values.flat();
      const cols = byHead ? r.H : tokens.length;
      figures.push({ kind: 'heatmap', id: `circuits-patch-${name}`, cell: cols > 24 ? 14 : 24, palette: 'diverging',
        title: `${name} (${grid.hook.replace('{L}', 'L')})`, label: `Patching ${name}: ${site.about} (${grid.hook})`,
        rows: r.L, cols,
        values: Float32Array.from(values), range: [-Math.max(1, extent(values)), Math.max(1, extent(values))],
        xTitle: byHead ? 'head' : 'position (the clean prompt\'s token)', yTitle: 'layer',
        xTicks: byHead ? heads.map((_, h) => String(h)) : tokens, yTicks: layers.map((_, l) => String(l)),
        xNames: byHead ? heads : p.clean.tokens.map((t, i) => `position ${i} ${visibleToken(t)}`), yNames: layers, valueName: 'recovered', recordLabels: true });
    }
    return figures;
  },
};
