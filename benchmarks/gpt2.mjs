#!/usr/bin/env node
// The Writing lab's speed and memory (issue 26), printed as markdown for docs/benchmarks.md. A GPT-2 in
// gpt2-small's shape (random weights; benchmarks/gpt2_torch.py writes it, with prompts of --prompts
// seeded ids and model.onnx, one cached step), greedy, --new tokens after each prompt, in one run:
//   PyTorch native, 1 thread: gpt2_torch.py's cached step (the lab's maths in plain torch),
//   ours: the SIMD128 WASM build under Node, 1 thread: module.loadCheckpoint('gpt2') from
//     model.safetensors, then Gpt2.beginWriting + nextToken (the page's calls; each step draws a token
//     and feeds it through the cache),
//   onnxruntime-web (npm, WASM backend, 1 thread) on model.onnx, its past/present cache.
// Each of ours and onnxruntime-web's runs in its own Node process. Per-token decode is the median of the
// steps, each from feeding a token to having chosen the next (ours also keeps the top 10 and the new
// token's attention row, for the page); time to first token is from the files (config.json + model.safetensors) to the first written
// token; peak memory is WebAssembly's memory after the run (it never shrinks) against the weights file.
// The greedy ids of every runner are checked against PyTorch's.
// Usage: node benchmarks/gpt2.mjs [--dir /tmp/attnlab-gpt2] [--prompts 32,128] [--new 32] [--rounds 5] [--small]
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SMALL = process.argv.includes('--small');
const DIR = arg('--dir', SMALL ? '/tmp/attnlab-gpt2-small' : '/tmp/attnlab-gpt2');
const PROMPTS = arg('--prompts', '32,128').split(',').map(Number);
const NEW = Number(arg('--new', 32));
const ROUNDS = Number(arg('--rounds', 5));
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b), mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const readIds = () => JSON.parse(readFileSync(path.join(DIR, 'ids.json'), 'utf8')).prompts;

async function ours() {
  const { loadAttnLabNode } = await import('../web/node_loader.mjs');
  const { diskSource } = await import('../web/cli/file_source.mjs');
  const module = await loadAttnLabNode({ build: 'simd' });
  const ids = readIds();
  const results = [];
  for (const T of PROMPTS) {
    // From the files each time: the time to the first token includes the load.
    const t0 = performance.now();
    const weights = await diskSource(path.join(DIR, 'model.safetensors'));
    const gpt2 = await module.loadCheckpoint('gpt2', { config: readFileSync(path.join(DIR, 'config.json'), 'utf8'), size: weights.size, read: weights.read });
    const loadMs = performance.now() - t0;
    const t1 = performance.now();
    gpt2.beginWriting(ids[T], { temperature: 0, maxNewTokens: NEW + 1, stopAtEos: false }, { backend: 'simd128' });
    const promptMs = performance.now() - t1;
    const steps = [], greedy = [];
    let firstTokenMs = 0;
    for (let i = 0; i < NEW; i++) {
      const s = performance.now();
      const step = gpt2.nextToken();
      steps.push(performance.now() - s);
      if (i === 0) firstTokenMs = performance.now() - t0;
      greedy.push(step.id);
    }
    gpt2.delete();
    await weights.close?.();
    results.push({ prompt: T, load_ms: loadMs, prompt_ms: promptMs, first_token_ms: firstTokenMs, decode_ms_median: median(steps), greedy });
  }
  return { runner: 'attnlab simd build, 1 thread', peak_heap_bytes: module._module.HEAPU8.buffer.byteLength, results };
}

