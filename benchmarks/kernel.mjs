#!/usr/bin/env node
// The attention kernel benchmark: forward + backward time and GFLOP/s per backend, over
// B*H in {4, 64, 512}, L = T = S in {16, 64, 256, 1024}, D in {8, 32, 64}; and the machine's
// single-thread SIMD128 multiply-add peak. Results go in docs/benchmarks.md.
//
//   node benchmarks/kernel.mjs [--backends=scalar,simd128,webgpu] [--cell-seconds=20]
//   (ATTNLAB_BUILD_DIR=<dir> picks the WASM build, as for the tests)
//
//   scalar   the scalar WASM build (no -msimd128), backend 'scalar': the baseline
//   simd128  the SIMD build, backend 'simd128'
//   webgpu   web/webgpu/ through the npm 'webgpu' package on whatever adapter exists (SwiftShader,
//            a CPU, when there is no GPU); times include the upload and the one readback per pass
//
// FLOPs: 12 * B*H * T * S * D per forward + backward (core/shape.h: 2 per multiply-add, 2 products
// forward, 4 backward). Each cell is the median of several repetitions, fewer for big sizes; a cell
// whose one repetition would take longer than --cell-seconds (estimated from the backend's rate on the
// cells before it) prints "skipped (reason)", which keeps the whole run under ~10 minutes on 2 cores.
import os from 'node:os';
import { execSync } from 'node:child_process';
import { loadAttnLabNode } from '../web/node_loader.mjs';
import { generateShaders } from '../scripts/gen_shaders.mjs';
import { nodeGpu } from '../web/webgpu/node_gpu.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [key, value = 'true'] = a.replace(/^--/, '').split('=');
  return [key, value];
}));
const BACKENDS = (args.backends ?? 'scalar,simd128,webgpu').split(',');
const CELL_SECONDS = Number(args['cell-seconds'] ?? 20);
const TARGET_SECONDS = 1.5; // per cell, spent on repetitions when they are fast
const MAX_REPS = 7;
const MAX_WEIGHTS = 64 * 1024 * 1024; // floats: [B,H,T,S] of 256 MiB, copied several times per pass

const BH_VALUES = [4, 64, 512];
const L_VALUES = [16, 64, 256, 1024];
const D_VALUES = [8, 32, 64];
const flopsOf = (bh, L, D) => 12 * bh * L * L * D;

function randomArray(n, seed) {
  const out = new Float32Array(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = a / 2147483648 - 1;
  }
  return out;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function timeReps(run, estimateSeconds) {
  const reps = Math.max(1, Math.min(MAX_REPS, Math.round(TARGET_SECONDS / Math.max(estimateSeconds, 1e-4))));
  if (estimateSeconds < 0.5) await run(); // warm-up: tier-up, pipelines, buffers
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await run();
    times.push((performance.now() - t0) / 1000);
  }
  return { seconds: median(times), reps };
}

function machine() {
  let model = os.cpus()[0]?.model ?? 'unknown CPU';
  try {
    model = execSync('lscpu', { encoding: 'utf8' }).match(/Model name:\s*(.+)/)?.[1]?.trim() ?? model;
  } catch { /* lscpu missing: keep os.cpus() */ }
  return `${model}, ${os.cpus().length} cores, Node ${process.version}`;
}

