#!/usr/bin/env node
// The BERT encoder's speed (issue 13), printed as markdown for docs/benchmarks.md: one forward pass of a
// bert-base-shaped model (random weights, 110M parameters, batch 1) at 32 and 128 tokens, in one run:
//   PyTorch 1.13 + OpenBLAS, native, 1 thread and its best thread count (benchmarks/bert_torch.py, which
//     also writes the model folder, its ONNX export, the token ids and PyTorch's outputs),
//   onnxruntime-web (npm, WASM backend, under Node) on that ONNX export, 1 thread and 2 threads,
//   our WASM forward: the SIMD128 build at 1 thread and the threads build at 2 (see ours() below).
// Every runner gets the same token ids (ids_{T}.json) and is checked against the same PyTorch outputs
// (ref_{T}.safetensors: the last hidden state and every layer's attention). Each runner runs in its own
// Node process (onnxruntime-web fixes its thread count when its WASM module starts, and a fresh process
// also gives each runner its own peak memory); cells are medians of --repeats forwards after --warmup.
// With --rounds R the whole sequence runs R times, interleaved, and the medians pool every round's runs.
// Usage: node benchmarks/bert.mjs [--dir /tmp/attnlab-bert-base] [--tokens 32,128] [--repeats 5] [--warmup 2]
//          [--rounds 1] [--small] [--no-torch] [--torch-json FILE] [--json FILE] [--ort-options JSON]
//   --small: hidden 128, 2 layers (bert_torch.py --small, folder /tmp/attnlab-bert-small), for the harness.
//   --no-torch: no PyTorch timings (bert_torch.py still runs once with --no-time to write the files).
//   --torch-json FILE: take PyTorch's line from FILE (its output from the same run) instead of running it.
//   --json FILE: also write every figure as JSON.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { parseSafetensors } from '../web/io/safetensors.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SMALL = process.argv.includes('--small');
const DIR = arg('--dir', SMALL ? '/tmp/attnlab-bert-small' : '/tmp/attnlab-bert-base');
const TOKENS = arg('--tokens', '32,128').split(',').map(Number);
const REPEATS = Number(arg('--repeats', 5));
const WARMUP = Number(arg('--warmup', 2));
const ROUNDS = Number(arg('--rounds', 1));
// Extra InferenceSession options for onnxruntime-web, as JSON (its defaults otherwise: graph optimisation
// 'all'; its WASM backend passes enableCpuMemArena and enableMemPattern as false when they are not given).
const ORT_OPTIONS = JSON.parse(arg('--ort-options', '{}'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');

// ---- Our WASM forward ------------------------------------------------------------------------------
// Filled in once the core's BERT forward is bound. Returns null (the harness then leaves its column out)
// or a runner:
//   {
//     label: string,                      // what ran, e.g. 'attnlab simd128 build, 1 thread'
//     run(inputIds: Int32Array, tokenTypeIds: Int32Array) -> {lastHiddenState: Float32Array [T*E],
//         attentions: Float32Array [L*H*T*T] or an array of L Float32Array [H*T*T]}   (or a Promise of it)
//     peakHeapBytes?: number,             // peak WASM heap while loading the checkpoint (issue 13: <= 1.5x)
//     firstAttentionMs?: number,          // its own time to first attention, if it measures one
//     close?(): void,
//   }
// dir: the model folder (config.json, vocab.txt, model.safetensors); ids: {T: Int32Array} for every T;
// threads 1: the SIMD128 build, 1 thread; threads 2: the threads build, 2 threads. The harness times this
// call as "load" and the first run(ids[first T]) after it as "first forward".
async function ours({ dir, threads }) {
  const { loadAttnLabNode } = await import('../web/node_loader.mjs');
  const { openCheckpoint } = await import('../web/models/registry.js');
  const { folderSources } = await import('../web/cli/file_source.mjs');
  const build = threads > 1 ? 'simd-threads' : 'simd';
  const module = await loadAttnLabNode({ build });
  // The page's own opener (web/models/registry.js): the file streamed tensor by tensor.
  let peakInUse = 0;
  const { opened: { model: bert } } = await openCheckpoint(module, await folderSources(dir), {
    lab: 'pretrained', onProgress: () => { peakInUse = Math.max(peakInUse, module.heapBytesInUse()); },
  });
  // WebAssembly memory never shrinks: its size after the load is the load's peak heap.
  const memoryBytes = module._module.HEAPU8.buffer.byteLength;
  const L = bert.config.layers;
  return {
    label: `attnlab ${build} build, ${threads} thread${threads > 1 ? 's' : ''} (module.loadBert, BertModel.forward)`,
    effectiveThreads: threads > 1 ? 1 + module.workerThreads.active : 1,
    run(inputIds, tokenTypeIds) {
      bert.forward(inputIds, tokenTypeIds, { backend: 'simd128' });
      return { lastHiddenState: bert.hidden(L), attentions: Array.from({ length: L }, (_, l) => bert.attention(l)) };
    },
    peakHeapBytes: memoryBytes,
    peakMallocBytes: Math.max(peakInUse, module.heapBytesInUse()),
    close: () => bert.delete(),
  };
}

// ---- onnxruntime-web -------------------------------------------------------------------------------
async function ortWeb({ dir, threads }) {
  const ort = await import('onnxruntime-web');
  // Under Node the package's "node" export (dist/ort.node.min.mjs) finds ort-wasm-simd-threaded.{mjs,wasm}
  // beside itself in node_modules; pthreads are Node worker_threads. numThreads is read once, when the
  // WASM module starts (initializeWebAssembly), which is why each thread count has its own process.
  ort.env.wasm.numThreads = threads;
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), { ...ORT_OPTIONS, executionProviders: ['wasm'] });
  const L = session.outputNames.filter((n) => n.startsWith('attentions.')).length;
  return {
    label: `onnxruntime-web ${ort.env.versions.web}, wasm, ${ort.env.wasm.numThreads} thread${ort.env.wasm.numThreads > 1 ? 's' : ''}`,
    effectiveThreads: ort.env.wasm.numThreads,
    async run(inputIds, tokenTypeIds) {
      const T = inputIds.length;
      const feeds = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(inputIds, BigInt), [1, T]),
        token_type_ids: new ort.Tensor('int64', BigInt64Array.from(tokenTypeIds, BigInt), [1, T]),
      };
      const out = await session.run(feeds);
      return {
        lastHiddenState: out.last_hidden_state.data,
        attentions: Array.from({ length: L }, (_, i) => out[`attentions.${i}`].data),
      };
    },
    close: () => session.release(),
  };
}

