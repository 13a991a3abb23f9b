// A bounded, seeded fuzz of the page's way of reading pytorch_model.bin: module.loadMarian({format: 'bin'})
// (wasm_bindings/attnlab.js, raw_marian.cpp, core/io/torch_checkpoint.h's TorchCheckpointReader: the
// end records, the central directory, the local headers, data.pkl, then each planned tensor streamed in
// slices and rebuilt from its storage, offset and strides) on mutated copies of the tiny Marian's
// tests/fixtures/marian_tiny/pytorch_model.bin. Mutations: byte flips anywhere and in the ZIP records;
// the ZIP records' numbers (sizes, offsets, counts, CRCs, name and extra lengths, methods, flags) set to
// edge values; data.pkl's bytes (opcodes, BININT1 arguments: shapes, strides, offsets, storage sizes)
// changed with its CRC-32 repaired, so the unpickler and the strided reads are reached; truncations,
// appended bytes, cut ranges. A random slice size for the tensors. Each case either loads, and then
// translates (greedy, 8 tokens) to ids and cross-attention of the right sizes, or is refused with an
// AttnLabError that names pytorch_model.bin; either way the WASM heap in use is back where it was.
// After all of them the real file gives the same outputs as before. (The C++ reader behind it runs
// under libFuzzer with ASan and UBSan: tests/fuzz/fuzz_torch_checkpoint.cpp, docs/reliability.md.)
//   ATTNLAB_FUZZ_CASES=N ATTNLAB_FUZZ_SEED=S node --test tests/node/fuzz_marian_bin.test.mjs   (the longer runs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, lab, crc32 } from './support.mjs';
import { prng } from '../fuzz/js_mutation_fuzz.mjs';

const FOLDER = path.join(FIXTURES, 'marian_tiny');
const CONFIG = readFileSync(path.join(FOLDER, 'config.json'), 'utf8');
const SEED_FILE = new Uint8Array(readFileSync(path.join(FOLDER, 'pytorch_model.bin')));
const CASES = Number(process.env.ATTNLAB_FUZZ_CASES ?? 1000);  // ~5 s on an idle core, ~12 s on a busy one (docs/reliability.md: longer runs)
const SEED = Number(process.env.ATTNLAB_FUZZ_SEED ?? 1);
// 16 MB is the page's (one read per tensor); the small ones split a tensor across many _write calls, and
// 98 splits F32 elements across two.
const CHUNKS = [98, 1000, 4096, 16 * 1024 * 1024];
// "▁The ▁cat" and </s> in the tiny vocabulary would do; any ids below vocab_size (649) work.
const SOURCE = [17, 42, 5, 0];
const OPCODES = [...'}](qXKMJRbsut.QchjrN)'].map((c) => c.charCodeAt(0)).concat([0x80, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x00, 0xff]);

// ---- the seed's ZIP records, found once: [offset, [field offsets and widths]]

function zipLayout(bytes) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = bytes.length - 22;
  while (eocd >= 0 && v.getUint32(eocd, true) !== 0x06054b50) eocd--;
  const locator = eocd - 20, zip64 = Number(v.getBigUint64(locator + 8, true));
  const directory = Number(v.getBigUint64(zip64 + 48, true));
  const records = [
    [eocd, [[4, 2], [6, 2], [8, 2], [10, 2], [12, 4], [16, 4], [20, 2]]],
    [locator, [[4, 4], [8, 8], [16, 4]]],
    [zip64, [[4, 8], [12, 2], [14, 2], [16, 4], [20, 4], [24, 8], [32, 8], [40, 8], [48, 8]]],
  ];
  let pickle = null;
  for (let at = directory; v.getUint32(at, true) === 0x02014b50;) {
    const n = v.getUint16(at + 28, true), x = v.getUint16(at + 30, true), c = v.getUint16(at + 32, true);
    const local = v.getUint32(at + 42, true);
    records.push([at, [[8, 2], [10, 2], [16, 4], [20, 4], [24, 4], [28, 2], [30, 2], [32, 2], [34, 2], [42, 4]]]);
    records.push([local, [[6, 2], [8, 2], [14, 4], [18, 4], [22, 4], [26, 2], [28, 2]]]);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + n));
    if (name.endsWith('/data.pkl')) {
      const begin = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
      pickle = { begin, end: begin + v.getUint32(at + 24, true), crcAt: at + 16 };
    }
    at += 46 + n + x + c;
  }
  return { records, pickle };
}

const LAYOUT = zipLayout(SEED_FILE);

function setField(bytes, at, width, value) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (at + width > bytes.length) return;  // cut off by an earlier edit
  if (width === 2) v.setUint16(at, Number(value & 0xffffn), true);
  else if (width === 4) v.setUint32(at, Number(value & 0xffffffffn), true);
  else v.setBigUint64(at, value & 0xffffffffffffffffn, true);
}
function getField(bytes, at, width) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return width === 2 ? BigInt(v.getUint16(at, true)) : width === 4 ? BigInt(v.getUint32(at, true)) : v.getBigUint64(at, true);
}

