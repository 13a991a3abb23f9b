#!/usr/bin/env node
// The Count lab's speed (issue 11), printed as markdown for docs/count.md: training steps/s of the course
// model (notebook 05: batch 100, Adam lr 1e-4) in the WASM modules under Node (the browsers' SIMD128 build,
// the Node threads build, the scalar build), natively (benchmarks/count_native.cpp, when built), and
// PyTorch 1.13 in the same run (benchmarks/count_torch.py, 1 and 2 threads, OMP_WAIT_POLICY=passive).
// Cells are medians of --runs runs of --steps steps, each after 20 warm-up steps; runs are interleaved so
// that machine noise hits every side alike.
// Usage: node benchmarks/count.mjs [--runs 5] [--steps 2000] [--no-torch]
//   (build the native program first: cmake --build build/native --target count_native)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { loadAttnLabNode, REPO_ROOT } from '../web/node_loader.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 5));
const STEPS = Number(arg('--steps', 2000));
const WITH_TORCH = !process.argv.includes('--no-torch');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const NATIVE = path.join(REPO_ROOT, 'build', 'native', 'count_native');

function oursStepsPerSecond(lab, backend) {
  const trainer = lab.createTrainer('count', { seed: 0 });
  trainer.train(20, { backend }); // warm up
  const t0 = performance.now();
  trainer.train(STEPS, { backend });
  const rate = STEPS / ((performance.now() - t0) / 1000);
  trainer.delete();
  return rate;
}

function nativeStepsPerSecond(threads) {
  const r = spawnSync(NATIVE, ['speed', '--runs', '1', '--steps', String(STEPS), '--threads', String(threads)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`count_native failed: ${r.stderr}`);
  return Number(/([0-9.]+) steps\/s/.exec(r.stdout)[1]);
}

function torchStepsPerSecond() {
  const r = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'count_torch.py'), 'speed',
    '--threads', '1,2', '--steps', String(STEPS)], {
    encoding: 'utf8', env: { ...process.env, OMP_WAIT_POLICY: 'passive' }, timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`PyTorch benchmark failed: ${(r.stderr ?? String(r.error)).slice(-500)}`);
  return r.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

const labs = {};
for (const build of ['simd', 'simd-threads', 'scalar']) labs[build] = await loadAttnLabNode({ build });
const rows = {
  'WASM SIMD128 build, simd128 kernel': [],
  'WASM Node threads build (2 shards on 2 threads), simd128 kernel': [],
  'WASM scalar build, scalar kernel': [],
};
const native = existsSync(NATIVE) ? { 1: [], 2: [] } : null;
const torch = { 1: [], 2: [] };
for (let run = 0; run < RUNS; run++) {
  rows['WASM SIMD128 build, simd128 kernel'].push(oursStepsPerSecond(labs.simd, 'simd128'));
  rows['WASM Node threads build (2 shards on 2 threads), simd128 kernel'].push(oursStepsPerSecond(labs['simd-threads'], 'simd128'));
  rows['WASM scalar build, scalar kernel'].push(oursStepsPerSecond(labs.scalar, 'scalar'));
  if (native) for (const threads of [1, 2]) native[threads].push(nativeStepsPerSecond(threads));
  if (WITH_TORCH) for (const r of torchStepsPerSecond()) torch[r.threads].push(r.steps_per_s);
}

console.log('# Count lab benchmark\n');
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; module ${labs.simd.version}`);
console.log(`training steps/s, batch 100, median of ${RUNS} runs of ${STEPS} steps\n`);
console.log('| what | steps/s |\n|---|---|');
for (const [name, rates] of Object.entries(rows)) console.log(`| ${name} | ${median(rates).toFixed(0)} |`);
if (native) {
  console.log(`| native (g++ -O2, GCC vector extensions), simd128 kernel, 1 thread | ${median(native[1]).toFixed(0)} |`);
  console.log(`| native, 2 shards on 2 threads | ${median(native[2]).toFixed(0)} |`);
}
if (WITH_TORCH) {
  for (const threads of [1, 2]) console.log(`| PyTorch 1.13, ${threads} thread${threads > 1 ? 's' : ''} | ${median(torch[threads]).toFixed(0)} |`);
  const best = Math.max(median(torch[1]), median(torch[2]));
  console.log(`\nWASM SIMD128 / PyTorch (best thread count): ${(median(rows['WASM SIMD128 build, simd128 kernel']) / best).toFixed(1)}x`);
}
for (const lab of Object.values(labs)) lab.shutdown?.();
process.exit(0);
