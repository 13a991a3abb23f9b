// A bounded, seeded fuzz of the page's way of reading a BERT checkpoint: module.loadBert
// (wasm_bindings/attnlab.js, raw_bert.cpp: the header length, the header, the plan, then each tensor
// streamed in chunks) on mutated copies of the three tiny checkpoints of tests/fixtures/bert_tiny/,
// with tests/fuzz/js_mutation_fuzz.mjs's mutations (header edits: tensors dropped, duplicated, renamed,
// dtypes, shapes and offsets changed; byte flips, truncations, splices) and a random chunk size. Each
// case either loads, and then runs a forward and predict() of the right sizes, or is refused with an
// AttnLabError that names model.safetensors; after all of them the module loads the real checkpoint
// and gives the same numbers as before. (The C++ reader behind it runs under libFuzzer with ASan and
// UBSan for 10^6 inputs: tests/fuzz/fuzz_bert_checkpoint.cpp, docs/reliability.md.) Then each message
// that fuzzer reaches and no other test names in full, with a case and its exact text.
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
const CASES = 2500;  // ~12 s on a busy core (6,000: 29 s; 30,000 once: the same two findings below)
// Chunk sizes for the streamed tensors: 16 MB is the page's (one read per tensor here); the small ones
// split a tensor across many _write calls, and 6 splits F32 and F16 elements across two.
const CHUNKS = [6, 64, 1000, 4096, 16 * 1024 * 1024];
// [CLS] ? [MASK] ? [SEP] of the tiny vocabulary, segments A and B.
const IDS = [2, 9, 4, 17, 3], TYPES = [0, 0, 0, 1, 1];

const load = (module, bytes, chunkBytes, config = CONFIG) => module.loadBert({
  config, size: bytes.length, chunkBytes,
  read: async (offset, length) => bytes.subarray(offset, offset + length),
});

/** The message loadBert refuses the bytes with (an AttnLabError), or 'loaded'. */
async function refused(module, bytes, config = CONFIG) {
  try {
    (await load(module, bytes, undefined, config)).delete();
  } catch (error) {
    assert.ok(error instanceof module.AttnLabError, String(error?.stack ?? error));
    return error.message;
  }
  return 'loaded';
}

/** The numbers the checks compare: every layer's attention and hidden state, and the top 5 at [MASK]. */
function outputs(bert) {
  bert.forward(IDS, TYPES);
  const layers = [...Array(bert.config.layers).keys()];
  return { attention: layers.map((l) => bert.attention(l)), hidden: layers.map((l) => bert.hidden(l + 1)), top: bert.predict(2) };
}

// Found by this fuzzer (2026-11-23) in wasm_bindings/raw_bert.cpp, and fixed there: a header length of
// 0 got "_header_length() first, once" (_plan took header_size_ == 0 for "not read yet"), and a file
// under 8 bytes "the header length takes the file's first 8 bytes" (loadBert handed _header_length the
// short read).

test('a file under 8 bytes, or with a header length of 0, is named as model.safetensors says it', async () => {
  const module = await lab('simd');
  // load_bert_checkpoint's messages for the same bytes (the whole-file path of tests/fuzz/fuzz_bert_checkpoint.cpp).
  assert.equal(await refused(module, new Uint8Array(3)), 'model.safetensors: not a safetensors file: 3 bytes, need at least 8');
  assert.equal(await refused(module, SEEDS[0].map((b, i) => (i < 8 ? 0 : b))),
    "model.safetensors: malformed safetensors header: expected '{' at the start of the header");
});

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
  assert.ok(loaded > 60 && rejected > 500, `${loaded} loaded, ${rejected} refused`);

  const after = await load(module, SEEDS[0]);
  assert.deepEqual(outputs(after), expected, 'the module gives the same numbers after the fuzzing');
  after.delete();
});

