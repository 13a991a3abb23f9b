#!/usr/bin/env node
// Activation patching's speed (issue 44, item 6), printed as markdown for docs/benchmarks.md: a GPT-2 in
// gpt2-small's shape (random weights: benchmarks/gpt2_torch.py writes the folder, as for the Writing
// lab's benchmark), a 16-token clean prompt (its seeded ids) and its corrupted twin (one token changed
// in the middle), in the SIMD128 WASM build under Node, one thread. Timed, medians of --runs:
//   one whole pass of the corrupted prompt (Decoder.forward),
//   each grid (the page's and `attnlab patch`'s calls: beginPatching, then patchRow per layer),
// against the bound a cell-per-whole-pass patcher meets (cells x one pass: TransformerLens's patching.py
// runs a whole forward per cell).
// Usage: node benchmarks/patching.mjs [--dir /tmp/attnlab-gpt2] [--tokens 16] [--runs 3] [--sites resid_pre,z]
//        [--build simd|simd-threads] (the Node threads build: one worker beside the main thread, the page's two)
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DIR = arg('--dir', '/tmp/attnlab-gpt2');
const T = Number(arg('--tokens', 16));
const RUNS = Number(arg('--runs', 3));
const SITES = arg('--sites', 'resid_pre,z,pattern,attn_out,mlp_out').split(',');
const BUILD = arg('--build', 'simd');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

if (!existsSync(path.join(DIR, 'model.safetensors'))) {
  const made = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'gpt2_torch.py'), '--out', DIR, '--prompts',
    String(T), '--new', '1'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (made.status !== 0) throw new Error(`gpt2_torch.py failed: ${made.stderr}`);
}
const { loadAttnLabNode } = await import('../web/node_loader.mjs');
const { diskSource } = await import('../web/cli/file_source.mjs');
const module = await loadAttnLabNode({ build: BUILD });
const weights = await diskSource(path.join(DIR, 'model.safetensors'));
const gpt2 = await module.loadCheckpoint('gpt2', { config: readFileSync(path.join(DIR, 'config.json'), 'utf8'),
  size: weights.size, read: weights.read });
const { layers: L, heads: H } = gpt2.config;
const prompts = JSON.parse(readFileSync(path.join(DIR, 'ids.json'), 'utf8')).prompts;
const clean = (prompts[T] ?? prompts[String(T)]).slice(0, T);
const corrupt = clean.slice();
corrupt[T >> 1] = (corrupt[T >> 1] + 1) % 50257;
const [answer, wrong] = [clean[1], clean[2] === clean[1] ? clean[3] : clean[2]];

const pass = [];
for (let r = 0; r < RUNS + 1; r++) {
  const t0 = performance.now();
  gpt2.forward(corrupt, { backend: 'simd128' });
  if (r > 0) pass.push(performance.now() - t0);  // the first warms up
}
const passMs = median(pass);
console.log(`GPT-2 small's shapes (random weights), ${T} tokens, ${BUILD === 'simd' ? 'SIMD128 build, 1 thread' : 'Node threads build, 2 threads'}; `
  + `medians of ${RUNS} runs`);
console.log(`one whole pass: ${passMs.toFixed(1)} ms\n`);
console.log('| grid | cells | ours (s) | cells x one whole pass (s) | ours / that |');
console.log('|---|---|---|---|---|');
for (const site of SITES) {
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    gpt2.beginPatching(clean, corrupt, answer, wrong, { backend: 'simd128' });
    for (let l = 0; l < L; l++) gpt2.patchRow(site, l);
    times.push(performance.now() - t0);
  }
  const cells = L * (site === 'z' || site === 'pattern' ? H : T);
  const bound = (cells + 2) * passMs;  // and the clean and corrupted runs
  console.log(`| ${site} (${L} x ${site === 'z' || site === 'pattern' ? `${H} heads` : `${T} positions`}) | ${cells} | `
    + `${(median(times) / 1000).toFixed(2)} | ${(bound / 1000).toFixed(2)} | ${(median(times) / bound).toFixed(2)} |`);
}
gpt2.delete();
await weights.close?.();
