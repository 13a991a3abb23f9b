// A bounded, seeded slice of tests/fuzz/js_mutation_fuzz.mjs: web/io/safetensors.js on 100000 mutated
// files (~16 s on an idle core; the long runs are by hand: docs/reliability.md). It runs in a worker so that a case that never returns fails the test at a deadline
// instead of hanging the run. Needs no WASM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { runFuzz, describe } from '../fuzz/js_mutation_fuzz.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FUZZER = new URL('../fuzz/js_mutation_fuzz.mjs', import.meta.url).href;
const DEADLINE_MS = 180_000;  // ~10x the slice's time on one busy core

/** runFuzz(options) in a worker; rejects when it is still running at the deadline. */
function fuzzInWorker(options) {
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.fuzzer).then(({ runFuzz }) => {
      const t0 = performance.now();
      const stats = runFuzz(workerData.options);
      parentPort.postMessage({ stats, seconds: (performance.now() - t0) / 1000 });
    });`, { eval: true, workerData: { fuzzer: FUZZER, options } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error(`the fuzzer was still running after ${DEADLINE_MS / 1000} s: a case hangs the parser`));
    }, DEADLINE_MS);
    worker.once('message', (result) => { clearTimeout(timer); worker.terminate(); resolve(result); });
    worker.once('error', (e) => { clearTimeout(timer); reject(e); });
  });
}

test('parseSafetensors on 100000 mutated files (seed 1): a well-formed result or a SafetensorsError, never a hang', async () => {
  const { stats, seconds } = await fuzzInWorker({ seed: 1, cases: 100000 });
  console.log(describe(stats, seconds));
  assert.equal(stats.failure, null, stats.failure && `case ${stats.failure.index}: ${stats.failure.reason}\n` +
    `bytes (base64): ${Buffer.from(stats.failure.bytes).toString('base64').slice(0, 2000)}`);
  assert.equal(stats.cases, 100000);
  // The mutations reach both sides: some files still parse, most do not.
  assert.ok(stats.accepted > 250 && stats.rejected > 37500, `${stats.accepted} accepted, ${stats.rejected} rejected`);
});

test('the same seed (7) gives the same 3000 cases', () => {
  const a = runFuzz({ seed: 7, cases: 3000 }), b = runFuzz({ seed: 7, cases: 3000 });
  assert.deepEqual([a.accepted, a.rejected, [...a.kinds]], [b.accepted, b.rejected, [...b.kinds]]);
});

test('the fuzzer catches a parser that throws a TypeError, or drops a tensor named "__proto__"', () => {
  const throwsTypeError = (bytes) => {
    if (bytes.length % 7 === 3) throw new TypeError('x is not iterable');
    return parseSafetensors(bytes);
  };
  assert.match(runFuzz({ seed: 1, cases: 20000, parse: throwsTypeError }).failure?.reason ?? '', /^TypeError: x is not iterable/);
  const dropsProto = (bytes) => {
    const result = parseSafetensors(bytes);
    const tensors = {};
    for (const [name, t] of Object.entries(result.tensors)) tensors[name] = t;  // "__proto__" lost, as before the fix
    return { tensors: Object.assign(Object.create(null), tensors), metadata: result.metadata };
  };
  assert.match(runFuzz({ seed: 1, cases: 50000, parse: dropsProto }).failure?.reason ?? '', /every header tensor is kept/);
});
