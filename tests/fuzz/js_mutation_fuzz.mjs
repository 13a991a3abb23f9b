#!/usr/bin/env node
// A seeded mutation fuzzer for web/io/safetensors.js. From the committed seeds
// (tests/fuzz/corpus/safetensors/) it makes files by byte flips, truncations, splices and header edits
// (negative, huge and object offsets, hostile shapes, unknown dtypes, names like "__proto__", duplicate
// keys, gaps, overlaps, trailing bytes) and asserts that parseSafetensors either returns a result that
// keeps every promise below, or throws its own SafetensorsError: never another exception, never a
// slow case. The same seed gives the same cases (a PRNG of ours, no Math.random).
//   node tests/fuzz/js_mutation_fuzz.mjs [--seed 1] [--cases 100000]
// tests/node/fuzz_safetensors.test.mjs runs a slice; benchmarks/fuzz_long.sh runs 10^6 cases.
import { readdirSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSafetensors, writeSafetensors, SafetensorsError, MAX_HEADER_BYTES } from '../../web/io/safetensors.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const CORPUS = path.join(HERE, 'corpus', 'safetensors');
// Far above any sane case (microseconds; a GC pause or JIT warm-up can take ~100 ms on a busy machine):
// a case this slow means a pathological path.
const SLOW_CASE_MS = 1000;

// ---- a small deterministic PRNG (mulberry32: 32-bit state, full period, good enough to pick mutations)

export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (list) => list[int(list.length)], chance: (p) => next() < p };
}

// ---- files as parts: [[key, value]] entries (so "__proto__" and duplicate keys survive), data bytes

function split(bytes) {
  if (bytes.length < 8) return null;
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n > bytes.length - 8) return null;
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  } catch {
    return null;
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) return null;
  return { entries: Object.entries(header), data: bytes.slice(8 + n) };
}

/**
 * entries -> JSON text by hand: JSON.stringify of an object would drop a duplicate key or turn a
 * "__proto__" key into a prototype. A value {$raw: text} is written as that text (numbers JS cannot hold).
 */
