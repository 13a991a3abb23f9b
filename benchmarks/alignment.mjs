#!/usr/bin/env node
// The Alignment lab's figures (issue 4), printed as markdown for docs/benchmarks.md:
//   1. speed: training steps/s of the copy task in the WASM modules under Node (the Node threads build
//      with its worker thread on and off, the browsers' SIMD128 and scalar builds), beside PyTorch
//      1.13 + OpenBLAS running the notebook's code in the same run (1 and 2 threads; the best counts);
//   2. fidelity: accuracy on 1,024 fresh samples and attention pattern mass, seeds 0..4, every task.
// Usage: node benchmarks/alignment.mjs [--runs 3] [--seeds 0,1,2,3,4] [--no-torch]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import os from 'node:os';
import { loadAttnLabNode, REPO_ROOT } from '../web/node_loader.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 3));
const SEEDS = arg('--seeds', '0,1,2,3,4').split(',').map(Number);
const WITH_TORCH = !process.argv.includes('--no-torch');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function oursStepsPerSecond(lab, backend, workerThreads = undefined, steps = 200) {
  if (workerThreads !== undefined) lab.setWorkerThreads(workerThreads);
  const trainer = new lab.AlignmentTrainer({ task: 'copy', seed: 0 });
  trainer.train(10, { backend }); // warm up (first-call allocations)
  const t0 = performance.now();
  trainer.train(steps, { backend });
  const rate = steps / ((performance.now() - t0) / 1000);
  trainer.delete();
  if (workerThreads !== undefined) lab.setWorkerThreads(lab.workerThreads.available);
  return rate;
}

function torchRuns(args) {
  const r = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'alignment_torch.py'), ...args], {
    encoding: 'utf8', env: { ...process.env, OMP_WAIT_POLICY: 'passive' }, timeout: 1_800_000,
  });
  if (r.status !== 0) throw new Error(`PyTorch benchmark failed: ${r.stderr.slice(-500)}`);
  return r.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

const threads = await loadAttnLabNode({ build: 'simd-threads' });
const simd = await loadAttnLabNode({ build: 'simd' });
const scalar = await loadAttnLabNode({ build: 'scalar' });
console.log(`# Alignment lab benchmark\n`);
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; module ${simd.version}`);
console.log(`command: node benchmarks/alignment.mjs --runs ${RUNS} --seeds ${SEEDS.join(',')}${WITH_TORCH ? '' : ' --no-torch'}\n`);

// ---- speed, interleaved so that machine noise hits both sides alike ----
const THREADS_2 = 'WASM SIMD128 + threads (Node build), 2 threads';
const THREADS_1 = 'WASM SIMD128 + threads (Node build), 1 thread';
const SIMD = 'WASM SIMD128 build (browsers), simd128 kernel';
const rows = { [THREADS_2]: [], [THREADS_1]: [], [SIMD]: [], 'WASM scalar build, scalar kernel': [], 'PyTorch 1 thread': [], 'PyTorch 2 threads': [] };
for (let run = 0; run < RUNS; run++) {
  rows[THREADS_2].push(oursStepsPerSecond(threads, 'simd128', 1));
  rows[THREADS_1].push(oursStepsPerSecond(threads, 'simd128', 0));
  rows[SIMD].push(oursStepsPerSecond(simd, 'simd128'));
  rows['WASM scalar build, scalar kernel'].push(oursStepsPerSecond(scalar, 'scalar'));
  if (WITH_TORCH) {
    for (const r of torchRuns(['--tasks', 'copy', '--threads', '1,2', '--seeds', '0'])) {
      rows[`PyTorch ${r.threads} thread${r.threads > 1 ? 's' : ''}`].push(r.steps_per_second);
    }
  }
}
console.log(`## Speed: copy task, defaults (B=128, L=16, d_model=32, 4 heads), ${RUNS} runs of 200 steps\n`);
console.log('| trainer | median steps/s | runs |\n|---|---|---|');
for (const [name, values] of Object.entries(rows)) {
  if (values.length) console.log(`| ${name} | ${median(values).toFixed(1)} | ${values.map((v) => v.toFixed(0)).join(', ')} |`);
}
if (WITH_TORCH) {
  const torchBest = Math.max(median(rows['PyTorch 1 thread']), median(rows['PyTorch 2 threads']));
  console.log(`\nratio to PyTorch at its best thread count (${torchBest.toFixed(1)} steps/s):`);
  for (const name of [THREADS_2, THREADS_1, SIMD]) {
    console.log(`- ${name}: **${(median(rows[name]) / torchBest).toFixed(2)}x**`);
  }
}

// ---- fidelity ----
const TASKS = [
  { label: 'copy', config: { task: 'copy' }, pattern: 'diagonal' },
  { label: 'reverse', config: { task: 'reverse' }, pattern: 'anti-diagonal' },
  { label: 'pointer (keys with replacement)', config: { task: 'pointer' }, pattern: 'matching keys' },
  { label: 'pointer, unique keys', config: { task: 'pointer', uniqueKeys: true }, pattern: 'the key' },
];
console.log(`\n## Fidelity: defaults, accuracy on 1,024 fresh samples, WASM SIMD128\n`);
console.log('| task | seed | steps | accuracy | Bayes ceiling | head-mean mass | best head mass | first step with batch accuracy >= 99% |');
console.log('|---|---|---|---|---|---|---|---|');
for (const { label, config } of TASKS) {
  for (const seed of SEEDS) {
    const trainer = new simd.AlignmentTrainer({ ...config, seed });
    const steps = simd.AlignmentTrainer.defaults(config.task).steps;
    const { accuracies } = trainer.train(steps, { backend: 'simd128' });
    const first = accuracies.findIndex((a) => a >= 0.99);
    const e = trainer.evaluate(1024);
    console.log(`| ${label} | ${seed} | ${steps} | ${(100 * e.accuracy).toFixed(2)}% | ${(100 * e.bayesCeiling).toFixed(2)}% | ` +
      `${e.patternMass.toFixed(3)} | ${e.bestHeadMass.toFixed(3)} (head ${e.bestHead}) | ${first < 0 ? 'never' : first + 1} |`);
    trainer.delete();
  }
}
if (WITH_TORCH) {
  console.log(`\n### PyTorch 1.13 on the notebook's code, same seeds (its own RNG: different batches and init)\n`);
  console.log('| task | seed | accuracy | Bayes ceiling | head-mean mass | best head mass |\n|---|---|---|---|---|---|');
  for (const [tasks, extra, label] of [['copy,reverse,pointer', [], null], ['pointer', ['--unique-keys'], 'pointer, unique keys']]) {
    for (const r of torchRuns(['--tasks', tasks, '--threads', '1', '--seeds', SEEDS.join(','), ...extra])) {
      console.log(`| ${label ?? r.task} | ${r.seed} | ${(100 * r.accuracy).toFixed(2)}% | ${(100 * r.bayes_ceiling).toFixed(2)}% | ` +
        `${r.pattern_mass.toFixed(3)} | ${r.best_head_mass.toFixed(3)} |`);
    }
  }
}
