#!/usr/bin/env node
// The Induction lab's speed (issue 43), printed as markdown for docs/benchmarks.md: training steps/s at the
// lab's defaults (read from its declaration, web/labs/08_induction.js: the same settings the page and the
// CLI start from) in the WASM modules under Node (the browsers' SIMD128 build, the Node threads build with
// its two shards on two threads, the scalar build), against PyTorch 1.13 training the same model
// (benchmarks/induction_torch.py: TransformerLens's maths in plain PyTorch, torch.optim.Adam, 1 and 2
// threads, OMP_WAIT_POLICY=passive) in the same run. Cells are medians of --runs runs of --steps steps,
// each after 20 warm-up steps; the sides alternate within every run so that machine noise hits them alike.
// Ours draws its batches inside the step and measures the probe scores every 10 steps (the timeline); the
// PyTorch loop draws its batches before timing and measures nothing: the comparison favours PyTorch.
// Usage: node benchmarks/induction.mjs [--runs 5] [--steps 600] [--no-torch] [--settings '{"dModel": 64}']
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { loadAttnLabNode, REPO_ROOT } from '../web/node_loader.mjs';
import { inductionLab } from '../web/labs/08_induction.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 5));
const STEPS = Number(arg('--steps', 600));
const WITH_TORCH = !process.argv.includes('--no-torch');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const defaults = Object.fromEntries(inductionLab.properties.map((p) => [p.name, p.default]));
const settings = {
  layers: defaults.layers, heads: defaults.heads, dModel: defaults.dModel, dHead: defaults.dHead, mlp: defaults.mlp,
  layerNorm: defaults.layerNorm, vocab: defaults.vocab, context: defaults.context, batch: defaults.batch, lr: defaults.lr,
  ...JSON.parse(arg('--settings', '{}')),
};

function oursStepsPerSecond(lab, backend) {
  const trainer = lab.createTrainer('induction', { ...settings, task: 'repeat', seed: 0 });
  trainer.train(20, { backend }); // warm up
  const t0 = performance.now();
  trainer.train(STEPS, { backend });
  const rate = STEPS / ((performance.now() - t0) / 1000);
  trainer.delete();
  return rate;
}

function torchStepsPerSecond() {
  const r = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'induction_torch.py'), '--threads', '1,2',
    '--steps', String(STEPS), '--settings', JSON.stringify(settings)], {
    encoding: 'utf8', env: { ...process.env, OMP_WAIT_POLICY: 'passive' }, timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`PyTorch benchmark failed: ${(r.stderr ?? String(r.error)).slice(-500)}`);
  return r.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

const labs = {};
for (const build of ['simd', 'simd-threads', 'scalar']) labs[build] = await loadAttnLabNode({ build });
const rows = {
  'WASM SIMD128 build, simd128 kernel (the page without threads)': ['simd', 'simd128', []],
  'WASM Node threads build (2 shards on 2 threads), simd128 kernel': ['simd-threads', 'simd128', []],
  'WASM scalar build, scalar kernel': ['scalar', 'scalar', []],
};
const torch = { 1: [], 2: [] };
for (let run = 0; run < RUNS; run++) {
  for (const [build, backend, rates] of Object.values(rows)) rates.push(oursStepsPerSecond(labs[build], backend));
  if (WITH_TORCH) for (const r of torchStepsPerSecond()) torch[r.threads].push(r.steps_per_second);
}

console.log('# Induction lab benchmark\n');
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; `
  + `Node ${process.version}; module ${labs.simd.version}`);
console.log(`settings: ${JSON.stringify(settings)}`);
console.log(`training steps/s, median of ${RUNS} runs of ${STEPS} steps (after 20 warm-up steps), sides alternating\n`);
console.log('| what | steps/s |\n|---|---|');
for (const [name, [, , rates]] of Object.entries(rows)) console.log(`| ${name} | ${median(rates).toFixed(0)} |`);
if (WITH_TORCH) {
  for (const threads of [1, 2]) console.log(`| PyTorch 1.13, ${threads} thread${threads > 1 ? 's' : ''} | ${median(torch[threads]).toFixed(0)} |`);
  const best = Math.max(median(torch[1]), median(torch[2]));
  const ours = (name) => median(rows[name][2]) / best;
  console.log(`\nagainst PyTorch's best thread count: SIMD128 ${ours('WASM SIMD128 build, simd128 kernel (the page without threads)').toFixed(1)}x, `
    + `threads build ${ours('WASM Node threads build (2 shards on 2 threads), simd128 kernel').toFixed(1)}x`);
}
for (const lab of Object.values(labs)) lab.shutdown?.();
process.exit(0);