const entriesText = (entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${valueText(v)}`).join(',')}}`;
const valueText = (v) => (v && v.$raw !== undefined ? v.$raw : JSON.stringify(v));

function join(headerText, data, { length } = {}) {
  const json = typeof headerText === 'string' ? new TextEncoder().encode(headerText) : headerText;
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, length ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

// ---- mutations

const HOSTILE_NUMBERS = [-1, -8, 0, 1, 3, 7, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 53 - 1, 2 ** 53, 2 ** 64, 1e308, -0, 0.5,
  NaN];
const HOSTILE_VALUES = [null, true, 'x', '0', {}, [], [[0]], { 0: 0, 1: 4 }, { $raw: '18446744073709551616' },
  { $raw: '-0' }, { $raw: '1e3' }, { $raw: '[1e999]' }];
const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__metadata__', '', 'w', 'a\u0000b', 'é',
  '\ud83d\ude00', 'x'.repeat(300)];
const DTYPES = ['F32', 'F64', 'I32', 'I64', 'I8', 'U8', 'BOOL', 'F16', 'BF16', 'constructor', '__proto__', 'toString',
  '', 'f32', 'F32 ', 4];

/** Header edits: each takes (entries, data, r) and returns {entries, data} (entries copied, not mutated). */
const HEADER_EDITS = [
  function offsetsHostile(entries, data, r) {
    return editTensor(entries, data, r, (info) => {
      const o = Array.isArray(info.data_offsets) ? [...info.data_offsets] : [0, 0];
      const k = r.int(3);
      if (k === 0) o[r.int(2)] = r.pick(HOSTILE_NUMBERS);
      else if (k === 1) return { ...info, data_offsets: r.pick(HOSTILE_VALUES) };
      else o[r.int(2)] += r.pick([-4, -1, 1, 4, 8]);
      return { ...info, data_offsets: o };
    });
  },
  function offsetsShape(entries, data, r) {
    return editTensor(entries, data, r, (info) => {
      const o = Array.isArray(info.data_offsets) ? info.data_offsets : [0, 0];
      const k = r.int(4);
      if (k === 0) return { ...info, data_offsets: [o[0]] };
      if (k === 1) return { ...info, data_offsets: [...o, o[1]] };
      if (k === 2) return { ...info, data_offsets: [o[1], o[0]] };
      return { ...info, data_offsets: o.map(String) };
    });
  },
  function shapeHostile(entries, data, r) {
    return editTensor(entries, data, r, (info) => {
      const shape = Array.isArray(info.shape) ? [...info.shape] : [];
      const k = r.int(5);
      if (k === 0 && shape.length) shape[r.int(shape.length)] = r.pick(HOSTILE_NUMBERS);
      else if (k === 1) shape.push(r.pick([0, 1, 2 ** 20, 2 ** 40]), r.pick([0, 2 ** 24, 2 ** 40]));
      else if (k === 2) return { ...info, shape: r.pick(HOSTILE_VALUES) };
      else if (k === 3) shape.splice(r.int(shape.length + 1), 0, 0);
      else shape.length = 0;
      return { ...info, shape };
    });
  },
  function dtypeOther(entries, data, r) {
    return editTensor(entries, data, r, (info) => ({ ...info, dtype: r.pick(DTYPES) }));
  },
  function fieldsEdit(entries, data, r) {
    return editTensor(entries, data, r, (info) => {
      const copy = { ...info };
      if (r.chance(0.5)) delete copy[r.pick(['dtype', 'shape', 'data_offsets'])];
      else copy[r.pick(['extra', '__proto__', 'constructor'])] = r.pick(HOSTILE_VALUES);
      return r.chance(0.2) ? r.pick(HOSTILE_VALUES) : copy;
    });
  },
  function renameTensor(entries, data, r) {
    if (!entries.length) return { entries, data };
    const out = entries.map((e) => [...e]);
    out[r.int(out.length)][0] = r.pick(NAMES);
    return { entries: out, data };
  },
  function duplicateTensor(entries, data, r) {
    const tensors = entries.filter(([k]) => k !== '__metadata__');
    if (!tensors.length) return { entries, data };
    const [name, info] = r.pick(tensors);
    // Same name twice (JSON.parse keeps the last) or another name on the same bytes (an overlap).
    return { entries: [...entries, [r.chance(0.5) ? name : r.pick(NAMES), info]], data };
  },
  function dropTensor(entries, data, r) {
    if (!entries.length) return { entries, data };
    const out = [...entries];
    out.splice(r.int(out.length), 1);
    return { entries: out, data };
  },
  function dataLength(entries, data, r) {
    const k = r.int(3);
    if (k === 0) return { entries, data: data.slice(0, Math.max(0, data.length - 1 - r.int(8))) };
    const more = new Uint8Array(data.length + 1 + r.int(16));
    more.set(data, k === 1 ? 0 : more.length - data.length);
    return { entries, data: more };
  },
  function metadataHostile(entries, data, r) {
    const meta = r.pick([{ k: r.pick(HOSTILE_VALUES) }, ['x'], 'x', null, { __proto__: null, [r.pick(NAMES)]: 'v' },
      { a: { b: 'c' } }, { generator: 'x'.repeat(r.int(2000)) }]);
    return { entries: [...entries.filter(([k]) => k !== '__metadata__'), ['__metadata__', meta]], data };
  },
];

function editTensor(entries, data, r, edit) {
  const indexes = entries.map(([k], i) => (k === '__metadata__' ? -1 : i)).filter((i) => i >= 0);
  if (!indexes.length) return { entries, data };
  const i = r.pick(indexes);
  const out = [...entries];
  out[i] = [out[i][0], edit(out[i][1] && typeof out[i][1] === 'object' ? out[i][1] : {})];
  return { entries: out, data };
}

/** Byte edits on a whole file (u8 in, u8 out). */
const BYTE_EDITS = [
  function flipBit(b, r) {
    const c = b.slice();
    if (c.length) c[r.int(c.length)] ^= 1 << r.int(8);
    return c;
  },
  function setByte(b, r) {
    // JSON's punctuation, digits, a minus, and bytes that are not UTF-8 on their own.
    const c = b.slice();
    if (c.length) c[r.int(c.length)] = r.pick([0, 0x22, 0x2c, 0x2d, 0x30, 0x5b, 0x5d, 0x7b, 0x7d, 0x80, 0xc3, 0xff]);
    return c;
  },
  function truncate(b, r) {
    return b.slice(0, r.int(b.length + 1));
  },
  function erase(b, r) {
    const at = r.int(b.length + 1);
    return concat(b.subarray(0, at), b.subarray(at + 1 + r.int(8)));
  },
  function insertRandom(b, r) {
    const at = r.int(b.length + 1);
    return concat(b.subarray(0, at), Uint8Array.from({ length: 1 + r.int(8) }, () => r.int(256)), b.subarray(at));
  },
  function copyRange(b, r) {
    const from = r.int(b.length + 1);
    const len = r.int(Math.min(32, b.length - from) + 1);
    const at = r.int(b.length + 1);
    return concat(b.subarray(0, at), b.subarray(from, from + len), b.subarray(at));
  },
  function lengthPrefix(b, r) {
    // Off by one, or hostile: 0, the cap and one past it, 2^53, 2^63, 2^64 - 1.
    if (b.length < 8) return b;
    const c = b.slice();
    const view = new DataView(c.buffer);
    const n = view.getBigUint64(0, true);
    const cap = BigInt(MAX_HEADER_BYTES);
    view.setBigUint64(0, r.pick([0n, n > 0n ? n - 1n : 0n, n + 1n, cap, cap + 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n]), true);
    return c;
  },
];

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/** Splice: this file's header with another seed's data, or the reverse. */
function crossover(a, b, r) {
  const pa = split(a), pb = split(b);
  if (!pa || !pb) return a;
  return r.chance(0.5) ? join(entriesText(pa.entries), pb.data) : join(entriesText(pb.entries), pa.data);
}

export function loadSeeds() {
  const seeds = readdirSync(CORPUS).sort().map((name) => new Uint8Array(readFileSync(path.join(CORPUS, name))));
  // And one written by our own writer, so its output is a seed too.
  seeds.push(writeSafetensors({ 'attn.in_proj_weight': { shape: [3, 2], data: [1, 2, 3, 4, 5, 6] }, b: { shape: [0], data: [] } },
    { format: 'pt' }));
  return seeds;
}

/** One case: a seed, 1 to 4 mutations (header edits when the header still parses, else byte edits). */
export function makeCase(seeds, r) {
  let bytes = r.pick(seeds);
  const steps = 1 + r.int(4);
  for (let s = 0; s < steps; s++) {
    const k = r.next();
    const parts = k < 0.55 ? split(bytes) : null;
    if (parts) {
      const { entries, data } = r.pick(HEADER_EDITS)(parts.entries, parts.data, r);
      bytes = join(entriesText(entries), data);
    } else if (k < 0.65) {
      bytes = crossover(bytes, r.pick(seeds), r);
    } else {
      bytes = r.pick(BYTE_EDITS)(bytes, r);
    }
  }
  return bytes;
}

// ---- the promises

// F16 and BF16 widen to Float32Array, as the core's decode_floats does.
const TYPES = { F32: Float32Array, F16: Float32Array, BF16: Float32Array, F64: Float64Array, I32: Int32Array, I64: Int32Array, I8: Int8Array, U8: Uint8Array, BOOL: Uint8Array };
const SIZES = { F32: 4, F16: 2, BF16: 2, F64: 8, I32: 4, I64: 8, I8: 1, U8: 1, BOOL: 1 };

/** Throws a plain Error naming the broken promise when an accepted file's result is not well formed. */
export function checkResult(bytes, result) {
  const fail = (what) => { throw new Error(`invariant broken: ${what}`); };
  const { tensors, metadata } = result;
  if (Object.getPrototypeOf(tensors) !== null || Object.getPrototypeOf(metadata) !== null) fail('null-prototype records');
  for (const v of Object.values(metadata)) if (typeof v !== 'string') fail('metadata values are strings');
  const headerSize = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  const dataSize = bytes.length - 8 - headerSize;
  // The header as JSON.parse reads it (own keys, "__proto__" included): the same names in the same order.
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerSize)));
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  if (JSON.stringify(names) !== JSON.stringify(Object.keys(tensors))) fail('every header tensor is kept, in order');
  const spans = [];
  for (const name of names) {
    const t = tensors[name];
    const { data_offsets: [begin, end] } = header[name];
    if (!(t.dtype in TYPES) || !(t.data instanceof TYPES[t.dtype])) fail(`known dtype and typed array (${name})`);
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) fail(`shape of non-negative integers (${name})`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== n || (end - begin) !== n * SIZES[t.dtype]) fail(`data length = numel = bytes / dtype size (${name})`);
    const raw = bytes.subarray(8 + headerSize + begin, 8 + headerSize + end);
    const same = t.dtype === 'I64'
      ? Int32Array.from(new BigInt64Array(raw.slice().buffer), Number).every((v, i) => v === t.data[i])
      : Buffer.compare(Buffer.from(raw), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)) === 0;
    if (!same) fail(`the values are the file's bytes (${name})`);
    spans.push([begin, end]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let at = 0;
  for (const [begin, end] of spans) {
    if (begin !== at) fail('tensors tile the data section (no gap, no overlap)');
    at = end;
  }
  if (at !== dataSize) fail('no trailing bytes');
}

