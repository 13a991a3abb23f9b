// Node entry: the module's loader under Node 20 would fetch() a file path, so read the binary here.
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { loadAttnLab } from './loader.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// ATTNLAB_BUILD_DIR points at another build's output (CMake's ATTNLAB_WASM_OUT).
export const BUILD_DIR = process.env.ATTNLAB_BUILD_DIR ?? path.join(REPO_ROOT, 'public', 'build');

export async function loadAttnLabNode({ build = 'auto' } = {}) {
  return loadAttnLab({
    build,
    baseUrl: pathToFileURL(BUILD_DIR + path.sep),
    wasmBinary: (chosen) => readFile(path.join(BUILD_DIR, `attnlab-${chosen}.wasm`)),
  });
}
