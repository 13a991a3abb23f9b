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
import { buildFiles, chooseBuild, prefetchedBuild } from './build_choice.js';

export { BUILDS, chooseBuild, contextSharesMemory, engineSupportsSimd128, prefetchBuild } from './build_choice.js';

export async function loadAttnLab({ build = 'auto', baseUrl, wasmBinary } = {}) {
  const { chosen, note, simd } = chooseBuild(build);
  const inline = globalThis.ATTNLAB_INLINE;
  // A blob: URL has no directory to resolve against, so in single-file mode no URL is formed.
  const base = inline ? null : baseUrl ?? new URL('../', import.meta.url);
  const moduleUrl = inline ? inline.modules[chosen] : new URL(buildFiles(chosen).glue, base).href;
  // Prefetched only from this file's own base: a caller that names another (tests) loads from there.
  const early = !baseUrl && !wasmBinary ? prefetchedBuild(chosen) : undefined;
  const glue = (early && await early.glue.catch(() => null)) || await import(/* @vite-ignore */ moduleUrl);
  const createAttnLabModule = glue.default;
  const options = {};
  if (wasmBinary) options.wasmBinary = typeof wasmBinary === 'function' ? await wasmBinary(chosen) : wasmBinary;
  else if (inline) options.wasmBinary = await inline.wasm[chosen]; // the single file inflates it first
  if (inline) options.locateFile = (file) => file; // never fetched: wasmBinary is given
  else if (!options.wasmBinary) options.locateFile = (file) => new URL(file, base).href;
  const compiled = early ? await early.wasm.catch(() => null) : null;
  let failed = null; // an instantiation that fails rejects the load, rather than leave it waiting
  if (compiled) {
    failed = new Promise((resolve, reject) => {
      // Emscripten's hook for a module compiled elsewhere: instantiate it with the glue's imports. The
      // threads build hands the same compiled module to its pthreads.
      options.instantiateWasm = (imports, receiveInstance) => {
        WebAssembly.instantiate(compiled, imports).then((instance) => receiveInstance(instance, compiled), reject);
        return {};
      };
    });
  }
  const mod = await (failed ? Promise.race([createAttnLabModule(options), failed]) : createAttnLabModule(options));
  const lab = wrapModule(mod, { build: chosen });
  lab.simd128Supported = simd;
  lab.buildNote = note;
  return lab;
}