// The messages that tests/fuzz/fuzz_bert_checkpoint.cpp reaches (its BERT_FUZZ_MESSAGES=1 tally) and no
// other test names: each with a case, through the page's path.
test('every message the BERT fuzzers reach has a case: config.json fields missing or mistyped, a weight holding an infinity', async () => {
  const module = await lab('simd');
  const config = (from, to) => {
    assert.ok(CONFIG.includes(from), from);
    return CONFIG.replace(from, to);
  };
  const [modern, legacy, bf16] = SEEDS;
  const cases = [
    [config('"vocab_size": 179', '"vocabulary_size": 179'), 'config.json: "vocab_size" is missing (is this a BERT config?)'],
    [config('"hidden_size": 32', '"hidden_size": "32"'), 'config.json: "hidden_size" must be a number, got string'],
    [config('"hidden_size": 32', '"hidden_size": null'), 'config.json: "hidden_size" must be a number, got object'],
    [config('"type_vocab_size": 2', '"type_vocab_size": 17'), 'config.json: "type_vocab_size" must be a whole number in [1, 16], got 17'],
    [config('"layer_norm_eps": 1e-12', '"layer_norm_eps": 0'), 'config.json: "layer_norm_eps" must be a number in (0, 1), got 0'],
    [config('"hidden_act": "gelu"', '"hidden_act": 5'), 'config.json: "hidden_act" must be a string, got 5'],
  ];
  for (const [text, message] of cases) assert.equal(await refused(module, modern, text), message);

  // An infinity in each float dtype, little-endian: F32 -inf, F16 +inf (0x7c00), BF16 +inf (0x7f80).
  const poke = (bytes, name, at, value) => {
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    const out = bytes.slice();
    out.set(value, 8 + n + header[name].data_offsets[0] + at);
    return out;
  };
  const infinity = (name, element) => `model.safetensors: tensor "${name}" holds an infinity (or a value past float32's range) at element ${element}: the model would compute nothing but NaN`;
  assert.equal(await refused(module, poke(modern, 'bert.embeddings.LayerNorm.weight', 4 * 5, [0, 0, 0x80, 0xff])), infinity('bert.embeddings.LayerNorm.weight', 5));
  // A Linear weight is checked in the file's order, before it is packed.
  assert.equal(await refused(module, poke(legacy, 'encoder.layer.0.output.dense.weight', 2 * 9, [0x00, 0x7c])), infinity('encoder.layer.0.output.dense.weight', 9));
  assert.equal(await refused(module, poke(bf16, 'cls.predictions.bias', 2 * 3, [0x80, 0x7f])), infinity('cls.predictions.bias', 3));
});

test('every message the BERT fuzzers reach has a case: the header syntax and config.json syntax, at their byte', async () => {
  const module = await lab('simd');
  // A file whose header is `text`, then 4 data bytes.
  const file = (text) => {
    const header = new TextEncoder().encode(text);
    const bytes = new Uint8Array(8 + header.length + 4);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    return bytes;
  };
  const W = '"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}';
  const header = [
    ['{1:2}', 'malformed safetensors header: expected a tensor name'],
    ['{"w" 1}', 'malformed safetensors header: expected \':\' after "w"'],
    [`{${W} x}`, 'malformed safetensors header: expected \',\' or \'}\' after "w"'],
    ['{"w":{"dtype":"F32" "shape":[1]}}', 'malformed safetensors header: expected \',\' or \'}\' in tensor "w"'],
    ['{"__metadata__":{"a":"b" "c":"d"}}', 'malformed safetensors header: expected \',\' or \'}\' in __metadata__'],
    ['{"w":{1:2}}', 'malformed safetensors header: bad field in tensor "w"'],
    ['{"w":{"dtype":5,"shape":[1],"data_offsets":[0,4]}}', 'tensor "w" has unsupported dtype: expected a string'],
    [`{"__metadata__":{},"__metadata__":{},${W}}`, 'malformed safetensors header: duplicate __metadata__'],
  ];
  for (const [text, message] of header) assert.equal(await refused(module, file(text)), `model.safetensors: ${message}`, text);
  // core/io/json.cpp's messages, with the byte where the reader stopped.
  const config = [
    ['{"hidden_size": }', 16, 'a value was expected'],
    ['{"a": "\\x"}', 9, 'an unknown escape in a string'],
    ['{"a": "\\u12"}', 11, 'four hex digits were expected after \\u'],
    ['{"a": "\u0001"}', 8, 'a control character inside a string'],
    ['{"a": "b', 8, 'the string does not end'],
    ['{"a": 1e}', 8, 'a digit was expected in the exponent'],
    ['{"a": 1.}', 8, 'a digit was expected after \'.\''],
    ['{"a": -}', 7, 'a digit was expected'],
    ['{1: 2}', 1, 'a field name was expected'],
    ['{"a" 1}', 5, '\':\' was expected'],
    ['{"a": 1 "b": 2}', 8, '\',\' or \'}\' was expected'],
    ['{"a": [1 2]}', 9, '\',\' or \']\' was expected'],
    ['{"a": 1} x', 9, 'unexpected text after the JSON value'],
  ];
  for (const [text, at, message] of config) {
    assert.equal(await refused(module, SEEDS[0], text), `config.json is not JSON: bad JSON at byte ${at}: ${message}`, text);
  }
});
