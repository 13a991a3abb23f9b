// `attnlab attribute` and `attnlab patch`: circuits on a decoder headless (issue 44). Open a decoder
// folder or Hub id with the Writing lab's opener, then web/labs/circuits.js's records (the page's own):
//   attribute  direct logit attribution of logit(--answer) - logit(--wrong) after --text
//   patch      activation patching of --corrupt with --clean's activations, a grid per site of --what
// --cache FILE writes the (clean) run's activations under TransformerLens's hook names, as safetensors
// or JSON by its extension; --png/--svg FILE the page's figures (one figure: FILE; several: FILE-NAME
// beside it, as attribute's FILE-heads.png and FILE-layers.png, patch's FILE-z.png). Their flags are
// the Writing lab's settings (web/labs/07_writing.js's `commands`); a bad pair or answer exits 2 with
// one line.
import { writeFile } from 'node:fs/promises';
import { cpuKernel } from '../backends.js';
import { writingLab } from '../labs/07_writing.js';
import { attributionRecord, cacheJson, cacheTensors, CircuitsInputError, constantWords,
  patchingRecord } from '../labs/circuits.js';
import { writeSafetensors } from '../io/safetensors.js';
import { openCommandCheckpoint } from './checkpoint_command.mjs';
import { attributionFigures, patchingFigures } from '../labs/circuits_figures.js';
import { checkFiles } from './args.mjs';
import { writeSectionFigures } from './figure.mjs';

export class CircuitsCommandError extends Error {}

/** The core's and the record's refusals are the user's (exit 2). */
async function asInput(run) {
  try {
    return await run();
  } catch (error) {
    if (error instanceof CircuitsInputError || error.name === 'AttnLabError') throw new CircuitsCommandError(error.message);
    throw error;
  }
}

/** --cache's format from its name, checked before the model runs. */
function cacheFormat(file) {
  if (/\.safetensors$/i.test(file)) return 'safetensors';
  if (/\.json$/i.test(file)) return 'json';
  throw new CircuitsCommandError(`--cache ${file}: name the file .safetensors or .json (the format it is written in)`);
}

async function writeCache(file, cache) {
  if (cacheFormat(file) === 'safetensors') await writeFile(file, writeSafetensors(cacheTensors(cache), { format: 'pt' }));
  else await writeFile(file, `${JSON.stringify(cacheJson(cache))}\n`);
  return `cache: ${cache.length} activations written to ${file}`;
}

const fixed = (x, width = 9) => x.toFixed(4).padStart(width);

/** The outputs (--cache's format, --png's and --svg's folders) checked before the model is read. */
function checkOutputs(values) {
  if (values.cache) cacheFormat(values.cache);
  checkFiles({ png: values.png, svg: values.svg });
}

/** --png/--svg: the figures the page draws (each with its name for FILE-NAME) -> the lines saying what was written. */
async function writeFigures(values, named) {
  if (!values.png && !values.svg) return [];
  return writeSectionFigures(named, { png: values.png, svg: values.svg });
}

const byId = (figures, id) => figures.find((f) => f.id === id);