/** A message's shape, for counting rejections by kind: names and numbers elided. */
const kind = (message) => message.replace(/"(?:[^"\\]|\\.)*"(\.\.\.)?/g, '"…"').replace(/(?<![\w-])\d+/g, 'N').slice(0, 90);

/**
 * Runs `cases` cases from `seed`. Returns {cases, accepted, rejected, kinds: Map, maxCaseMs, failure};
 * failure (the first broken promise: {index, reason, bytes}) stops the run. `parse` is there so a test
 * can hand in a broken parser and see the fuzzer catch it.
 */
export function runFuzz({ seed = 1, cases = 100000, seeds = loadSeeds(), parse = parseSafetensors } = {}) {
  const r = prng(seed);
  const stats = { seed, cases: 0, accepted: 0, rejected: 0, kinds: new Map(), maxCaseMs: 0, failure: null };
  for (let i = 0; i < cases; i++) {
    const bytes = makeCase(seeds, r);
    const t0 = performance.now();
    let reason = null;
    try {
      const result = parse(bytes);
      checkResult(bytes, result);
      stats.accepted++;
    } catch (e) {
      if (e instanceof SafetensorsError && typeof e.message === 'string' && e.message.length > 0 && e.message.length < 2000) {
        stats.rejected++;
        const k = kind(e.message);
        stats.kinds.set(k, (stats.kinds.get(k) ?? 0) + 1);
      } else {
        reason = `${e?.constructor?.name ?? typeof e}: ${String(e?.message ?? e).slice(0, 300)}`;
      }
    }
    let ms = performance.now() - t0;
    if (!reason && ms > SLOW_CASE_MS) {
      // Once more before blaming the parser: a pathological path is slow every time, a GC pause or a
      // busy core once.
      const t1 = performance.now();
      try { parse(bytes); } catch { /* judged above */ }
      ms = performance.now() - t1;
      if (ms > SLOW_CASE_MS) reason = `slow: ${ms.toFixed(0)} ms for ${bytes.length} bytes, twice`;
    }
    stats.maxCaseMs = Math.max(stats.maxCaseMs, ms);
    stats.cases++;
    if (reason) {
      stats.failure = { index: i, reason, bytes };
      break;
    }
  }
  return stats;
}

/** The summary the CLI and the benchmark print. */
export function describe(stats, seconds) {
  const lines = [`js safetensors fuzz: seed ${stats.seed}, ${stats.cases} cases in ${seconds.toFixed(1)} s: ` +
    `${stats.accepted} accepted, ${stats.rejected} rejected with a SafetensorsError, slowest case ${stats.maxCaseMs.toFixed(1)} ms`];
  const top = [...stats.kinds].sort((a, b) => b[1] - a[1]).slice(0, 12);
  for (const [k, n] of top) lines.push(`  ${String(n).padStart(8)}  ${k}`);
  if (stats.failure) lines.push(`FAILED at case ${stats.failure.index}: ${stats.failure.reason}`);
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const t0 = performance.now();
  const stats = runFuzz({ seed: arg('seed', 1), cases: arg('cases', 100000) });
  console.log(describe(stats, (performance.now() - t0) / 1000));
  if (stats.failure) {
    const dir = path.join(HERE, '..', '..', 'build', 'fuzz');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `js-failure-seed${stats.seed}-case${stats.failure.index}.safetensors`);
    writeFileSync(file, stats.failure.bytes);
    console.log(`the input is in ${path.relative(process.cwd(), file)}`);
    process.exitCode = 1;
  }
}
