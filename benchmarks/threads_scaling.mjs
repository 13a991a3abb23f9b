#!/usr/bin/env node
// Threads for the checkpoint models (issue 27, item 3): the Node threads build's BERT forward (bert-base's
// shape, random weights: benchmarks/bert_torch.py writes them to --dir) at every thread count this
// machine has, 1 to 1 + the module's worker threads, interleaved round by round; medians of --repeats
// forwards per count and round. Each count's last hidden state and attentions are checked to be the same
// bits as 1 thread's (the packed Linear products split their columns; each column is summed the same
// way). Printed as markdown for docs/benchmarks.md.
// Usage: node benchmarks/threads_scaling.mjs [--dir /tmp/attnlab-bert-base] [--tokens 32,128] [--repeats 5] [--rounds 3]
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadAttnLabNode } from '../web/node_loader.mjs';
import { openCheckpoint } from '../web/models/registry.js';
import { folderSources } from '../web/cli/file_source.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DIR = arg('--dir', '/tmp/attnlab-bert-base');
const TOKENS = arg('--tokens', '32,128').split(',').map(Number);
const REPEATS = Number(arg('--repeats', 5));
const ROUNDS = Number(arg('--rounds', 3));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const module = await loadAttnLabNode({ build: 'simd-threads' });
const { opened: { model: bert } } = await openCheckpoint(module, await folderSources(DIR), { lab: 'pretrained' });
const L = bert.config.layers;
const counts = Array.from({ length: module.workerThreads.available + 1 }, (_, i) => i + 1);
const ids = Object.fromEntries(TOKENS.map((T) => [T, Int32Array.from(JSON.parse(readFileSync(path.join(DIR, `ids_${T}.json`), 'utf8')).input_ids ?? JSON.parse(readFileSync(path.join(DIR, `ids_${T}.json`), 'utf8')))]));
const forward = (T) => {
  bert.forward(ids[T], new Int32Array(T), { backend: 'simd128' });
  return [bert.hidden(L).slice(), ...Array.from({ length: L }, (_, l) => bert.attention(l).slice())];
};
const times = {};
const reference = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const threads of counts) {
    module.setWorkerThreads(threads - 1);
    for (const T of TOKENS) {
      const out = forward(T); // warm-up, and the bits
      reference[T] ??= out;
      out.forEach((a, i) => {
        if (a.length !== reference[T][i].length || a.some((x, j) => !Object.is(x, reference[T][i][j]))) {
          throw new Error(`${threads} threads, ${T} tokens: output ${i} differs from 1 thread's`);
        }
      });
      for (let r = 0; r < REPEATS; r++) {
        const t0 = performance.now();
        forward(T);
        (times[`${threads}/${T}`] ??= []).push(performance.now() - t0);
      }
    }
  }
}
module.setWorkerThreads(module.workerThreads.available);
bert.delete();
console.log(`BERT forward (${DIR}), Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0].model}), load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`${ROUNDS} rounds x ${REPEATS} forwards per thread count, interleaved; every count's outputs are the same bits as 1 thread's.\n`);
console.log(`| threads | ${TOKENS.map((T) => `${T} tokens (ms)`).join(' | ')} | ${TOKENS.map((T) => `speed-up at ${T}`).join(' | ')} |`);
console.log(`|---|${TOKENS.map(() => '---|').join('')}${TOKENS.map(() => '---|').join('')}`);
for (const threads of counts) {
  const ms = TOKENS.map((T) => median(times[`${threads}/${T}`]));
  const speedUp = TOKENS.map((T, i) => (median(times[`1/${T}`]) / ms[i]).toFixed(2));
  console.log(`| ${threads} | ${ms.map((x) => x.toFixed(1)).join(' | ')} | ${speedUp.join(' | ')} |`);
}