// ---- one runner in this process (--child KIND THREADS) ---------------------------------------------
function readIds(dir) {
  const ids = {};
  const types = {};
  for (const T of TOKENS) {
    const j = JSON.parse(readFileSync(path.join(dir, `ids_${T}.json`), 'utf8'));
    ids[T] = Int32Array.from(j.input_ids);
    types[T] = Int32Array.from(j.token_type_ids);
  }
  return { ids, types };
}

function maxAbsDiff(got, want) {
  if (got.length !== want.length) return { error: `length ${got.length}, expected ${want.length}` };
  let m = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d; // a NaN counts as an infinite difference
  }
  return m;
}

/** tid -> CPU seconds (utime + stime at USER_HZ 100) of every OS thread of this process (Linux /proc);
 *  null elsewhere. */
function cpuByThread() {
  try {
    return Object.fromEntries(readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from the 3rd field on
      return [tid, (Number(fields[11]) + Number(fields[12])) / 100];
    }));
  } catch {
    return null;
  }
}

/** The CPU seconds each thread spent between two cpuByThread() snapshots, busiest first, threads over
 *  0.05 s: shows whether onnxruntime-web's pthread worker (a Node worker_thread) shares the work. */
function cpuDelta(before, after) {
  if (!before || !after) return null;
  return Object.entries(after).map(([tid, s]) => +(s - (before[tid] ?? 0)).toFixed(2))
    .filter((s) => s > 0.05).sort((a, b) => b - a);
}

