#!/usr/bin/env node
// The Translation lab's speed and loading memory (issue 14), printed as markdown for docs/benchmarks.md.
// A model in Helsinki-NLP/opus-mt-en-fr's real shape (random weights; benchmarks/marian_torch.py writes
// it with its source ids) translates the notebook sentence's length (8 source tokens), greedy and with 4
// beams, to --max-length tokens (random weights never stop by themselves, so every runner makes the
// same max_length - 1 tokens), in one run:
//   PyTorch 1.13 + OpenBLAS: the plain PyTorch Marian (tests/fixtures/marian_reference.py, the lab's
//     reference) with its key/value cache, at 1 thread and 2,
//   ours: the SIMD128 WASM build under Node, 1 thread (module.loadMarian, Marian.encode + generate, the
//     page's own calls), from model.safetensors and from pytorch_model.bin.
// Each of ours runs in its own Node process (so each load has its own peak memory: WebAssembly memory
// never shrinks, so its size after the load is the load's peak). The generated ids are compared with
// PyTorch's. Cells are medians of --repeats decodes after --warmup; --rounds R repeats the whole sequence,
// interleaved, and pools every round's runs.
// Usage: node benchmarks/marian.mjs [--dir /tmp/attnlab-opus-mt] [--beams 1,4] [--max-length 16]
//          [--repeats 5] [--warmup 1] [--rounds 1] [--small] [--json FILE]
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SMALL = process.argv.includes('--small');
const DIR = arg('--dir', SMALL ? '/tmp/attnlab-opus-mt-small' : '/tmp/attnlab-opus-mt');
const BEAMS = arg('--beams', '1,4').split(',').map(Number);
const MAX_LENGTH = Number(arg('--max-length', 16));
const REPEATS = Number(arg('--repeats', 5));
const WARMUP = Number(arg('--warmup', 1));
const ROUNDS = Number(arg('--rounds', 1));
const WEIGHTS = { safetensors: 'model.safetensors', bin: 'pytorch_model.bin' };
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');

// ---- ours, in this process (--child FORMAT) -----------------------------------------------------------
async function child(format) {
  const { loadAttnLabNode } = await import('../web/node_loader.mjs');
  const { diskSource } = await import('../web/cli/file_source.mjs');
  const module = await loadAttnLabNode({ build: 'simd' });
  const weights = await diskSource(path.join(DIR, WEIGHTS[format]));
  const config = readFileSync(path.join(DIR, 'config.json'), 'utf8');
  const ids = Int32Array.from(JSON.parse(readFileSync(path.join(DIR, 'ids.json'), 'utf8')).input_ids);
  let peakMalloc = 0;
  const t0 = performance.now();
  const marian = await module.loadMarian({
    config, size: weights.size, read: weights.read, format,
    onProgress: () => { peakMalloc = Math.max(peakMalloc, module.heapBytesInUse()); },
  });
  const loadMs = performance.now() - t0;
  const peakHeapBytes = module._module.HEAPU8.buffer.byteLength;
  const results = [];
  for (const beams of BEAMS) {
    const runs = [];
    let out;
    for (let i = 0; i < WARMUP + REPEATS; i++) {
      const s = performance.now();
      marian.encode(ids, { backend: 'simd128' });
      out = marian.generate({ beams, maxLength: MAX_LENGTH, backend: 'simd128' });
      if (i >= WARMUP) runs.push(performance.now() - s);
    }
    results.push({ beams, runs_ms: runs.map((r) => +r.toFixed(2)), ids: Array.from(out.ids), score: out.score });
  }
  marian.delete();
  return {
    format, label: `attnlab simd build, 1 thread, ${WEIGHTS[format]}`, load_ms: loadMs, peak_heap_bytes: peakHeapBytes,
    peak_malloc_bytes: Math.max(peakMalloc, module.heapBytesInUse()), max_rss_bytes: process.resourceUsage().maxRSS * 1024, results,
  };
}

