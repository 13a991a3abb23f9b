#!/usr/bin/env node
// The Llama-family decode benchmark (issue 37, Proof "Speed"), printed as markdown for docs/benchmarks.md.
// benchmarks/llama_torch.py writes --dir first: a BF16 checkpoint in a real model's shape (random
// weights), seeded prompts, the plain-PyTorch greedy ids, and (--onnx) that step as ONNX in float32 and in
// transformers.js's q8. Runners, each in a fresh Node process, in alternating rounds (the order rotates
// every round, so that none always goes first on a machine whose speed drifts):
//   ours      the SIMD128 WASM build (--threads 1), or the Node threads build with --threads - 1 workers:
//             loadCheckpoint(model_type) from config.json + model.safetensors (the BF16 weights stay 16-bit),
//             then Decoder.beginWriting + nextToken (the page's and the CLI's calls: each step feeds the
//             token through the cache, chooses the next and keeps the top 10 and its attention row)
//   ort-f32   onnxruntime-web (npm, WASM backend, --threads threads) on model.onnx, past/present cache
//   ort-q8    the same on model_q8.onnx (MatMulInteger), the model a transformers.js user gets by default
// For each prompt of --prompts: the prompt's pass, then --new greedy steps; a step is timed from feeding
// a token to having chosen the next. Per round a runner's decode time is the median of its steps; the
// table gives each round's and their median. Time to the first token from the files: loading (the
// child's one load) + the prompt's pass + the first step. Memory: the process's peak resident set
// (VmHWM) and, for ours, WebAssembly's memory at the end (it never shrinks), against model.safetensors.
// The greedy ids of the float32 runners are checked against PyTorch's (the q8 model computes other
// numbers: its ids are not compared).
// Usage: node benchmarks/llama.mjs [--dir /tmp/attnlab-smollm2-135m] [--prompts 32,128] [--new 64] [--rounds 5]
//          [--runners ours,ort-f32,ort-q8] [--threads 1] [--root CHECKOUT]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCRIPT = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DIR = arg('--dir', '/tmp/attnlab-smollm2-135m');
const PROMPTS = arg('--prompts', '32,128').split(',').map(Number);
const NEW = Number(arg('--new', 64));
const ROUNDS = Number(arg('--rounds', 5));
const THREADS = Number(arg('--threads', 1));
const RUNNERS = arg('--runners', 'ours,ort-f32,ort-q8').split(',');
// Ours from another checkout (its web/, wasm_bindings/ and public/build): a snapshot that others' edits in
// progress cannot change between rounds, or a build before a change (as benchmarks/ab_decode.mjs takes).
const ROOT = path.resolve(arg('--root', path.join(path.dirname(SCRIPT), '..')));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const argmax = (z) => {  // a plain loop (reduce() costs a good part of a millisecond on 150k logits)
  let best = 0;
  for (let i = 1; i < z.length; i++) if (z[i] > z[best]) best = i;
  return best;
};
// The process's CPU time (user + system) a step since `start`, over `steps` steps: on a machine shared
// with other jobs the wall-clock time of a step also counts the time this process waited for a core.
const cpuMs = (start, steps) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000 / steps;
};
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const files = () => ({ config: readFileSync(path.join(DIR, 'config.json'), 'utf8'), ids: JSON.parse(readFileSync(path.join(DIR, 'ids.json'), 'utf8')) });