/** `attnlab attribute`: its lines (--json: the record on one line, then a {"cache"} line with --cache). */
export async function runAttribute(values, module) {
  checkOutputs(values);
  const { state } = await openCommandCheckpoint(writingLab, values, module, CircuitsCommandError);
  const { model, tokenizer } = state;
  try {
    const backend = cpuKernel(values.backend, module.cpuBackends);
    const r = await asInput(() => attributionRecord(model, tokenizer, values.text, values.answer, values.wrong,
      { backend }));
    const lines = [];
    if (values.json) lines.push(JSON.stringify(r));
    else {
      const { heads, mlp, attnBias } = r;
      lines.push(`prompt (${r.prompt.ids.length} tokens): ${r.prompt.tokens.map((t) => JSON.stringify(t)).join(' ')}`,
        `logit(${JSON.stringify(r.answer.text)}) - logit(${JSON.stringify(r.wrong.text)}) = ${r.logitDiff.toFixed(4)}; `
          + `the parts below add up to ${r.total.toFixed(4)}`,
        `embeddings ${r.embed.toFixed(4)}${r.posEmbed !== 0 ? `, positions ${r.posEmbed.toFixed(4)}` : ''}, `
          + `${constantWords(r)} ${r.constant.toFixed(4)}`,
        `layer  ${heads[0].map((_, h) => `head ${h}`.padStart(9)).join('')}  attn bias       mlp`);
      heads.forEach((row, l) => lines.push(`${String(l).padStart(5)}  ${row.map((x) => fixed(x)).join('')}  `
        + `${fixed(attnBias[l])} ${fixed(mlp[l])}`));
    }
    if (values.cache) {
      const cache = model.capture(r.prompt.ids, { backend });
      const line = await writeCache(values.cache, cache);
      lines.push(values.json ? JSON.stringify({ cache: values.cache, activations: cache.length }) : line);
    }
    const figures = attributionFigures(r, model.config);
    const written = await writeFigures(values, [{ name: 'heads', figure: byId(figures, 'circuits-dla-heads') },
      { name: 'layers', figure: byId(figures, 'circuits-dla-layers') }]);
    lines.push(...(values.json ? written.map((line) => JSON.stringify({ figure: line })) : written));
    return lines;
  } finally {
    model.delete();
  }
}

/** `attnlab patch`: its lines (--json: the record on one line). */
export async function runPatch(values, module) {
  checkOutputs(values);
  const { state } = await openCommandCheckpoint(writingLab, values, module, CircuitsCommandError);
  const { model, tokenizer } = state;
  try {
    const backend = cpuKernel(values.backend, module.cpuBackends);
    const r = await asInput(() => patchingRecord(model, tokenizer, values.clean, values.corrupt, values.answer,
      values.wrong, { sites: values.what, backend, keepCache: Boolean(values.cache) }));
    const { cache, ...record } = r;
    const lines = [];
    if (values.json) lines.push(JSON.stringify(record));
    else {
      lines.push(`clean (${r.clean.ids.length} tokens): ${r.clean.tokens.map((t) => JSON.stringify(t)).join(' ')}`,
        `corrupted: ${r.corrupt.tokens.map((t) => JSON.stringify(t)).join(' ')}`,
        `logit(${JSON.stringify(r.answer.text)}) - logit(${JSON.stringify(r.wrong.text)}): clean ${r.cleanDiff.toFixed(4)}, `
          + `corrupted ${r.corruptDiff.toFixed(4)}; each cell (patched - corrupted) / (clean - corrupted)`);
      for (const [name, grid] of Object.entries(r.grids)) {
        lines.push('', `${name} (${grid.hook}), layer x ${grid.cols}:`);
        grid.values.forEach((row, l) => lines.push(`${String(l).padStart(5)}  ${row.map((x) => fixed(x, 8)).join('')}`));
      }
    }
    if (values.cache) {
      const line = await writeCache(values.cache, cache);
      lines.push(values.json ? JSON.stringify({ cache: values.cache, activations: cache.length }) : line);
    }
    const grids = patchingFigures(r, model.config).filter((f) => f.kind === 'heatmap');
    const written = await writeFigures(values, grids.map((figure) => ({ name: figure.id.replace('circuits-patch-', ''),
      figure })));
    lines.push(...(values.json ? written.map((line) => JSON.stringify({ figure: line })) : written));
    return lines;
  } finally {
    model.delete();
  }
}

/** The lab's commands (web/labs/07_writing.js: `commands`), as web/cli/attnlab.mjs runs them. */
export const commands = {
  attribute: { output: runAttribute, InputError: CircuitsCommandError },
  patch: { output: runPatch, InputError: CircuitsCommandError },
};
