// `attnlab pretrained`: the Pretrained lab headless. Opens the same checkpoint folder as the page
// (config.json, vocab.txt, model.safetensors [, tokenizer_config.json]) through the same loader and
// sections (web/labs/05_pretrained*.js), prints the tokens, ids and every layer's per-head attention
// (and the [MASK] predictions when the checkpoint has the head), and writes the page's heatmap of one
// layer and head. A bad folder exits with code 2 and the page's message.
import { reportLines } from './args.mjs';
import { commandKernel } from './kernel.mjs';
import { openCommandCheckpoint } from './checkpoint_command.mjs';
import { pretrainedLab } from '../labs/05_pretrained.js';
import { runModel, SECTIONS } from '../labs/05_pretrained_sections.js';
import { writeModelFigure } from './figure.mjs';

export class CheckpointInputError extends Error {}

const rows = (flat, n, width) => Array.from({ length: n },
  (_, r) => Array.from(flat.subarray(r * width, (r + 1) * width)));

/** -> {record (printed as JSON), lines (printed as text), figures (what was written)} */
export async function runPretrained(options, module) {
  const { state, summary } = await openCommandCheckpoint(pretrainedLab, options, module, CheckpointInputError);
  try {
    const kernel = await commandKernel(module, options.backend);
    const ctx = { module, backend: options.backend, opened: state, attention: (args) => kernel.forward(args) };
    const values = { text: options.text, pair: options.pair, layer: options.layer, head: options.head,
      average: options.average, hideSpecial: options.hideSpecial, token: 1, ablate: options.ablate ?? '' };
    let r;
    try {
      r = await runModel(ctx, values);
    } catch (error) {
      throw new CheckpointInputError(error.message);
    }
    if (options.layer >= r.L) throw new CheckpointInputError(`--layer ${options.layer}: this model has ${r.L} `
      + `layers (0..${r.L - 1})`);
    if (options.head >= r.H) throw new CheckpointInputError(`--head ${options.head}: this model has ${r.H} `
      + `heads (0..${r.H - 1})`);
    const record = {
      model: { name: summary.name, layers: r.L, heads: r.H, summary: summary.text },
      backend: r.choice,
      tokens: r.tokens, ids: r.ids, tokenTypeIds: r.typeIds,
      attentions: r.attentions.map((w) => Array.from({ length: r.H },
        (_, h) => rows(w.subarray(h * r.T * r.T, (h + 1) * r.T * r.T), r.T, r.T))),
      ...(summary.mlm ? { masks: r.predictions.map(({ position, top }, i) => ({ position,
        top: top.map(({ token, id, probability }) => ({ token, id, probability })),
        // --ablate: the whole model's guesses, and its first guess's logit with the heads off.
        ...(r.changes ? { before: r.changes[i].before.map(({ token, id, probability }) => ({ token, id, probability })),
          chosen: r.changes[i].chosen } : {}) })) } : {}),
    };
    if (r.ablate) record.ablate = r.ablate;
    const lines = [`${summary.text}`, `${r.choice.label}`, `tokens (${r.T}): ${r.tokens.join(' ')}`,
      `ids: ${r.ids.join(' ')}`];
    const head = SECTIONS.find((s) => s.id === 'head');
    const heatmap = head.figures(r, values).find((f) => f.id === 'head-heatmap');
    const w = r.attentions[options.layer].subarray(options.head * r.T * r.T, (options.head + 1) * r.T * r.T);
    lines.push(`layer ${options.layer}, head ${options.head}: each query's strongest key`);
    r.tokens.forEach((t, i) => {
      const row = w.subarray(i * r.T, (i + 1) * r.T);
      const j = row.indexOf(Math.max(...row));
      lines.push(`  ${t.padEnd(12)} -> ${r.tokens[j]} (${row[j].toFixed(3)})`);
    });
    if (r.ablate) lines.push(`heads switched off: ${r.ablate}`);
    r.predictions.forEach(({ position, top }, i) => {
      lines.push(`[MASK] at ${position}: `
        + `${top.map((p) => `${p.token} ${(100 * p.probability).toFixed(1)}%`).join(', ')}`);
      if (!r.changes) return;
      const { before, chosen } = r.changes[i];
      lines.push('  with every head: '
        + `${before.map((p) => `${p.token} ${(100 * p.probability).toFixed(1)}%`).join(', ')}`);
      lines.push(`  ${chosen.token}'s logit: ${chosen.logitBefore.toFixed(3)} -> ${chosen.logitAfter.toFixed(3)} `
        + `(${chosen.change >= 0 ? '+' : ''}${chosen.change.toFixed(3)})`);
    });
    const figures = options.png || options.svg ? await writeModelFigure({ model: heatmap, png: options.png,
      svg: options.svg }) : [];
    return { record, lines, figures };
  } finally {
    pretrainedLab.open.dispose(state);
  }
}

/** The lab's command (web/labs/05_pretrained.js: `command`), as web/cli/attnlab.mjs runs it. */
export const command = {
  output: async (options, module) => reportLines(await runPretrained(options, module), options.json),
  InputError: CheckpointInputError,
};