async function ortWeb() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(path.join(DIR, 'model.onnx'), { executionProviders: ['wasm'] });
  const loadMs = performance.now() - t0;
  const c = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
  const [L, H, D] = [c.n_layer, c.n_head, c.n_embd / c.n_head];
  const ids = readIds();
  const results = [];
  const argmax = (z) => {  // a plain loop: the fastest JS has (reduce() costs half a millisecond here)
    let best = 0;
    for (let i = 1; i < z.length; i++) if (z[i] > z[best]) best = i;
    return best;
  };
  for (const T of PROMPTS) {
    const run = (tokens, past) => session.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]), past });
    const t1 = performance.now();
    let out = await run(ids[T], new ort.Tensor('float32', new Float32Array(0), [L, 2, H, 0, D]));
    const promptMs = performance.now() - t1;
    // Each timed step feeds the token and chooses the next (the argmax), as each of ours does.
    let next = argmax(out.logits.data);
    const steps = [], greedy = [next];
    for (let i = 0; i < NEW; i++) {
      const s = performance.now();
      out = await run([next], out.present);
      next = argmax(out.logits.data);
      steps.push(performance.now() - s);
      if (greedy.length < NEW) greedy.push(next);
    }
    results.push({ prompt: T, load_ms: loadMs, prompt_ms: promptMs, decode_ms_median: median(steps), greedy });
  }
  await session.release();
  return { runner: `onnxruntime-web ${ort.env.versions.web}, wasm, 1 thread`, results };
}

if (process.argv.includes('--child')) {
  const kind = process.argv[process.argv.indexOf('--child') + 1];
  process.stdout.write(`${JSON.stringify(await (kind === 'ours' ? ours() : ortWeb()))}\n`);
  process.exit(0);  // onnxruntime-web's workers would keep the process alive
}

const torch = spawnSync('/usr/bin/python3', [path.join(REPO_ROOT, 'benchmarks', 'gpt2_torch.py'), '--out', DIR, '--prompts', PROMPTS.join(','), '--new', String(NEW), ...(SMALL ? ['--small'] : [])], { encoding: 'utf8', maxBuffer: 1 << 26 });
if (torch.status !== 0) throw new Error(`gpt2_torch.py failed: ${torch.stderr}`);
const pytorch = JSON.parse(torch.stdout.trim().split('\n').pop());
// Ours and onnxruntime-web alternate, one fresh process each, in the order ours-ort, ort-ours, ...: the
// machine's memory bandwidth drifts by several percent over a minute, and neither runner should always
// go first.
const rounds = { ours: [], ort: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? ['ours', 'ort'] : ['ort', 'ours']) {
    const r = spawnSync(process.execPath, [SCRIPT, '--child', kind, '--dir', DIR, '--prompts', PROMPTS.join(','), '--new', String(NEW)], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`${kind} failed: ${r.stderr}`);
    rounds[kind].push(JSON.parse(r.stdout.trim().split('\n').pop()));
  }
}
const weightsBytes = statSync(path.join(DIR, 'model.safetensors')).size;
const reference = pytorch.results;
console.log(`GPT-2 ${SMALL ? '(small test shape)' : 'small shape'}, random weights (${(weightsBytes / 2 ** 20).toFixed(0)} MB model.safetensors), greedy, ${NEW} new tokens, ${ROUNDS} alternating rounds\n`);
console.log('| runner | prompt | prompt pass (ms, median) | decode per token (ms): each round\'s median | their median | time to first token from files (ms, median) | greedy = PyTorch |');
console.log('|---|---|---|---|---|---|---|');
const fmt = (x, digits = 1) => (x ? x.toFixed(digits) : '-');
for (const run of [[pytorch], rounds.ours, rounds.ort]) {
  for (const prompt of PROMPTS) {
    const results = run.map((r) => r.results.find((x) => x.prompt === prompt));
    const want = JSON.stringify(reference.find((x) => x.prompt === prompt).greedy);
    const decode = results.map((r) => r.decode_ms_median);
    const same = results.every((r) => JSON.stringify(r.greedy) === want);
    console.log(`| ${run[0].runner} | ${prompt} | ${fmt(median(results.map((r) => r.prompt_ms)))} | ${decode.map((x) => x.toFixed(2)).join(', ')} | **${median(decode).toFixed(2)}** | ${fmt(median(results.map((r) => r.first_token_ms ?? 0)), 0)} | ${same ? 'yes' : 'no'} |`);
  }
}
const peak = Math.max(...rounds.ours.map((r) => r.peak_heap_bytes));
console.log(`\nPeak WebAssembly memory (ours): ${(peak / 2 ** 20).toFixed(0)} MB = ${(peak / weightsBytes).toFixed(2)} x the checkpoint`);
