// Shared by the Node tests: load both WASM builds, read fixtures, compare arrays.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { loadAttnLabNode, REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

export const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures');
export const BUILDS = ['simd', 'scalar', 'simd-threads'];

const labs = {};
export async function lab(build = 'simd') {
  labs[build] ??= await loadAttnLabNode({ build });
  return labs[build];
}

export function fixture(name) {
  return parseSafetensors(readFileSync(path.join(FIXTURES, name))).tensors;
}

export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, `lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export function assertClose(actual, expected, tolerance, what) {
  const diff = maxAbsDiff(actual, expected);
  assert.ok(diff <= tolerance, `${what}: max abs diff ${diff} > ${tolerance}`);
}

export function randomArray(n, rng, scale = 1) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = scale * rng.normal();
  return out;
}

/**
 * The page's WebGPU attention kernel in Node (Dawn through the npm webgpu package; SwiftShader without a
 * GPU), with the WGSL modules generated first; fails the test, with the reason, where there is none.
 * Call destroy() on it when done.
 */
export async function nodeWebGpuAttention() {
  const { generateShaders } = await import('../../scripts/gen_shaders.mjs');
  generateShaders();
  const { nodeGpu } = await import('../../web/webgpu/node_gpu.mjs');
  const { WebGpuAttention } = await import('../../web/webgpu/attention_webgpu.js');
  const { gpu, reason } = await nodeGpu();
  assert.ok(gpu, `WebGPU unavailable in Node: ${reason}`);
  const made = await WebGpuAttention.create({ gpu });
  assert.ok(made.attention, `no WebGPU attention: ${made.reason}`);
  return made.attention;
}

/** CRC-32 (ISO-HDLC, zlib's crc32()) of bytes: the tests repair or check a ZIP entry's checksum with it
 *  (Node 18, which a fresh Debian has, lacks zlib.crc32). */
export function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/**
 * A checkpoint's sources opened for a lab (its id) by the one opener (web/models/registry.js) -> what it
 * opened: {model, tokenizer, summary, files, options (BERT's tokenizer notes)}.
 */
export async function openFolder(module, sources, lab, options = {}) {
  const { openCheckpoint } = await import('../../web/models/registry.js');
  return (await openCheckpoint(module, sources, { lab, ...options })).opened;
}

/** A kind's files picked among `sources` as the opener picks them ({picked, weights}), or its CheckpointError. */
export async function pickFiles(kind, sources) {
  const { MODEL_KINDS, pickKindFiles } = await import('../../web/models/registry.js');
  const { filesByName } = await import('../../web/models/checkpoint_files.js');
  return pickKindFiles(MODEL_KINDS.find((k) => k.kind === kind), filesByName(sources));
}

/**
 * A PyTorch fixture whose metadata holds `{name}.f32_vs_f64` for each float tensor (the circuits
 * generators'): {file, torch(name) -> values, tolerance(name) -> max(1e-5, twice PyTorch's own float32
 * error), close(name, ours): ours (nested arrays or a number) against PyTorch's, within that tolerance}.
 */
export function torchReference(name) {
  const file = parseSafetensors(readFileSync(path.join(FIXTURES, name)));
  const torch = (key) => file.tensors[key].data;
  const tolerance = (key) => Math.max(1e-5, 2 * Number(file.metadata[`${key}.f32_vs_f64`] ?? 0));
  function close(key, ours) {
    const want = torch(key);
    const flat = [ours].flat(3);
    assert.equal(flat.length, want.length, `${key}: ${flat.length} values, PyTorch's ${want.length}`);
    let worst = 0;
    flat.forEach((x, i) => { worst = Math.max(worst, Math.abs(x - want[i])); });
    assert.ok(worst <= tolerance(key), `${key}: max |ours - torch| = ${worst} > ${tolerance(key)}`);
  }
  return { file, torch, tolerance, close };
}