async function ours() {
  const { loadAttnLabNode } = await import(pathToFileURL(path.join(ROOT, 'web', 'node_loader.mjs')).href);
  const { diskSource } = await import(pathToFileURL(path.join(ROOT, 'web', 'cli', 'file_source.mjs')).href);
  const module = await loadAttnLabNode({ build: THREADS > 1 ? 'simd-threads' : 'simd' });
  if (THREADS > 1) module.setWorkerThreads(THREADS - 1);
  const { config, ids } = files();
  const t0 = performance.now();
  const weights = await diskSource(path.join(DIR, 'model.safetensors'));
  const model = await module.loadCheckpoint(JSON.parse(config).model_type, { config, size: weights.size, read: weights.read });
  const loadMs = performance.now() - t0;
  const results = [];
  for (const T of PROMPTS) {
    const t1 = performance.now();
    model.beginWriting(ids.prompts[T], { temperature: 0, maxNewTokens: NEW + 1, stopAtEos: false }, { backend: 'simd128' });
    const promptMs = performance.now() - t1;
    // The first nextToken chooses the prompt's next token (and feeds it): the first written token.
    const first = model.nextToken();
    const firstTokenMs = loadMs + performance.now() - t1;
    const steps = [], greedy = [first.id];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < NEW - 1; i++) {
      const s = performance.now();
      const step = model.nextToken();
      steps.push(performance.now() - s);
      greedy.push(step.id);
    }
    results.push({ prompt: T, prompt_ms: promptMs, first_token_ms: firstTokenMs, decode_ms: median(steps), cpu_ms: cpuMs(cpu0, NEW - 1), greedy });
  }
  model.delete();
  return { runner: `attnlab ${THREADS > 1 ? `simd-threads build, ${THREADS} threads` : 'simd build, 1 thread'} (BF16 weights)`, load_ms: loadMs,
    wasm_bytes: module._module.HEAPU8.buffer.byteLength, peak_rss: peakRss(), results };
}

async function ortWeb(file) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = THREADS;
  const { config, ids } = files();
  const c = JSON.parse(config);
  const [L, Hkv] = [c.num_hidden_layers, c.num_key_value_heads];
  const D = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(path.join(DIR, file), { executionProviders: ['wasm'] });
  const loadMs = performance.now() - t0;
  const results = [];
  for (const T of PROMPTS) {
    const run = (tokens, past) => {
      const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]) };
      for (let l = 0; l < L; l++) {
        for (const kv of ['key', 'value']) feeds[`past_key_values.${l}.${kv}`] = past ? past[`present.${l}.${kv}`] : new ort.Tensor('float32', new Float32Array(0), [1, Hkv, 0, D]);
      }
      return session.run(feeds);
    };
    const t1 = performance.now();
    let out = await run(ids.prompts[T], null);
    const promptMs = performance.now() - t1;
    let next = argmax(out.logits.data);
    // Its first step, as ours: the prompt's next token fed through the cache and the one after it chosen.
    out = await run([next], out);
    const greedy = [next];
    next = argmax(out.logits.data);
    const firstTokenMs = loadMs + performance.now() - t1;
    const steps = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < NEW - 1; i++) {
      greedy.push(next);
      const s = performance.now();
      out = await run([next], out);
      next = argmax(out.logits.data);
      steps.push(performance.now() - s);
    }
    results.push({ prompt: T, prompt_ms: promptMs, first_token_ms: firstTokenMs, decode_ms: median(steps), cpu_ms: cpuMs(cpu0, NEW - 1), greedy });
  }
  await session.release();
  return { runner: `onnxruntime-web ${ort.env.versions.web}, wasm, ${THREADS} thread${THREADS > 1 ? 's' : ''}, ${file}`, load_ms: loadMs, peak_rss: peakRss(), results };
}

const CHILDREN = { ours, 'ort-f32': () => ortWeb('model.onnx'), 'ort-q8': () => ortWeb('model_q8.onnx') };

if (process.argv.includes('--child')) {
  const kind = arg('--child');
  process.stdout.write(`${JSON.stringify(await CHILDREN[kind]())}\n`);
  process.exit(0);  // onnxruntime-web's workers would keep the process alive
}

