// `attnlab translate`: the Translation lab headless. Opens a Marian (opus-mt) checkpoint folder
// (config.json, source.spm, target.spm, vocab.json, model.safetensors or pytorch_model.bin), translates
// the text with greedy decoding or beam search as generate() does, and prints the source and target
// pieces and ids, the translation and the cross-attention of each generated token (per layer and head); --png writes
// the cross-attention heatmap (source x generated tokens, the heads and layers averaged, as notebook 04
// draws it). A folder that cannot be read exits with code 2 and says why.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { reportLines, shown, UsageError } from './args.mjs';
import { folderSources } from './file_source.mjs';
import { openMarianCheckpoint } from '../pretrained/marian_checkpoint.js';
import { writeModelFigure } from './figure.mjs';

export class TranslateInputError extends Error {}

export const TRANSLATE_USAGE = [
  'usage: attnlab translate --model DIR --text "..." [--beams N] [--max-length N] [--json] [--png FILE] [--svg FILE]',
  '                         [--backend simd|scalar]',
  '',
  'Opens a Marian (opus-mt) checkpoint folder (config.json, source.spm, target.spm, vocab.json, and model.safetensors',
  'or pytorch_model.bin: model.safetensors when there are both), translates the text (greedy with --beams 1; the',
  'config\'s num_beams by default), and prints the source and target pieces and ids, the translation, and each',
  'generated token\'s cross-attention [layer][head][source].',
  '--png/--svg write the cross-attention heatmap (generated tokens x source tokens, layers and heads averaged).',
  'A folder that cannot be read exits with code 2 and says why.',
].join('\n');

const FLAGS = { '--model': 'string', '--text': 'string', '--png': 'string', '--svg': 'string', '--backend': 'string',
  '--beams': 'int', '--max-length': 'int', '--json': 'bool' };

export function parseTranslateArgs(rest) {
  const out = { backend: 'simd', json: false };
  for (let i = 0; i < rest.length; i++) {
    const [name, inline] = rest[i].split(/=(.*)/s, 2);
    const kind = FLAGS[name];
    if (!kind) throw new UsageError(`unknown flag ${shown(name)} for attnlab translate`);
    const key = name.slice(2).replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (kind === 'bool') {
      out[key] = true;
      continue;
    }
    const raw = inline ?? rest[++i];
    if (raw === undefined || (inline === undefined && raw.startsWith('--'))) throw new UsageError(`${name} needs a value`);
    if (kind === 'int') {
      if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > 8192) throw new UsageError(`${name} must be a whole number in [1, 8192], got ${shown(raw)}`);
      out[key] = Number(raw);
    } else {
      out[key] = raw;
    }
  }
  if (!out.model) throw new UsageError('--model DIR is required: the checkpoint folder');
  if (out.text === undefined) throw new UsageError('--text is required: the sentence to translate');
  if (!['simd', 'scalar'].includes(out.backend)) throw new UsageError(`--backend must be simd or scalar, got ${shown(out.backend)}`);
  return out;
}

export async function runTranslate(options, module) {
  const info = await stat(options.model).catch(() => null);
  if (!info?.isDirectory()) throw new TranslateInputError(`--model ${options.model}: not a folder (give the checkpoint's folder)`);
  for (const file of [options.png, options.svg].filter(Boolean)) {
    const dir = await stat(path.dirname(path.resolve(file))).catch(() => null);
    if (!dir?.isDirectory()) throw new TranslateInputError(`${file}: its folder does not exist`);
  }
  let opened;
  try {
    opened = await openMarianCheckpoint(module, await folderSources(options.model));
  } catch (error) {
    if (error.name === 'CheckpointError' || error.name === 'AttnLabError') throw new TranslateInputError(error.message);
    throw error;
  }
  const { marian, tokenizer } = opened;
  try {
    const c = marian.config;
    const backend = options.backend === 'simd' ? 'simd128' : 'scalar';
    const source = tokenizer.encode(options.text);
    const beams = options.beams ?? c.numBeams;
    const maxLength = options.maxLength ?? c.maxLength;
    let g;
    try {
      marian.encode(source.ids, { backend });
      g = marian.generate({ beams, maxLength, backend });
    } catch (error) {
      throw new TranslateInputError(error.message);
    }
    const S = source.ids.length, L = c.decoderLayers, H = c.decoderHeads;
    const target = g.ids.slice(1).map((id) => tokenizer.idToToken(id));
    const translation = tokenizer.decode(g.ids);
    const cross = g.cross.map((w) => Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => Array.from(w.subarray((l * H + h) * S, (l * H + h + 1) * S)))));
    const record = {
      source: { text: options.text, pieces: source.pieces, ids: Array.from(source.ids) },
      target: { pieces: target, ids: g.ids.slice(1) },
      translation, beams, ...(beams > 1 ? { score: g.score } : {}), crossAttention: cross,
    };
    // The heatmap of notebook 04: each generated token's cross-attention, the layers and heads averaged.
    const T = g.cross.length;
    const mean = new Float32Array(T * S);
    g.cross.forEach((w, t) => { for (let i = 0; i < L * H * S; i++) mean[t * S + (i % S)] += w[i] / (L * H); });
    const lines = [`source (${S} pieces): ${source.pieces.join(' ')}`, `target (${T}): ${target.join(' ')}`, `translation: ${translation}`];
    const figures = options.png || options.svg ? await writeModelFigure({
      model: { title: `Cross-attention (layers and heads averaged): "${translation.length > 40 ? `${translation.slice(0, 40)}…` : translation}"`, rows: T, cols: S, values: mean,
        range: [0, Math.max(1e-6, ...mean)], xTitle: 'source token', yTitle: 'generated token', xTicks: source.pieces, yTicks: target, cell: 20 },
      png: options.png, svg: options.svg,
    }) : [];
    return { record, lines, figures };
  } finally {
    marian.delete();
  }
}

/** The lab's command (web/labs/06_translation.js: `command`), as web/cli/attnlab.mjs runs it. */
export const command = {
  usage: TRANSLATE_USAGE,
  parse: parseTranslateArgs,
  output: async (options, module) => reportLines(await runTranslate(options, module), options.json),
  InputError: TranslateInputError,
};