async function main() {
  const scalarLab = await loadAttnLabNode({ build: 'scalar' });
  const simdLab = await loadAttnLabNode({ build: 'simd' });
  let webgpu = null;
  let webgpuNote = 'not requested';
  if (BACKENDS.includes('webgpu')) {
    generateShaders();
    const { WebGpuAttention } = await import('../web/webgpu/attention_webgpu.js');
    const { gpu, reason } = await nodeGpu();
    const created = gpu ? await WebGpuAttention.create({ gpu }) : { attention: null, reason };
    webgpu = created.attention;
    webgpuNote = webgpu ? webgpu.adapterDescription : `unavailable: ${created.reason}`;
  }

  const runners = {
    scalar: (p) => async () => {
      const { weights } = scalarLab.attentionForward({ ...p, backend: 'scalar' });
      scalarLab.attentionBackward({ ...p, weights, backend: 'scalar' });
    },
    simd128: (p) => async () => {
      const { weights } = simdLab.attentionForward({ ...p, backend: 'simd128' });
      simdLab.attentionBackward({ ...p, weights, backend: 'simd128' });
    },
    webgpu: (p) => async () => {
      await webgpu.forward(p);
      await webgpu.backward({ dOut: p.dOut });
    },
  };
  // A first guess of each backend's rate (GFLOP/s) until it has measured one; refined as it goes.
  const rate = { scalar: 3, simd128: 15, webgpu: 0.3 };

  console.log(`# Attention kernel benchmark`);
  console.log(`machine: ${machine()}`);
  console.log(`WASM builds: ${process.env.ATTNLAB_BUILD_DIR ?? 'public/build'}; WebGPU adapter: ${webgpuNote}`);
  // The peak is the best of several short runs: on a shared machine one long run measures the load.
  const measurePeak = () => Math.max(...Array.from({ length: 5 }, () => simdLab.simd128PeakGflops(0.2)));
  let peak = measurePeak();
  console.log(`single-thread SIMD128 peak (f32x4 mul + add, 8 chains, best of 5 x 0.2 s): ${peak.toFixed(1)} GFLOP/s`);
  console.log('');
  const header = ['B*H', 'L', 'D', 'GFLOP'];
  for (const b of BACKENDS) header.push(`${b} ms`, `${b} GFLOP/s`, ...(b === 'scalar' ? [] : [`${b} vs scalar`]));
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);

  const results = [];
  const started = performance.now();
  for (const bh of BH_VALUES) {
    for (const L of L_VALUES) {
      for (const D of D_VALUES) {
        const flops = flopsOf(bh, L, D);
        const B = bh / 4;
        const H = 4;
        const p = {
          B, H, T: L, S: L, D,
          q: randomArray(bh * L * D, 1), k: randomArray(bh * L * D, 2), v: randomArray(bh * L * D, 3),
          dOut: randomArray(bh * L * D, 4),
        };
        const row = { bh, L, D, flops, cells: {} };
        for (const backend of BACKENDS) {
          const estimate = flops / (rate[backend] * 1e9);
          let skip = null;
          if (backend === 'webgpu' && !webgpu) skip = 'no WebGPU';
          else if (bh * L * L > MAX_WEIGHTS) skip = `weights ${(bh * L * L * 4 / 2 ** 30).toFixed(0)} GiB`;
          else if (estimate > CELL_SECONDS) skip = `~${estimate.toFixed(0)} s per rep`;
          if (skip) {
            row.cells[backend] = { skip };
            continue;
          }
          const { seconds, reps } = await timeReps(runners[backend](p), estimate);
          const gflops = flops / seconds / 1e9;
          rate[backend] = gflops;
          row.cells[backend] = { seconds, reps, gflops };
        }
        results.push(row);
        const cells = [String(bh), String(L), String(D), (flops / 1e9).toFixed(3)];
        const base = row.cells.scalar;
        for (const backend of BACKENDS) {
          const c = row.cells[backend];
          if (c.skip) {
            cells.push(`skipped (${c.skip})`, '', ...(backend === 'scalar' ? [] : ['']));
            continue;
          }
          cells.push((c.seconds * 1000).toFixed(c.seconds < 0.01 ? 2 : 1), c.gflops.toFixed(2));
          if (backend !== 'scalar') cells.push(base?.gflops ? `${(c.gflops / base.gflops).toFixed(1)}x` : '');
        }
        console.log(`| ${cells.join(' | ')} |`);
      }
    }
  }
  const minutes = (performance.now() - started) / 60000;
  console.log('');
  console.log(`total ${minutes.toFixed(1)} min`);
  peak = Math.max(peak, measurePeak());
  console.log(`single-thread SIMD128 peak, best before and after the table: ${peak.toFixed(1)} GFLOP/s`);

  // Summary lines for docs/benchmarks.md.
  const measured = (backend) => results.filter((r) => r.cells[backend]?.gflops);
  if (BACKENDS.includes('simd128')) {
    const best = Math.max(...measured('simd128').map((r) => r.cells.simd128.gflops));
    console.log(`SIMD128 best: ${best.toFixed(1)} GFLOP/s = ${(100 * best / peak).toFixed(0)}% of the measured peak`);
    const target = results.find((r) => r.L === 256 && r.D === 64 && r.cells.simd128?.gflops);
    if (target) console.log(`SIMD128 at L=256, D=64, B*H=${target.bh}: ${target.cells.simd128.gflops.toFixed(1)} GFLOP/s (target >= 12)`);
    const both = measured('simd128').filter((r) => r.L >= 64 && r.cells.scalar?.gflops);
    if (both.length) {
      const speedups = both.map((r) => r.cells.simd128.gflops / r.cells.scalar.gflops);
      console.log(`SIMD128 vs scalar at L >= 64: min ${Math.min(...speedups).toFixed(1)}x, median ${median(speedups).toFixed(1)}x (target >= 3x)`);
    }
  }
  if (webgpu) {
    const wins = measured('webgpu').filter((r) => r.cells.simd128?.gflops && r.cells.webgpu.gflops > r.cells.simd128.gflops);
    if (wins.length) {
      const smallest = Math.min(...wins.map((r) => r.flops));
      console.log(`WebGPU beats SIMD128 from ${(smallest / 2 ** 20).toFixed(0)} MFLOP (2^20) per pass on ${webgpu.adapterDescription}`);
    } else {
      console.log(`WebGPU never beats SIMD128 on ${webgpu.adapterDescription} in the measured cells`);
    }
    webgpu.destroy();
  }
}

await main();
