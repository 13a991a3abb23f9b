// Node entry: the module's loader under Node 20 would fetch() a file path, so read the binary here.
//   loadAttnLabNode({build: 'auto' | 'simd-threads' | 'simd' | 'scalar'})
// 'auto' picks the Node-only threads build (public/build/node/: SIMD128 + pthreads, a training step's
// two shards on two cores) when it was built and the engine has SIMD128, else loader.js's choice.
// Every build gives the same bits for the same seed and kernel within a build family (the shards are
// split the same way with or without threads); docs/api.md says more.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { BUILDS, loadAttnLab, engineSupportsSimd128 } from './loader.js';
import { wrapModule } from '../wasm_bindings/attnlab.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// ATTNLAB_BUILD_DIR points at another build's output (CMake's ATTNLAB_WASM_OUT).
export const BUILD_DIR = process.env.ATTNLAB_BUILD_DIR ?? path.join(REPO_ROOT, 'public', 'build');
const THREADS_MODULE = path.join(BUILD_DIR, 'node', 'attnlab-simd-threads.js');
// ATTNLAB_BUILD is the build 'auto' loads, for a folder holding one build only: the test module
// (build/wasm/test_kind/attnlab-scalar.*, CMakeLists.txt) runs the CLI's commands that take no --build
// with ATTNLAB_BUILD_DIR=build/wasm/test_kind ATTNLAB_BUILD=scalar (tests/node/decoder_kind_rows.test.mjs).
const AUTO_BUILD = process.env.ATTNLAB_BUILD ?? 'auto';

export async function loadAttnLabNode({ build = 'auto' } = {}) {
  if (build === 'auto' && AUTO_BUILD !== 'auto') {
    if (!BUILDS.includes(AUTO_BUILD)) throw new Error(`ATTNLAB_BUILD must be ${BUILDS.join(', ')}; `
      + `got '${AUTO_BUILD}'`);
    build = AUTO_BUILD;
  }
  if (!BUILDS.includes(build)) throw new Error(`build must be ${BUILDS.join(', ')}; got '${build}'`);
  const threads = existsSync(THREADS_MODULE) && engineSupportsSimd128();
  if (build === 'simd-threads' && !threads) {
    throw new Error(`build simd-threads needs ${path.relative(process.cwd(), THREADS_MODULE)} (bash `
      + 'scripts/build.sh) and SIMD128');
  }
  if (build === 'simd-threads' || (build === 'auto' && threads)) {
    return loadThreadsBuild(build === 'auto' ? 'Node: SIMD128 with threads' : 'forced');
  }
  return loadAttnLab({
    build,
    baseUrl: pathToFileURL(BUILD_DIR + path.sep),
    wasmBinary: (chosen) => readFile(path.join(BUILD_DIR, `attnlab-${chosen}.wasm`)),
  });
}

async function loadThreadsBuild(note) {
  const createAttnLabModule = createRequire(import.meta.url)(THREADS_MODULE);
  const mod = await createAttnLabModule({ wasmBinary: await readFile(THREADS_MODULE.replace(/\.js$/, '.wasm')) });
  mod.unrefThreads();
  const lab = wrapModule(mod, { build: 'simd-threads' });
  lab.simd128Supported = true;
  lab.buildNote = note;
  /** Ends the module's worker threads (the module cannot run a threaded step after this). */
  lab.endThreads = () => mod.endThreads();
  return lab;
}