function concat(parts) {
  if (parts instanceof Float32Array) return parts;
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

async function child(kind, threads) {
  const { ids, types } = readIds(DIR);
  const cpu0 = process.cpuUsage();
  let t0 = performance.now();
  const runner = kind === 'ort' ? await ortWeb({ dir: DIR, threads }) : await ours({ dir: DIR, ids, threads });
  const loadMs = performance.now() - t0;
  if (runner === null) return { kind, threads, skipped: true };
  t0 = performance.now();
  await runner.run(ids[TOKENS[0]], types[TOKENS[0]]);
  const firstForwardMs = performance.now() - t0;
  const rssAfterLoad = process.memoryUsage().rss;
  // OS threads of this process after the first forward (Linux): Node's own ~7 plus any pthread workers.
  let osThreads = null;
  try { osThreads = readdirSync('/proc/self/task').length; } catch { /* not Linux */ }
  const results = [];
  const threadsBefore = cpuByThread();
  for (const T of TOKENS) {
    const ref = parseSafetensors(readFileSync(path.join(DIR, `ref_${T}.safetensors`))).tensors;
    let out;
    for (let i = 0; i < WARMUP; i++) out = await runner.run(ids[T], types[T]);
    const runs = [];
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < REPEATS; i++) {
      const s = performance.now();
      out = await runner.run(ids[T], types[T]);
      runs.push(performance.now() - s);
    }
    const c = process.cpuUsage(c0);
    results.push({
      tokens: T, median_ms: median(runs), runs_ms: runs.map((r) => +r.toFixed(2)),
      // CPU time of the whole process (every thread) over wall time: about 1 for one busy thread, up to
      // the thread count when the work really spreads.
      cpu_per_wall: +(((c.user + c.system) / 1000) / (performance.now() - w0)).toFixed(2),
      max_abs_diff: {
        last_hidden_state: maxAbsDiff(out.lastHiddenState, ref.last_hidden_state.data),
        attentions: maxAbsDiff(concat(out.attentions), ref.attentions.data),
      },
    });
  }
  const threadCpu = cpuDelta(threadsBefore, cpuByThread());
  runner.close?.();
  const total = process.cpuUsage(cpu0);
  return {
    kind, threads, label: runner.label, effective_threads: runner.effectiveThreads ?? threads,
    load_ms: loadMs, first_forward_ms: firstForwardMs, first_forward_tokens: TOKENS[0],
    first_attention_ms: runner.firstAttentionMs ?? loadMs + firstForwardMs,
    peak_heap_bytes: runner.peakHeapBytes ?? null,
    peak_malloc_bytes: runner.peakMallocBytes ?? null,
    rss_after_load_bytes: rssAfterLoad, os_threads: osThreads, timed_cpu_s_by_thread: threadCpu, max_rss_bytes: process.resourceUsage().maxRSS * 1024,
    cpu_s: (total.user + total.system) / 1e6, results,
  };
}

