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
// Usage: node benchmarks/gpt2.mjs [--dir /tmp/attnlab-gpt2] [--prompts 32,128] [--new 32] [--small]
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
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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
const runs = [JSON.parse(torch.stdout.trim().split('\n').pop())];
for (const kind of ['ours', 'ort']) {
  const r = spawnSync(process.execPath, [SCRIPT, '--child', kind, '--dir', DIR, '--prompts', PROMPTS.join(','), '--new', String(NEW)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) { console.error(`${kind} failed: ${r.stderr}`); continue; }
  runs.push(JSON.parse(r.stdout.trim().split('\n').pop()));
}
const weightsBytes = statSync(path.join(DIR, 'model.safetensors')).size;
const reference = runs[0].results;
console.log(`GPT-2 ${SMALL ? '(small test shape)' : 'small shape'}, random weights (${(weightsBytes / 2 ** 20).toFixed(0)} MB model.safetensors), greedy, ${NEW} new tokens\n`);
console.log('| runner | prompt | prompt pass (ms) | decode per token (ms, median) | time to first token from files (ms) | greedy = PyTorch |');
console.log('|---|---|---|---|---|---|');
for (const run of runs) {
  for (const r of run.results) {
    const same = JSON.stringify(r.greedy) === JSON.stringify(reference.find((x) => x.prompt === r.prompt).greedy);
    console.log(`| ${run.runner} | ${r.prompt} | ${r.prompt_ms.toFixed(1)} | ${r.decode_ms_median.toFixed(2)} | ${r.first_token_ms ? r.first_token_ms.toFixed(0) : '-'} | ${same ? 'yes' : 'no'} |`);
  }
}
const mine = runs.find((r) => r.peak_heap_bytes);
if (mine) console.log(`\nPeak WebAssembly memory (ours): ${(mine.peak_heap_bytes / 2 ** 20).toFixed(0)} MB = ${(mine.peak_heap_bytes / weightsBytes).toFixed(2)} x the checkpoint`);
