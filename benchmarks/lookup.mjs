#!/usr/bin/env node
// The Lookup lab's speed (issue 10), printed as markdown for docs/benchmarks.md: training steps/s of the
// course model (notebook 02, section 6: batch 64, 100 database digits, 1 head, Adam lr 1e-4) in the WASM
// modules under Node (the Node threads build with its worker thread on and off, the browsers' SIMD128
// build, the scalar build) beside PyTorch 1.13 + OpenBLAS in the same run (benchmarks/lookup_torch.py:
// the notebook's literal loop, the database embedded once per step with bmm retrieval as the notebook
// writes it, and with one matrix product; 1 and 2 threads). Runs are interleaved so that machine noise
// hits both sides alike; cells are medians; each timing follows 10 (ours) or 20 (PyTorch) warm-up steps.
// Issue 10's targets are judged against the bmm variant (the one the issue names); every variant's ratio is printed.
// Usage: node benchmarks/lookup.mjs [--runs 5] [--steps 300] [--no-torch]
//   (the defaults took 3 min 17 s on 2 busy cores; docs/benchmarks.md records the figures)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { loadAttnLabNode, REPO_ROOT } from '../web/node_loader.mjs';
import { loadDigits, DIGITS_ASSET } from '../web/data/digits.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 5));
const STEPS = Number(arg('--steps', 300));
const WITH_TORCH = !process.argv.includes('--no-torch');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');

function oursStepsPerSecond(lab, digits, backend, workerThreads = undefined) {
  if (workerThreads !== undefined) lab.setWorkerThreads(workerThreads);
  const trainer = new lab.LookupTrainer({ seed: 0, heads: 1 }, digits);
  trainer.train(10, { backend }); // warm up (first-call allocations)
  const t0 = performance.now();
  trainer.train(STEPS, { backend });
  const rate = STEPS / ((performance.now() - t0) / 1000);
  trainer.delete();
  if (workerThreads !== undefined) lab.setWorkerThreads(lab.workerThreads.available);
  return rate;
}

function torchRuns() {
  // OMP_WAIT_POLICY is read when torch loads libgomp, so it goes in the child's environment.
  const r = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'lookup_torch.py'),
    '--variants', 'literal,once-bmm,once', '--threads', '1,2', '--steps', String(STEPS)], {
    encoding: 'utf8', env: { ...process.env, OMP_WAIT_POLICY: 'passive' }, timeout: 1_800_000,
  });
  if (r.status !== 0) throw new Error(`PyTorch benchmark failed: ${(r.stderr ?? String(r.error)).slice(-500)}`);
  return r.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

const gz = readFileSync(path.join(REPO_ROOT, 'public', DIGITS_ASSET));
const labs = {};
for (const build of ['simd-threads', 'simd', 'scalar']) {
  const lab = await loadAttnLabNode({ build });
  labs[build] = { lab, digits: await loadDigits(lab, gz) };
}
const workerSwitch = typeof labs['simd-threads'].lab.setWorkerThreads === 'function' &&
  labs['simd-threads'].lab.workerThreads.available > 0;

