// A bounded, seeded fuzz of the page's way of reading a BERT checkpoint: module.loadBert
// (wasm_bindings/attnlab.js, raw_bert.cpp: the header length, the header, the plan, then each tensor
// streamed in chunks) on mutated copies of the three tiny checkpoints of tests/fixtures/bert_tiny/,
// with tests/fuzz/js_mutation_fuzz.mjs's mutations (header edits: tensors dropped, duplicated, renamed,
// dtypes, shapes and offsets changed; byte flips, truncations, splices) and a random chunk size. Each
// case either loads, and then runs a forward and predict() of the right sizes, or is refused with an
// AttnLabError that names model.safetensors; after all of them the module loads the real checkpoint
// and gives the same numbers as before. (The C++ reader behind it runs under libFuzzer with ASan and
// UBSan for 10^6 inputs: tests/fuzz/fuzz_bert_checkpoint.cpp, docs/reliability.md.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, lab } from './support.mjs';
import { makeCase, prng } from '../fuzz/js_mutation_fuzz.mjs';

const folder = path.join(FIXTURES, 'bert_tiny');
const VARIANTS = ['modern', 'legacy', 'bf16'];
// The three configs differ only in "architectures" and "torch_dtype": every variant loads with modern's.
const CONFIG = readFileSync(path.join(folder, 'modern', 'config.json'), 'utf8');
const SEEDS = VARIANTS.map((v) => new Uint8Array(readFileSync(path.join(folder, v, 'model.safetensors'))));
const CASES = 1500;
// Chunk sizes for the streamed tensors: 16 MB is the page's (one read per tensor here); the small ones
// split a tensor across many _write calls, and 6 splits F32 and F16 elements across two.
const CHUNKS = [6, 64, 1000, 4096, 16 * 1024 * 1024];
// [CLS] ? [MASK] ? [SEP] of the tiny vocabulary, segments A and B.
const IDS = [2, 9, 4, 17, 3], TYPES = [0, 0, 0, 1, 1];

const load = (module, bytes, chunkBytes) => module.loadBert({
  config: CONFIG, size: bytes.length, chunkBytes,
  read: async (offset, length) => bytes.subarray(offset, offset + length),
});

/** The numbers the checks compare: every layer's attention and hidden state, and the top 5 at [MASK]. */
function outputs(bert) {
  bert.forward(IDS, TYPES);
  const layers = [...Array(bert.config.layers).keys()];
  return { attention: layers.map((l) => bert.attention(l)), hidden: layers.map((l) => bert.hidden(l + 1)), top: bert.predict(2) };
}

test(`module.loadBert on ${CASES} mutated checkpoints (seed 1): a model that runs, or an AttnLabError naming model.safetensors`, async () => {
  const module = await lab('simd');
  const before = await load(module, SEEDS[0]);
  const expected = outputs(before);
  before.delete();

  const r = prng(1);
  const kinds = new Map();
  let loaded = 0, nonFinite = 0;
  const t0 = performance.now();
  for (let i = 0; i < CASES; i++) {
    const bytes = makeCase(SEEDS, r);
    const chunk = r.pick(CHUNKS);
    let bert;
    try {
      bert = await load(module, bytes, chunk);
    } catch (error) {
      const where = `case ${i} (${bytes.length} bytes, chunks of ${chunk}, base64 ${Buffer.from(bytes).toString('base64').slice(0, 200)}...)`;
      assert.ok(error instanceof module.AttnLabError, `${where}: ${error?.stack ?? error}`);
      assert.match(error.message, /^model\.safetensors[: ]/, where);
      const kind = error.message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/(?<![\w-])\d+/g, 'N').slice(0, 100);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      continue;
    }
    loaded++;
    try {
      const { config, mlm } = bert.summary;
      const { attention, hidden, top } = outputs(bert);
      assert.equal(attention[0].length, config.heads * IDS.length * IDS.length);
      assert.equal(hidden[config.layers - 1].length, IDS.length * config.hiddenSize);
      assert.equal(top.length, mlm ? 5 : 0);
      // Finite weights can still overflow float32 (a weight of 3e38) and give NaN: counted, not a failure
      // (tests/fuzz/fuzz_bert_checkpoint.cpp tells the overflows apart with the FP flags).
      if (![...hidden[config.layers - 1]].every(Number.isFinite)) nonFinite++;
    } finally {
      bert.delete();
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const rejected = CASES - loaded;
  console.log(`${CASES} cases in ${seconds.toFixed(1)} s: ${loaded} loaded (${nonFinite} with a non-finite output), ${rejected} refused`);
  for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${String(n).padStart(7)}  ${kind}`);
  // Both sides are reached: mutated weights still load, broken headers do not.
  assert.ok(loaded > 100 && rejected > 500, `${loaded} loaded, ${rejected} refused`);

  const after = await load(module, SEEDS[0]);
  assert.deepEqual(outputs(after), expected, 'the module gives the same numbers after the fuzzing');
  after.delete();
});
