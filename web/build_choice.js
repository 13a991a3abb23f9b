// Which WASM build this context runs, the one rule for it (web/loader.js loads it), and the early start
// of its download: this file imports nothing, so the worker's first module (web/worker_start.js) can
// start the WASM before the rest of the worker's code has arrived.
// 'auto' is the SIMD128 + threads module where this context can share memory between threads
// (crossOriginIsolated: the service worker makes the page so, public/sw.js), else the SIMD128 module if
// the engine validates SIMD, else the scalar one.

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

/** The build `build` resolves to in this context, and why: the one rule, for loading and for prefetching. */
export function chooseBuild(build = 'auto') {
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
  return { chosen, note, simd };
}

// What prefetchBuild started, by build: the glue's import and the WASM's compile. A module that aborts
// and is loaded again (web/worker.js's recovery) instantiates the same compiled WASM.
const prefetched = new Map();

/** What prefetchBuild started for `chosen`, if it did (web/loader.js); kept for a later load too. */
export function prefetchedBuild(chosen) {
  return prefetched.get(chosen);
}

/** The files of a build, beside each other in public/build/: the Emscripten glue and its WASM. */
export function buildFiles(chosen) {
  return { glue: `attnlab-${chosen}.mjs`, wasm: `attnlab-${chosen}.wasm` };
}

/**
 * Starts loading the build `build` resolves to, at once: the Emscripten glue and the WASM's streaming
 * compile, side by side rather than the glue first and its fetch of the WASM after it. The worker calls
 * it on its first line (web/worker_start.js), before the page's 'init' arrives; loadAttnLab picks it up.
 * Nothing to do in single-file mode (the bytes are inline) or without fetch (Node passes wasmBinary).
 */
export function prefetchBuild(build = 'auto') {
  if (globalThis.ATTNLAB_INLINE || typeof fetch !== 'function' || typeof WebAssembly?.compileStreaming !== 'function') return;
  const { chosen } = chooseBuild(build);
  if (prefetched.has(chosen)) return;
  const base = new URL('../', import.meta.url);
  const files = buildFiles(chosen);
  const glue = import(/* @vite-ignore */ new URL(files.glue, base).href);
  // A host that sends .wasm with another type makes compileStreaming refuse it: compile the bytes then.
  const wasm = fetch(new URL(files.wasm, base), { credentials: 'same-origin' }).then((response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.headers.get('content-type')?.startsWith('application/wasm')
      ? WebAssembly.compileStreaming(response) : response.arrayBuffer().then((bytes) => WebAssembly.compile(bytes));
  });
  glue.catch(() => {}); // loadAttnLab reports a failure, by loading the usual way
  wasm.catch(() => {});
  prefetched.set(chosen, { glue, wasm });
}