for (const r of RUNNERS) if (!CHILDREN[r]) throw new Error(`--runners: ${r} is not one of ${Object.keys(CHILDREN).join(', ')}`);
for (const f of ['config.json', 'model.safetensors', 'ids.json', ...(RUNNERS.includes('ort-f32') ? ['model.onnx'] : []), ...(RUNNERS.includes('ort-q8') ? ['model_q8.onnx'] : [])]) {
  if (!existsSync(path.join(DIR, f))) throw new Error(`${path.join(DIR, f)} is missing: run /usr/bin/python3 benchmarks/llama_torch.py --out ${DIR} --onnx first`);
}
// Every child compiles its WebAssembly with V8's optimizing tier before it runs (no Liftoff baseline code):
// the steady state a page reaches after its first seconds. Without it, onnxruntime-web's 14 MB module ran
// Liftoff code for the whole of a child on this busy 2-core machine while TurboFan compiled it in the
// background (measured: 611 and 297 ms a token at 32 and 128 prompt tokens, against 89 and 96 with the
// flag, in the same minute); ours (1 MB) tiers up within its load.
const NODE_FLAGS = ['--no-liftoff'];
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(', ');
const loadBefore = load();
const rounds = Object.fromEntries(RUNNERS.map((r) => [r, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = RUNNERS.map((_, i) => RUNNERS[(i + round) % RUNNERS.length]);
  for (const kind of order) {
    const r = spawnSync(process.execPath, [...NODE_FLAGS, SCRIPT, ...process.argv.slice(2), '--child', kind], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`${kind} failed: ${r.stderr.slice(-2000)}`);
    rounds[kind].push(JSON.parse(r.stdout.trim().split('\n').pop()));
  }
}
const c = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const reference = JSON.parse(readFileSync(path.join(DIR, 'ids.json'), 'utf8')).greedy;
const checkpoint = statSync(path.join(DIR, 'model.safetensors')).size;
const MB = (b) => (b / 2 ** 20).toFixed(0);
console.log(`${c.model_type} shape: ${c.num_hidden_layers} layers, E ${c.hidden_size}, ${c.num_attention_heads} query heads over ${c.num_key_value_heads}, F ${c.intermediate_size}, V ${c.vocab_size}; random BF16 weights, model.safetensors ${MB(checkpoint)} MB`);
console.log(`node ${NODE_FLAGS.join(' ')} for every runner; greedy, ${NEW} written tokens per prompt (decode: the median of the ${NEW - 1} steps after the first), ${ROUNDS} rounds, ${os.cpus().length} cores, load average ${loadBefore} before, ${load()} after\n`);
console.log('| runner | prompt | decode per token (ms): each round | median | CPU ms per token: each round | median | prompt pass (ms) | first token from files (ms) | greedy = PyTorch | peak RSS (MB) |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
const decodeOf = {}, cpuOf = {};
for (const kind of RUNNERS) {
  const runs = rounds[kind];
  for (const T of PROMPTS) {
    const res = runs.map((r) => r.results.find((x) => x.prompt === T));
    const decode = res.map((r) => r.decode_ms), cpu = res.map((r) => r.cpu_ms);
    decodeOf[`${kind} ${T}`] = median(decode);
    cpuOf[`${kind} ${T}`] = median(cpu);
    const same = kind === 'ort-q8' ? '(8-bit)' : `${res.filter((r) => JSON.stringify(r.greedy) === JSON.stringify(reference[T].slice(0, NEW))).length}/${res.length}`;
    console.log(`| ${runs[0].runner} | ${T} | ${decode.map((x) => x.toFixed(2)).join(', ')} | **${median(decode).toFixed(2)}** | ${cpu.map((x) => x.toFixed(2)).join(', ')} | **${median(cpu).toFixed(2)}** | ${median(res.map((r) => r.prompt_ms)).toFixed(0)} | ${median(res.map((r) => r.first_token_ms)).toFixed(0)} | ${same} | ${MB(Math.max(...runs.map((r) => r.peak_rss)))} |`);
  }
}
if (RUNNERS.includes('ours')) {
  console.log('');
  for (const T of PROMPTS) {
    const ratios = ['ort-f32', 'ort-q8'].filter((k) => RUNNERS.includes(k)).map((k) => `${(decodeOf[`ours ${T}`] / decodeOf[`${k} ${T}`]).toFixed(2)}x ${k}'s (CPU time: ${(cpuOf[`ours ${T}`] / cpuOf[`${k} ${T}`]).toFixed(2)}x)`);
    if (ratios.length) console.log(`- ${T}-token prompt: ours = ${ratios.join(', ')} (medians)`);
  }
  const wasm = Math.max(...rounds.ours.map((r) => r.wasm_bytes)), rss = Math.max(...rounds.ours.map((r) => r.peak_rss));
  console.log(`- ours, peak memory: WebAssembly ${MB(wasm)} MB = ${(wasm / checkpoint).toFixed(2)}x the checkpoint; process peak RSS ${MB(rss)} MB = ${(rss / checkpoint).toFixed(2)}x; loading ${median(rounds.ours.map((r) => r.load_ms)).toFixed(0)} ms (median)`);
}
