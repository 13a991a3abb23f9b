// `attnlab translate`: the Translation lab headless. Opens a Marian (opus-mt) checkpoint folder
// (config.json, source.spm, target.spm, vocab.json, model.safetensors or pytorch_model.bin) through the
// page's opener, translates with the page's own code (web/labs/06_translation_sections.js: greedy
// decoding or beam search as generate() does, on a CPU kernel; the attention shown on the lab's
// backend), and prints the source and target pieces and ids, the translation and the cross-attention
// of each generated token (per layer and head); --png writes the page's cross-attention heatmap. Its
// flags are the lab's settings and its command's options (web/labs/06_translation.js, read by
// args.mjs). A folder that cannot be read exits with code 2 and says why.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { reportLines } from './args.mjs';
import { folderSources } from './file_source.mjs';
import { HubError, resolveModelFolder } from './hub.mjs';
import { commandKernel } from './kernel.mjs';
import { BACKEND_LABELS } from '../backends.js';
import { translationLab } from '../labs/06_translation.js';
import { runTranslation, SECTIONS } from '../labs/06_translation_sections.js';
import { writeModelFigure } from './figure.mjs';

export class TranslateInputError extends Error {}

export async function runTranslate(options, module) {
  for (const file of [options.png, options.svg].filter(Boolean)) {
    const dir = await stat(path.dirname(path.resolve(file))).catch(() => null);
    if (!dir?.isDirectory()) throw new TranslateInputError(`${file}: its folder does not exist`);
  }
  let folder;
  try {
    folder = await resolveModelFolder(options.model, { expect: 'marian' });
  } catch (error) {
    if (error instanceof HubError) throw new TranslateInputError(error.message);
    throw error;
  }
  let opened;
  try {
    opened = await translationLab.open.load(module, await folderSources(folder), { name: folder === options.model ? path.basename(path.resolve(folder)) : options.model });
  } catch (error) {
    if (error.name === 'CheckpointError' || error.name === 'AttnLabError') throw new TranslateInputError(error.message);
    throw error;
  }
  const { state } = opened;
  try {
    const kernel = await commandKernel(module, options.backend);
    const ctx = { module, backend: options.backend, opened: state, attention: (args) => kernel.forward(args) };
    // Beams and length as generate() takes them: the checkpoint's config unless a flag says otherwise.
    const c = state.marian.config;
    const values = { ...Object.fromEntries(translationLab.properties.map((p) => [p.name, p.default])), ...options, shown: 0,
      beams: options.given?.has('beams') ? options.beams : Math.min(Math.max(c.numBeams, 1), 16),
      maxLength: options.given?.has('maxLength') ? options.maxLength : Math.min(Math.max(c.maxLength, 2), 512) };
    let r;
    try {
      r = await runTranslation(ctx, values);
    } catch (error) {
      throw new TranslateInputError(error.message);
    }
    if (!options.average && options.layer >= r.L) throw new TranslateInputError(`--layer ${options.layer}: this model's decoder has ${r.L} layers (0..${r.L - 1})`);
    if (!options.average && options.head >= r.H) throw new TranslateInputError(`--head ${options.head}: this model's decoder has ${r.H} heads (0..${r.H - 1})`);
    const S = r.sourcePieces.length;
    const record = {
      source: { text: options.text, pieces: r.sourcePieces, ids: r.sourceIds },
      target: { pieces: r.targetPieces, ids: r.ids.slice(1) },
      translation: r.translation, beams: r.beams, maxLength: values.maxLength, ...(r.beams > 1 ? { score: r.score } : {}),
      backend: { ...r.choice, label: `${BACKEND_LABELS[r.choice.backend]} ran: ${r.choice.reason}` },
      crossAttention: r.cross.map((w) => Array.from({ length: r.L }, (_, l) => Array.from({ length: r.H }, (_, h) => Array.from(w.subarray((l * r.H + h) * S, (l * r.H + h + 1) * S))))),
    };
    const lines = [`source (${S} pieces): ${r.sourcePieces.join(' ')}`, `target (${r.targetPieces.length}): ${r.targetPieces.join(' ')}`,
      `translation: ${r.translation}`,
      `${r.beams === 1 ? 'greedy' : `${r.beams} beams`}, max length ${values.maxLength}${options.given?.has('beams') || options.given?.has('maxLength') ? '' : ' (the checkpoint\'s, as generate() uses them)'}`,
      `attention: ${r.choice.reason}`];
    // The page's cross-attention heatmap: the mean of all layers and heads (notebook 04), or one layer and head.
    const heatmap = SECTIONS.find((s) => s.id === 'cross').figures(r, values).find((f) => f.id === 'cross-heatmap');
    const figures = options.png || options.svg ? await writeModelFigure({ model: heatmap, png: options.png, svg: options.svg }) : [];
    return { record, lines, figures };
  } finally {
    translationLab.open.dispose(state);
  }
}

/** The lab's command (web/labs/06_translation.js: `command`), as web/cli/attnlab.mjs runs it. */
export const command = {
  output: async (options, module) => reportLines(await runTranslate(options, module), options.json),
  InputError: TranslateInputError,
};
