// The Writing lab's Circuits section (issue 44): on the opened decoder, which heads and layers carry the
// answer of a prompt pair. Direct logit attribution splits logit(answer) - logit(wrong) of the clean
// prompt into what each head, layer bias, MLP and the embeddings wrote (a layers x heads grid, and bars
// per layer beside the embeddings); activation patching runs the corrupted prompt with one activation
// of the clean run put in its place (a grid per site, tokens or heads on the x axis). The numbers are
// web/labs/circuits.js's records, the CLI's own (`attnlab attribute`, `attnlab patch`), drawn as
// circuits_figures.js draws them. No DOM here.
import { downloadStem, pageCircuits } from './circuits.js';
import { cacheFigures, circuitsFigures } from './circuits_figures.js';
import { cpuKernel } from '../backends.js';

const cpuOf = (ctx) => cpuKernel(ctx.backend, ctx.module?.cpuBackends);

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
      opened.circuits = { key, ...await pageCircuits(model, tokenizer, v, { sites: v.what, backend }) };
    }
    return { stem: downloadStem(opened.exportName ?? opened.name ?? 'model'), ...opened.circuits };
  },
  figures(r) {
    if (r.off) {
      return [{ kind: 'text', id: 'circuits-off', text: 'Tick Find the circuit to split the clean prompt\'s answer '
        + 'into its parts and patch the corrupted run (a pass of the model per grid cell).' }];
    }
    return [...circuitsFigures(r), ...cacheFigures(r)];
  },
};
