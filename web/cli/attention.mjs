// `attnlab attention`: scaled dot-product attention on the user's own matrices, for autograding (a
// course checks a student's implementation against the lab's kernel). Each file is a JSON array of
// rows: q [T][D], k [S][D], v [S][Dv]; a mask file [T][S] of 0 (blocked) and 1 (allowed), or
// `causal`. Prints {"weights": [T][S], "output": [T][Dv], "backend": {backend, label, reason}}; the
// scale defaults to 1/sqrt(D). Its flags are declared in web/labs/04_scaled.js (`command`), the
// backend as the page's setting, and read by args.mjs.
//
// The kernel takes one width for q, k and v; when Dv != D the narrower side is zero-padded, which
// changes no dot product and no weighted sum, and the padding is dropped from the output.
import { readFile } from 'node:fs/promises';
import { shown } from './flags.mjs';
import { commandKernel } from './kernel.mjs';

const MAX_CELLS = 4_000_000; // 16 MB of floats per matrix: far beyond a hand-made example

export class InputError extends Error {}

/** text of `file` (its flag) -> rows x cols numbers, or throws an InputError naming file, row and column. */
export function parseMatrix(text, file, what) {
  let rows;
  try {
    rows = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${file}: not JSON (${error.message})`);
  }
  if (!Array.isArray(rows) || rows.length === 0) throw new InputError(`${file}: ${what} must be a non-empty `
    + 'JSON array of rows');
  const cols = Array.isArray(rows[0]) ? rows[0].length : -1;
  if (cols < 1) throw new InputError(`${file}: row 0 must be a non-empty array of numbers`);
  if (rows.length * cols > MAX_CELLS) throw new InputError(`${file}: ${rows.length} x ${cols} is more than `
    + `${MAX_CELLS} cells`);
  const out = new Float32Array(rows.length * cols);
  rows.forEach((row, r) => {
    if (!Array.isArray(row)) throw new InputError(`${file}: row ${r} must be an array of numbers`);
    if (row.length !== cols) throw new InputError(`${file}: row ${r} has ${row.length} columns; row 0 has ${cols}`);
    row.forEach((x, c) => {
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new InputError(`${file}: row ${r}, column ${c} must be a `
        + `finite number, got ${shown(JSON.stringify(x))}`);
      if (Math.abs(x) > 1e6) throw new InputError(`${file}: row ${r}, column ${c} is ${x}: the kernel `
        + 'takes |x| <= 1e6');
      out[r * cols + c] = x;
    });
  });
  return { rows: rows.length, cols, data: out };
}

const padColumns = (m, width) => {
  if (m.cols === width) return m.data;
  const out = new Float32Array(m.rows * width);
  for (let r = 0; r < m.rows; r++) out.set(m.data.subarray(r * m.cols, (r + 1) * m.cols), r * width);
  return out;
};

/**
 * -> {weights: [T][S], output: [T][Dv], backend: the kernel's choice} (plain arrays); throws InputError
 * on a shape mismatch. kernel: a KernelRunner (kernel.mjs).
 */
export async function attentionOnFiles({ kernel, q, k, v, mask, scale, names }) {
  if (k.cols !== q.cols) throw new InputError(`${names.k}: keys have ${k.cols} columns, the queries (${names.q}) `
    + `${q.cols}: they must match (D)`);
  if (v.rows !== k.rows) throw new InputError(`${names.v}: values have ${v.rows} rows, the keys (${names.k}) `
    + `${k.rows}: they must match (S)`);
  const T = q.rows, S = k.rows, D = q.cols, Dv = v.cols, W = Math.max(D, Dv);
  let additive;
  if (mask === 'causal') {
    if (T !== S) throw new InputError(`--mask causal needs as many queries as keys (T = S), got T = ${T}, S = ${S}`);
    additive = new Float32Array(T * S);
    for (let t = 0; t < T; t++) for (let s = t + 1; s < S; s++) additive[t * S + s] = -Infinity;
  } else if (mask) {
    if (mask.rows !== T || mask.cols !== S) throw new InputError(`${names.mask}: the mask is ${mask.rows} x `
      + `${mask.cols}; it must be T x S = ${T} x ${S}`);
    additive = new Float32Array(T * S);
    mask.data.forEach((x, i) => {
      if (x !== 0 && x !== 1) throw new InputError(`${names.mask}: row ${Math.floor(i / S)}, column ${i % S} must be `
        + `0 or 1, got ${x}`);
      additive[i] = x === 1 ? 0 : -Infinity;
    });
  }
  const args = { B: 1, H: 1, T, S, D: W, q: padColumns(q, W), k: padColumns(k, W), v: padColumns(v, W),
    ...(additive ? { mask: additive } : {}), scale: scale ?? 1 / Math.sqrt(D) };
  const { weights, out, choice } = await kernel.forward(args);
  const rowsOf = (data, n, width, keep) => Array.from({ length: n },
    (_, r) => Array.from(data.subarray(r * width, r * width + keep)));
  return { weights: rowsOf(weights, T, S, S), output: rowsOf(out, T, W, Dv), backend: choice };
}

/** Reads the files and runs: -> {weights, output}. Files are named as the user typed them. */
export async function runAttention(args, module) {
  const read = async (flag, file) => {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      // --mask takes a file or the word causal: a missing file whose name is near that word was meant as it.
      const meant = flag === 'mask' && error.code === 'ENOENT' && /^c[a-z]{3,7}l$/i.test(file) && file !== 'causal';
      throw new InputError(`--${flag} ${shown(file, { tail: true })}: `
        + `${error.code === 'ENOENT' ? `no such file${meant ? ' (for the causal mask, write --mask causal)' : ''}`
          : error.message}`);
    }
  };
  const names = Object.fromEntries(['q', 'k', 'v', 'mask'].map((f) => [f, shown(args[f] ?? '', { tail: true })]));
  const matrix = async (f, what) => parseMatrix(await read(f, args[f]), names[f], what);
  const q = await matrix('q', 'the queries [T][D]');
  const k = await matrix('k', 'the keys [S][D]');
  const v = await matrix('v', 'the values [S][Dv]');
  const mask = args.mask === undefined ? null : args.mask === 'causal' ? 'causal' : await matrix('mask',
    'the mask [T][S]');
  const kernel = await commandKernel(module, args.backend);
  return attentionOnFiles({ kernel, q, k, v, mask, scale: args.scale, names });
}

/** The lab's command (web/labs/04_scaled.js: `command`), as web/cli/attnlab.mjs runs it. */
export const command = {
  output: async (args, module) => [JSON.stringify(await runAttention(args, module))],
  InputError,
};
