// Detect once, load the right build, say what ran. Works in browsers, workers and Node 20.
//   loadAttnLab({build: 'auto' | 'simd-threads' | 'simd' | 'scalar', baseUrl, wasmBinary})
// 'auto' loads the SIMD128 + threads module where this context can share memory between threads
// (crossOriginIsolated: the service worker makes the page so, public/sw.js), else the SIMD128 module if
// the engine validates SIMD, else the scalar one. The threads module is the same bits as the SIMD128
// one: a step's shards are the same whichever thread runs them (core/shard_runner.h).
// Single-file mode (dist/attention-lab.html, scripts/build_single_file.mjs): the file's bootstrap sets
// globalThis.ATTNLAB_INLINE = {modules: {simd, scalar}, wasm: {simd, scalar}} (blob: URLs of the
// Emscripten glue, and the WASM bytes), because nothing can be fetched from a file:// page.
import { wrapModule } from '../wasm_bindings/attnlab.js';

// The smallest module that uses a v128 instruction (as in GoogleChromeLabs/wasm-feature-detect).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function engineSupportsSimd128() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** Whether this context may run the threads module: shared WASM memory needs cross-origin isolation. */
export function contextSharesMemory() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' && !globalThis.ATTNLAB_INLINE;
}

// The builds a loader may be asked for ('auto': the best this context runs), the one list of them.
export const BUILDS = ['auto', 'simd-threads', 'simd', 'scalar'];

export async function loadAttnLab({ build = 'auto', baseUrl, wasmBinary } = {}) {
  if (!BUILDS.includes(build)) {
    throw new Error(`build must be auto, simd-threads, simd or scalar, got '${build}'`);
  }
  const simd = engineSupportsSimd128();
  const threads = simd && contextSharesMemory();
  let chosen = build === 'auto' ? (threads ? 'simd-threads' : simd ? 'simd' : 'scalar') : build;
  let note = build === 'auto' ? (threads ? 'cross-origin isolated, engine validates SIMD128' : simd ? 'engine validates SIMD128' : 'engine lacks SIMD128') : 'forced';
  if (chosen === 'simd-threads' && !threads) {
    chosen = simd ? 'simd' : 'scalar';
    note = 'threads forced, but this context cannot share memory (not cross-origin isolated)';
  }
  if (chosen === 'simd' && !simd) {
    chosen = 'scalar';
    note = 'SIMD128 forced, but this engine does not validate it';
  }
  const inline = globalThis.ATTNLAB_INLINE;
  // A blob: URL has no directory to resolve against, so in single-file mode no URL is formed.
  const base = inline ? null : baseUrl ?? new URL('../', import.meta.url);
  const moduleUrl = inline ? inline.modules[chosen] : new URL(`attnlab-${chosen}.mjs`, base).href;
  const { default: createAttnLabModule } = await import(/* @vite-ignore */ moduleUrl);
  const options = {};
  if (wasmBinary) options.wasmBinary = typeof wasmBinary === 'function' ? await wasmBinary(chosen) : wasmBinary;
  else if (inline) options.wasmBinary = await inline.wasm[chosen]; // the single file inflates it first
  if (inline) options.locateFile = (file) => file; // never fetched: wasmBinary is given
  else if (!options.wasmBinary) options.locateFile = (file) => new URL(file, base).href;
  const mod = await createAttnLabModule(options);
  const lab = wrapModule(mod, { build: chosen });
  lab.simd128Supported = simd;
  lab.buildNote = note;
  return lab;
}