if (process.argv.includes('--child')) {
  const i = process.argv.indexOf('--child');
  const result = await child(process.argv[i + 1], Number(process.argv[i + 2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0); // onnxruntime-web's pthread workers would otherwise keep the process alive
}

// ---- the run: every runner in its own process, PyTorch first (it writes the files) -------------------
function spawnJson(command, args, env = process.env) {
  const r = spawnSync(command, args, { encoding: 'utf8', env, timeout: 1_800_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    throw new Error(`${path.basename(args[0])} ${args.slice(1).join(' ')} failed (${r.status ?? r.signal}): ` +
      `${(r.stderr || String(r.error)).slice(-1500)}`);
  }
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

function torchRun(time) {
  // OMP_WAIT_POLICY is read when torch loads libgomp, so it goes in the child's environment.
  return spawnJson('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'bert_torch.py'), '--out', DIR,
    '--tokens', TOKENS.join(','), '--repeats', String(REPEATS), '--warmup', String(WARMUP), '--threads', '1,2',
    ...(SMALL ? ['--small'] : []), ...(time ? [] : ['--no-time'])], { ...process.env, OMP_WAIT_POLICY: 'passive' });
}

const childRun = (kind, threads) => spawnJson(process.execPath, [SCRIPT, '--child', kind, String(threads),
  '--dir', DIR, '--tokens', TOKENS.join(','), '--repeats', String(REPEATS), '--warmup', String(WARMUP),
  '--ort-options', JSON.stringify(ORT_OPTIONS)]);

const TORCH_JSON = arg('--torch-json', null);
const WITH_TORCH = !process.argv.includes('--no-torch');
const command = `node benchmarks/bert.mjs ${process.argv.slice(2).join(' ')}`.trim();
const started = performance.now();
const loadStart = load();
const RUNNERS = [['ort', 1], ['ort', 2], ['ours', 1], ['ours', 2]];
const torchRounds = [];
const childRounds = Object.fromEntries(RUNNERS.map(([k, t]) => [`${k}:${t}`, []]));
if (TORCH_JSON) torchRounds.push(JSON.parse(readFileSync(TORCH_JSON, 'utf8').trim().split('\n').pop()));
else if (!WITH_TORCH) torchRun(false); // the folder, the ids and the references, no timings
for (let round = 0; round < ROUNDS; round++) {
  if (WITH_TORCH && !TORCH_JSON) torchRounds.push(torchRun(true));
  for (const [kind, threads] of RUNNERS) {
    const r = childRun(kind, threads);
    if (!r.skipped) childRounds[`${kind}:${threads}`].push(r);
  }
  process.stderr.write(`round ${round + 1}/${ROUNDS} done, ${((performance.now() - started) / 1000).toFixed(0)} s, load ${load()}\n`);
}

// Pool the rounds: every timed forward of a (runner, T) goes into one median.
const pooled = {};
const addRuns = (name, T, runs) => ((pooled[name] ??= {})[T] ??= []).push(...runs);
let torchInfo = null;
for (const tr of torchRounds) {
  torchInfo = tr;
  for (const r of tr.results) addRuns(`torch:${r.threads}`, r.tokens, r.runs_ms);
}
for (const [name, rounds] of Object.entries(childRounds)) {
  for (const r of rounds) for (const x of r.results) addRuns(name, x.tokens, x.runs_ms);
}
const cell = (name, T) => (pooled[name]?.[T] ? median(pooled[name][T]) : null);
const fmt = (v, digits = 1) => (v === null || v === undefined ? '-' : v.toFixed(digits));
const torchBest = (T) => {
  const options = Object.keys(pooled).filter((n) => n.startsWith('torch:')).map((n) => [n, cell(n, T)])
    .filter(([, v]) => v !== null).sort((a, b) => a[1] - b[1]);
  return options.length ? { threads: Number(options[0][0].split(':')[1]), ms: options[0][1] } : null;
};

const ortInfo = childRounds['ort:1'][0] ?? childRounds['ort:2'][0];
const cfg = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const checkpointBytes = statSync(path.join(DIR, 'model.safetensors')).size;
console.log('# BERT encoder benchmark (issue 13)\n');
console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}` +
  (ortInfo ? `; ${ortInfo.label.replace(/, wasm.*/, '')}` : '') +
  (torchInfo ? `; PyTorch ${torchInfo.torch} (${torchInfo.blas.split(', ').pop()}, OMP_WAIT_POLICY=${torchInfo.omp_wait_policy})` : ''));
console.log(`model: ${DIR} (hidden ${cfg.hidden_size}, ${cfg.num_hidden_layers} layers, ${cfg.num_attention_heads} heads, ` +
  `intermediate ${cfg.intermediate_size}, vocab ${cfg.vocab_size}${torchInfo ? `; ${(torchInfo.params / 1e6).toFixed(1)}M parameters` : ''}; ` +
  `model.safetensors ${(checkpointBytes / 1e6).toFixed(1)} MB), batch 1, random ids framed by [CLS]/[SEP]`);
console.log(`command: ${command}`);
console.log(`${ROUNDS} round${ROUNDS > 1 ? 's' : ''} x ${REPEATS} timed forwards after ${WARMUP} warm-up per runner and length; ` +
  `load average (1, 5, 15 min) at start: ${loadStart}, at end: ${load()}; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

const COLUMNS = [
  ['torch:1', 'PyTorch 1 thread'], ['torch:best', 'PyTorch best'], ['ort:1', 'ORT-web 1 thread'],
  ['ort:2', 'ORT-web 2 threads'], ['ours:1', 'ours SIMD128 1 thread'], ['ours:2', 'ours threads (2)'],
];
console.log('## Forward pass, median ms\n');
console.log(`| tokens | ${COLUMNS.map(([, t]) => t).join(' | ')} |\n|---${'|---'.repeat(COLUMNS.length)}|`);
for (const T of TOKENS) {
  const cells = COLUMNS.map(([name]) => {
    if (name === 'torch:best') {
      const b = torchBest(T);
      return b ? `${fmt(b.ms)} (${b.threads} thr)` : '-';
    }
    return fmt(cell(name, T));
  });
  console.log(`| ${T} | ${cells.join(' | ')} |`);
}

console.log('\n## Ratios (time / time; below 1 is faster)\n');
const ratio = (a, b) => (a !== null && b !== null ? a / b : null);
for (const T of TOKENS) {
  const o1 = cell('ours:1', T);
  const o2 = cell('ours:2', T);
  const r1 = cell('ort:1', T);
  const r2 = cell('ort:2', T);
  const tb = torchBest(T);
  const parts = [
    `ORT-web 1 thread / PyTorch 1 thread ${fmt(ratio(r1, cell('torch:1', T)), 2)}`,
    `ORT-web 2 threads / 1 thread ${fmt(ratio(r2, r1), 2)}`,
  ];
  if (o1 !== null) parts.push(`ours 1 thread / ORT-web 1 thread **${fmt(ratio(o1, r1), 2)}** (${o1 <= r1 ? 'PASS' : 'FAIL'}, target <= 1)`);
  if (o2 !== null) parts.push(`ours threads / ORT-web 2 threads **${fmt(ratio(o2, r2), 2)}** (${o2 <= r2 ? 'PASS' : 'FAIL'}, target <= 1)`);
  if (o1 !== null && tb) parts.push(`ours 1 thread / PyTorch best ${fmt(ratio(o1, tb.ms), 2)}`);
  console.log(`- ${T} tokens: ${parts.join('; ')}`);
}

console.log('\n## Parity with PyTorch (max |difference|, last round) and loading\n');
console.log('| runner | tokens | last hidden state | attentions (all layers) |\n|---|---|---|---|');
for (const rounds of Object.values(childRounds)) {
  const r = rounds[rounds.length - 1];
  if (!r) continue;
  for (const x of r.results) {
    const d = x.max_abs_diff;
    const show = (v) => (typeof v === 'number' ? v.toExponential(2) : JSON.stringify(v));
    console.log(`| ${r.label} | ${x.tokens} | ${show(d.last_hidden_state)} | ${show(d.attentions)} |`);
  }
}
console.log(`\n| runner | load | first forward (${TOKENS[0]} tokens) | time to first attention | peak WASM heap | ` +
  'max RSS of its process | CPU s per OS thread over the timed forwards |\n|---|---|---|---|---|---|---|');
for (const rounds of Object.values(childRounds)) {
  if (!rounds.length) continue;
  const r = rounds[rounds.length - 1];
  const m = (key) => median(rounds.map((x) => x[key]));
  const heap = r.peak_heap_bytes === null ? '-' :
    `${(r.peak_heap_bytes / 1e6).toFixed(0)} MB = ${(r.peak_heap_bytes / checkpointBytes).toFixed(2)}x the checkpoint ` +
    `(${r.peak_heap_bytes <= 1.5 * checkpointBytes ? 'PASS' : 'FAIL'}, target <= 1.5x)`;
  console.log(`| ${r.label} | ${fmt(m('load_ms'), 0)} ms | ${fmt(m('first_forward_ms'), 0)} ms | ${fmt(m('first_attention_ms'), 0)} ms | ${heap} | ` +
    `${(r.max_rss_bytes / 1e6).toFixed(0)} MB | ${r.timed_cpu_s_by_thread?.join(', ') ?? '-'} |`);
}
console.log('\n(Load: the runner\'s creation (reading model.onnx or model.safetensors included); time to first attention: ' +
  'load + first forward unless the runner measures its own. The last column lists every thread of the runner\'s process that ' +
  'used over 0.05 s of CPU during the timed forwards: two large entries mean the second thread shared the work; V8\'s ' +
  'background compilation and GC threads show as small ones.)');
const skipped = RUNNERS.filter(([k, t]) => !childRounds[`${k}:${t}`].length).map(([k, t]) => `${k} ${t} thread${t > 1 ? 's' : ''}`);
if (skipped.length) console.log(`\nnot run: ${skipped.join(', ')} (its runner returned null: benchmarks/bert.mjs ours())`);
console.log('\nRuns (ms):');
for (const [name, byT] of Object.entries(pooled)) {
  for (const [T, runs] of Object.entries(byT)) console.log(`- ${name} ${T} tokens: ${runs.map((r) => r.toFixed(1)).join(', ')}`);
}

const JSON_OUT = arg('--json', null);
if (JSON_OUT) {
  writeFileSync(JSON_OUT, JSON.stringify({ command, dir: DIR, tokens: TOKENS, repeats: REPEATS, warmup: WARMUP,
    rounds: ROUNDS, load_start: loadStart, load_end: load(), torch: torchRounds, runners: childRounds,
    medians: Object.fromEntries(Object.entries(pooled).map(([n, byT]) => [n, Object.fromEntries(
      Object.entries(byT).map(([T, runs]) => [T, median(runs)]))])) }, null, 1));
}
