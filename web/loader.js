// Detect once, load the right build, say what ran. Works in browsers, workers and Node 20.
//   loadAttnLab({build: 'auto' | 'simd' | 'scalar', baseUrl, wasmBinary})
// 'auto' loads the SIMD128 module if the engine validates SIMD, else the scalar one.
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

export async function loadAttnLab({ build = 'auto', baseUrl, wasmBinary } = {}) {
  if (!['auto', 'simd', 'scalar'].includes(build)) {
    throw new Error(`build must be auto, simd or scalar, got '${build}'`);
  }
  const simd = engineSupportsSimd128();
  let chosen = build === 'auto' ? (simd ? 'simd' : 'scalar') : build;
  let note = build === 'auto' ? (simd ? 'engine validates SIMD128' : 'engine lacks SIMD128') : 'forced';
  if (chosen === 'simd' && !simd) {
    chosen = 'scalar';
    note = 'SIMD128 forced, but this engine does not validate it';
  }
  const base = baseUrl ?? new URL('../', import.meta.url);
  const moduleUrl = new URL(`attnlab-${chosen}.mjs`, base);
  const { default: createAttnLabModule } = await import(/* @vite-ignore */ moduleUrl.href);
  const options = {};
  if (wasmBinary) options.wasmBinary = typeof wasmBinary === 'function' ? await wasmBinary(chosen) : wasmBinary;
  else options.locateFile = (file) => new URL(file, base).href;
  const mod = await createAttnLabModule(options);
  const lab = wrapModule(mod, { build: chosen });
  lab.simd128Supported = simd;
  lab.buildNote = note;
  return lab;
}
