// `attnlab translate`: the Translation lab headless. Opens a Marian (opus-mt) checkpoint folder
// (config.json, source.spm, target.spm, vocab.json, model.safetensors or pytorch_model.bin) through the
// page's opener, translates with the page's own code (web/labs/06_translation_sections.js: greedy
// decoding or beam search as generate() does, on a CPU kernel; the attention shown on the lab's
// backend), and prints the source and target pieces and ids, the translation and the cross-attention
// of each generated token (per layer and head); --png writes the page's cross-attention heatmap. Its
// flags are the lab's settings and its command's options (web/labs/06_translation.js, read by
// args.mjs). A folder that cannot be read exits with code 2 and says why.
import { reportLines } from './args.mjs';
import { openCommandCheckpoint } from './checkpoint_command.mjs';
import { commandKernel } from './kernel.mjs';
import { BACKEND_LABELS } from '../backends.js';
import { translationLab } from '../labs/06_translation.js';
import { defaultValues } from '../shared/properties.js';
import { runTranslation, SECTIONS } from '../labs/06_translation_sections.js';
import { writeModelFigure } from './figure.mjs';

export class TranslateInputError extends Error {}

export async function runTranslate(options, module) {
  const { state, summary } = await openCommandCheckpoint(translationLab, options, module, TranslateInputError);
  try {
    const kernel = await commandKernel(module, options.backend);
    const ctx = { module, backend: options.backend, opened: state, attention: (args) => kernel.forward(args) };
    // Beams and length as generate() takes them: the checkpoint's (the settings its opener says, as the
    // page takes them) unless a flag says otherwise.
    const fromCheckpoint = summary.settings;
    const values = { ...defaultValues(translationLab.properties), ...options, shown: 0,
      beams: options.given?.has('beams') ? options.beams : fromCheckpoint.beams,
      maxLength: options.given?.has('maxLength') ? options.maxLength : fromCheckpoint.maxLength };
    let r;
    try {
      r = await runTranslation(ctx, values);
    } catch (error) {
      throw new TranslateInputError(error.message);
    }
    if (options.crossView === 'one' && options.layer >= r.L) throw new TranslateInputError(`--layer ${options.layer}: `
      + `this model's decoder has ${r.L} layers (0..${r.L - 1})`);
    if (options.crossView === 'one' && options.head >= r.H) throw new TranslateInputError(`--head ${options.head}: `
      + `this model's decoder has ${r.H} heads (0..${r.H - 1})`);
    const S = r.sourcePieces.length;
    const record = {
      source: { text: options.text, pieces: r.sourcePieces, ids: r.sourceIds },
      target: { pieces: r.targetPieces, ids: r.ids.slice(1) },
      translation: r.translation, beams: r.beams, maxLength: values.maxLength,
      ...(r.beams > 1 ? { score: r.score } : {}),
      backend: { ...r.choice, label: `${BACKEND_LABELS[r.choice.backend]} ran: ${r.choice.reason}` },
      // --ablate: the whole model's translation, and (runTranslation's, as the page shows it) the logits
      // at the first token where the two part: position counts generated tokens from 1; on = every head.
      ...(r.ablate ? { ablate: r.ablate,
        before: { pieces: r.before.targetPieces, ids: r.before.ids.slice(1), translation: r.before.translation },
        logit: r.logit } : {}),
      crossAttention: r.cross.map((w) => Array.from({ length: r.L },
        (_, l) => Array.from({ length: r.H },
          (_, h) => Array.from(w.subarray((l * r.H + h) * S, (l * r.H + h + 1) * S))))),
    };
    const lines = [`source (${S} pieces): ${r.sourcePieces.join(' ')}`, `target (${r.targetPieces.length}): `
      + `${r.targetPieces.join(' ')}`,
      `translation: ${r.translation}`,
      ...(r.ablate ? [`heads switched off: ${r.ablate} (cross-attention); with every head: ${r.before.translation}`,
        ...[r.logit.whole, ...(r.logit.off.id !== r.logit.whole.id ? [r.logit.off] : [])].map((t) => `  token ${r.logit.position} ${t.piece}'s logit: `
          + `${t.on.toFixed(3)} -> ${t.off.toFixed(3)} `
          + `(${t.off - t.on >= 0 ? '+' : ''}${(t.off - t.on).toFixed(3)})`)] : []),
      `${r.beams === 1 ? 'greedy' : `${r.beams} beams`}, max length ${values.maxLength}${options.given?.has('beams') || options.given?.has('maxLength') ? '' : ' (the checkpoint\'s, as generate() uses them)'}`,
      `attention: ${r.choice.reason}`];
    // The page's cross-attention heatmap: the last layer's head mean (notebook 04), every layer's, or one
    // layer and head.
    const heatmap = SECTIONS.find((s) => s.id === 'cross').figures(r, values).find((f) => f.id === 'cross-heatmap');
    const figures = options.png || options.svg ? await writeModelFigure({ model: heatmap, png: options.png,
      svg: options.svg }) : [];
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