console.log(`# Lookup lab benchmark\n`);
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; module ${labs.simd.lab.version}`);
console.log(`command: node benchmarks/lookup.mjs --runs ${RUNS} --steps ${STEPS}${WITH_TORCH ? '' : ' --no-torch'}`);
console.log(`load average (1, 5, 15 min) at start: ${load()}\n`);

const THREADS_2 = 'WASM SIMD128 + threads (Node build), 2 threads';
const THREADS_1 = 'WASM SIMD128 + threads (Node build), 1 thread';
const SIMD = 'WASM SIMD128 build (browsers), simd128 kernel';
const SCALAR = 'WASM scalar build, scalar kernel';
const TORCH_LABEL = {
  literal: "PyTorch, notebook's literal loop (database embedded 64x per step)",
  'once-bmm': 'PyTorch, database embedded once per step, bmm retrieval',
  once: 'PyTorch, database embedded once per step, one-product retrieval',
};
const torchName = (r) => `${TORCH_LABEL[r.variant]}, ${r.threads} thread${r.threads > 1 ? 's' : ''}`;
const rows = { [THREADS_2]: [], [THREADS_1]: [], [SIMD]: [], [SCALAR]: [] };
if (!workerSwitch) delete rows[THREADS_1];
let blas = null;
const started = performance.now();
for (let run = 0; run < RUNS; run++) {
  const t = labs['simd-threads'];
  if (workerSwitch) {
    rows[THREADS_2].push(oursStepsPerSecond(t.lab, t.digits, 'simd128', 1));
    rows[THREADS_1].push(oursStepsPerSecond(t.lab, t.digits, 'simd128', 0));
  } else {
    rows[THREADS_2].push(oursStepsPerSecond(t.lab, t.digits, 'simd128'));
  }
  rows[SIMD].push(oursStepsPerSecond(labs.simd.lab, labs.simd.digits, 'simd128'));
  rows[SCALAR].push(oursStepsPerSecond(labs.scalar.lab, labs.scalar.digits, 'scalar'));
  if (WITH_TORCH) {
    for (const r of torchRuns()) {
      (rows[torchName(r)] ??= []).push(r.steps_per_second);
      blas = r.blas;
    }
  }
  process.stderr.write(`run ${run + 1}/${RUNS} done, ${((performance.now() - started) / 1000).toFixed(0)} s, load ${load()}\n`);
}

console.log(`## Speed: training steps per second, defaults (batch 64, 100 database digits, embed 32, 1 head), ${RUNS} runs of ${STEPS} steps\n`);
console.log('| trainer | median steps/s | runs |\n|---|---|---|');
for (const [name, values] of Object.entries(rows)) {
  if (values.length) console.log(`| ${name} | ${median(values).toFixed(1)} | ${values.map((v) => v.toFixed(0)).join(', ')} |`);
}
if (WITH_TORCH) {
  console.log(`\nPyTorch's BLAS: ${blas}`);
  const best = (variant) => {
    const [name, values] = Object.entries(rows).filter(([n]) => n.startsWith(TORCH_LABEL[variant] + ',')).map(([n, v]) => [n, median(v)])
      .sort((a, b) => b[1] - a[1])[0];
    return { name, value: values };
  };
  const strong = best('once');
  const bmm = best('once-bmm');
  const literal = best('literal');
  console.log(`\nratio to PyTorch at its best (${strong.name}: ${strong.value.toFixed(1)} steps/s); ` +
    `in brackets, to the bmm-retrieval variant at its best (${bmm.value.toFixed(1)}) and to the notebook's literal loop at its best (${literal.value.toFixed(1)}):`);
  for (const name of [THREADS_2, THREADS_1, SIMD, SCALAR]) {
    if (!rows[name]) continue;
    const m = median(rows[name]);
    console.log(`- ${name}: **${(m / strong.value).toFixed(2)}x** (${(m / bmm.value).toFixed(2)}x, ${(m / literal.value).toFixed(2)}x)`);
  }
  const verdict = (ratio, target) => `${ratio >= target ? 'PASS' : 'FAIL'} (${ratio.toFixed(2)}x, target >= ${target}x)`;
  // Issue 10's speed target is stated against "PyTorch ... when the database is embedded once per step
  // (the same maths as the notebook's expanded batch ...)": the once-bmm variant, which keeps the
  // notebook's torch.bmm retrieval over the expanded batch and only moves the embedding out of it. The
  // one-product variant (ours, not the issue's) is faster still; its ratios are printed beside the
  // verdicts and above, so that the stronger comparison stays in view.
  // The WASM module under Node: what loadAttnLabNode() (build 'auto') and npx attnlab run, the threads
  // build with its worker thread on; the worker-off figure is printed beside it, not judged.
  console.log(`\nIssue 10's targets, against the variant it names (${bmm.name}: ${bmm.value.toFixed(1)} steps/s):`);
  console.log(`- WASM module under Node (Node threads build, worker thread on, the default): ` +
    verdict(median(rows[THREADS_2]) / bmm.value, 3) +
    (rows[THREADS_1] ? `; worker thread off: ${(median(rows[THREADS_1]) / bmm.value).toFixed(2)}x` : '') +
    `; against the one-product variant ${(median(rows[THREADS_2]) / strong.value).toFixed(2)}x`);
  console.log(`- browsers' single-threaded SIMD128 build: ${verdict(median(rows[SIMD]) / bmm.value, 2)}` +
    `; against the one-product variant ${(median(rows[SIMD]) / strong.value).toFixed(2)}x`);
}
console.log(`\nload average (1, 5, 15 min) at end: ${load()}; ${((performance.now() - started) / 1000).toFixed(0)} s of runs`);
for (const { digits } of Object.values(labs)) digits.delete();