if (process.argv.includes('--child')) {
  const result = await child(process.argv[process.argv.indexOf('--child') + 1]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

// ---- the run ------------------------------------------------------------------------------------------
function spawnJson(command, args, env = process.env) {
  const r = spawnSync(command, args, { encoding: 'utf8', env, timeout: 1_800_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    throw new Error(`${path.basename(args[0])} ${args.slice(1).join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || String(r.error)).slice(-1500)}`);
  }
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

const common = ['--dir', DIR, '--beams', BEAMS.join(','), '--max-length', String(MAX_LENGTH), '--repeats', String(REPEATS), '--warmup', String(WARMUP)];
const torchRun = () => spawnJson('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'marian_torch.py'), '--out', DIR,
  '--beams', BEAMS.join(','), '--max-length', String(MAX_LENGTH), '--repeats', String(REPEATS), '--warmup', String(WARMUP),
  '--threads', '1,2', ...(SMALL ? ['--small'] : [])], { ...process.env, OMP_WAIT_POLICY: 'passive' });
const childRun = (format) => spawnJson(process.execPath, [SCRIPT, '--child', format, ...common]);

const command = `node benchmarks/marian.mjs ${process.argv.slice(2).join(' ')}`.trim();
const started = performance.now();
const loadStart = load();
const torchRounds = [];
const ours = { safetensors: [], bin: [] };
for (let round = 0; round < ROUNDS; round++) {
  torchRounds.push(torchRun());
  for (const format of Object.keys(ours)) ours[format].push(childRun(format));
  process.stderr.write(`round ${round + 1}/${ROUNDS} done, ${((performance.now() - started) / 1000).toFixed(0)} s, load ${load()}\n`);
}

const pooled = {};
const add = (name, beams, runs) => ((pooled[name] ??= {})[beams] ??= []).push(...runs);
for (const tr of torchRounds) for (const r of tr.results) add(`torch:${r.threads}`, r.beams, r.runs_ms);
for (const [format, rounds] of Object.entries(ours)) for (const r of rounds) for (const x of r.results) add(`ours:${format}`, x.beams, x.runs_ms);
const cell = (name, b) => (pooled[name]?.[b] ? median(pooled[name][b]) : null);
const fmt = (v, digits = 0) => (v === null || v === undefined ? '-' : v.toFixed(digits));
const torchInfo = torchRounds[torchRounds.length - 1];
const cfg = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const sizes = Object.fromEntries(Object.entries(WEIGHTS).map(([f, n]) => [f, statSync(path.join(DIR, n)).size]));
const generated = MAX_LENGTH - 1;

console.log('# Translation benchmark (issue 14)\n');
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; PyTorch ${torchInfo.torch} ` +
  `(${torchInfo.blas.split(', ').pop()}, OMP_WAIT_POLICY=${torchInfo.omp_wait_policy})`);
console.log(`model: ${DIR} (d_model ${cfg.d_model}, ${cfg.encoder_layers} + ${cfg.decoder_layers} layers, ${cfg.decoder_attention_heads} heads, ` +
  `ffn ${cfg.decoder_ffn_dim}, vocabulary ${cfg.vocab_size}; ${(torchInfo.params / 1e6).toFixed(1)}M parameters; model.safetensors ` +
  `${(sizes.safetensors / 1e6).toFixed(1)} MB, pytorch_model.bin ${(sizes.bin / 1e6).toFixed(1)} MB), random weights, batch 1, ` +
  `8 source tokens, ${generated} generated tokens (max_length ${MAX_LENGTH})`);
console.log(`command: ${command}`);
console.log(`${ROUNDS} round(s) x ${REPEATS} timed decodes after ${WARMUP} warm-up; load average (1, 5, 15 min) at start: ${loadStart}, ` +
  `at end: ${load()}; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

console.log('## Encode + generate, median ms (per generated token)\n');
const COLUMNS = [['torch:1', 'PyTorch 1 thread'], ['torch:2', 'PyTorch 2 threads'], ['ours:safetensors', 'ours SIMD128, 1 thread']];
console.log(`| beams | ${COLUMNS.map(([, t]) => t).join(' | ')} | ours / PyTorch 1 thread |\n|---${'|---'.repeat(COLUMNS.length + 1)}|`);
for (const b of BEAMS) {
  const cells = COLUMNS.map(([n]) => (cell(n, b) === null ? '-' : `${fmt(cell(n, b))} (${fmt(cell(n, b) / generated, 1)})`));
  const r = cell('ours:safetensors', b) / cell('torch:1', b);
  console.log(`| ${b} | ${cells.join(' | ')} | **${r.toFixed(2)}** (${r <= 1 ? 'PASS' : 'FAIL'}, target <= 1) |`);
}

console.log('\n## Same tokens as PyTorch\n');
for (const b of BEAMS) {
  const want = torchInfo.refs[b].ids;
  for (const [format, rounds] of Object.entries(ours)) {
    const got = rounds[rounds.length - 1].results.find((x) => x.beams === b).ids;
    const same = got.length === want.length && got.every((id, i) => id === want[i]);
    console.log(`- beams ${b}, ${WEIGHTS[format]}: ${same ? 'identical ids' : `DIFFERENT: ours ${got.join(' ')} / PyTorch ${want.join(' ')}`}`);
  }
}

console.log('\n## Loading\n');
console.log('| weights file | size | load | peak WASM heap | peak malloc | max RSS of the process |\n|---|---|---|---|---|---|');
for (const [format, rounds] of Object.entries(ours)) {
  const r = rounds[rounds.length - 1];
  const size = sizes[format];
  const ratio = r.peak_heap_bytes / size;
  console.log(`| ${WEIGHTS[format]} | ${(size / 1e6).toFixed(1)} MB | ${fmt(median(rounds.map((x) => x.load_ms)))} ms | ` +
    `${(r.peak_heap_bytes / 1e6).toFixed(0)} MB = **${ratio.toFixed(2)}x** (${ratio <= 1.5 ? 'PASS' : 'FAIL'}, target <= 1.5x) | ` +
    `${(r.peak_malloc_bytes / 1e6).toFixed(0)} MB | ${(r.max_rss_bytes / 1e6).toFixed(0)} MB |`);
}
console.log('\nRuns (ms):');
for (const [name, byB] of Object.entries(pooled)) {
  for (const [b, runs] of Object.entries(byB)) console.log(`- ${name}, beams ${b}: ${runs.map((r) => r.toFixed(0)).join(', ')}`);
}

const JSON_OUT = arg('--json', null);
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ command, torch: torchRounds, ours, pooled }, null, 1));