const EDITS = [
  // Byte flips anywhere (most land in the storages: weights change, or turn into NaN and are refused).
  (b, r) => { for (let i = 1 + r.int(4); i-- > 0;) b[r.int(b.length)] ^= 1 << r.int(8); return b; },
  // A byte of a ZIP record.
  (b, r) => { const [at] = r.pick(LAYOUT.records); const i = at + r.int(46); if (i < b.length) b[i] = r.int(256); return b; },
  // A number of a ZIP record set to an edge value.
  (b, r) => {
    const [at, fields] = r.pick(LAYOUT.records);
    const [off, width] = r.pick(fields);
    if (at + off + width > b.length) return b;  // cut off by an earlier edit
    const old = getField(b, at + off, width), max = (1n << BigInt(8 * width)) - 1n;
    const value = r.pick([0n, 1n, max, max - 1n, old + 1n, old - 1n, old + 64n, old - 64n, BigInt(b.length), BigInt(r.int(1 << 20)), 0xffffffffn]);
    setField(b, at + off, width, value < 0n ? 0n : value);
    return b;
  },
  // data.pkl: an opcode or argument changed, its CRC-32 repaired so the unpickler sees it.
  (b, r) => {
    const { begin, end, crcAt } = LAYOUT.pickle;
    if (end > b.length) return b;
    for (let i = 1 + r.int(3); i-- > 0;) {
      const at = begin + r.int(end - begin);
      b[at] = r.chance(0.5) ? r.pick(OPCODES) : r.int(256);
    }
    setField(b, crcAt, 4, BigInt(crc32(b.subarray(begin, end))));
    return b;
  },
  // data.pkl: a BININT1 argument (a size, stride, offset or storage numel) changed, CRC repaired.
  (b, r) => {
    const { begin, end, crcAt } = LAYOUT.pickle;
    if (end > b.length) return b;
    const ks = [];
    for (let i = begin; i + 1 < end; i++) if (b[i] === 0x4b) ks.push(i + 1);
    if (!ks.length) return b;
    const at = r.pick(ks);
    b[at] = r.pick([0, 1, 2, b[at] + 1, b[at] - 1, b[at] * 2, 255, r.int(256)]) & 0xff;
    setField(b, crcAt, 4, BigInt(crc32(b.subarray(begin, end))));
    return b;
  },
  (b, r) => b.slice(0, r.int(b.length)),  // truncated
  (b, r) => { const out = new Uint8Array(b.length + 1 + r.int(200)); out.set(b); for (let i = b.length; i < out.length; i++) out[i] = r.int(256); return out; },
  (b, r) => { const at = r.int(b.length), n = 1 + r.int(64); return Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + n)]); },
];

// How often each edit is picked: the records and the pickle most, the cuts (which mostly lose the end
// records, one message) least.
const WEIGHTS = [3, 2, 3, 3, 3, 1, 1, 1];
const PICK = EDITS.flatMap((edit, i) => Array(WEIGHTS[i]).fill(edit));

function makeCase(r) {
  let bytes = SEED_FILE.slice();
  for (let s = 1 + r.int(3); s-- > 0;) bytes = r.pick(PICK)(bytes, r);
  return bytes;
}

const load = (module, bytes, chunkBytes) => module.loadMarian({
  config: CONFIG, size: bytes.length, chunkBytes, format: 'bin',
  read: async (offset, length) => bytes.slice(offset, offset + length),
});

function outputs(marian) {
  marian.encode(SOURCE);
  const g = marian.generate({ beams: 1, maxLength: 8 });
  return { ids: g.ids, cross: g.cross.map((c) => Array.from(c)) };
}

test(`module.loadMarian on ${CASES} mutated pytorch_model.bin files (seed ${SEED}): a model that translates, or an AttnLabError naming pytorch_model.bin; the heap back where it was`, async () => {
  const module = await lab('simd');
  const before = await load(module, SEED_FILE);
  const expected = outputs(before);
  const c = before.config;
  before.delete();
  // Whatever the module allocates once (Embind's tables) is in use before the heap is read.
  await load(module, new Uint8Array(3)).catch(() => {});
  const heap = module.heapBytesInUse();

  const r = prng(SEED);
  const kinds = new Map();
  let loaded = 0, nonFinite = 0;
  const t0 = performance.now();
  for (let i = 0; i < CASES; i++) {
    const bytes = makeCase(r);
    const chunk = r.pick(CHUNKS);
    const where = () => `case ${i} (${bytes.length} bytes, chunks of ${chunk})`;
    let marian;
    try {
      marian = await load(module, bytes, chunk);
    } catch (error) {
      assert.ok(error instanceof module.AttnLabError, `${where()}: ${error?.stack ?? error}`);
      assert.match(error.message, /^pytorch_model\.bin[: ]/, where());
      const kind = error.message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/0x[0-9a-f]+/g, '0xN').replace(/(?<![\w-])\d+/g, 'N').slice(0, 110);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      assert.equal(module.heapBytesInUse(), heap, `${where()}: a refused file leaves the heap where it was`);
      continue;
    }
    loaded++;
    try {
      const { ids, cross } = outputs(marian);
      assert.ok(ids.length >= 2 && ids.length <= 8, `${where()}: ${ids.length} ids`);
      assert.equal(cross.length, ids.length - 1, where());
      assert.ok(cross.every((w) => w.length === c.decoderLayers * c.decoderHeads * SOURCE.length), where());
      // Finite weights within ±1e6 can still overflow float32 on the way: counted, not a failure.
      if (!cross.every((w) => w.every(Number.isFinite))) nonFinite++;
    } finally {
      marian.delete();
    }
    assert.equal(module.heapBytesInUse(), heap, `${where()}: a model deleted leaves the heap where it was`);
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${CASES} cases (seed ${SEED}) in ${seconds.toFixed(1)} s: ${loaded} loaded (${nonFinite} with a non-finite output), ${CASES - loaded} refused`);
  for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${String(n).padStart(7)}  ${kind}`);
  // Both sides are reached: changed weights and views still load, broken records and pickles do not.
  assert.ok(loaded > CASES / 20 && CASES - loaded > CASES / 4, `${loaded} loaded, ${CASES - loaded} refused`);

  const after = await load(module, SEED_FILE);
  assert.deepEqual(outputs(after), expected, 'the module gives the same outputs after the fuzzing');
  after.delete();
});
