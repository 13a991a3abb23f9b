// safetensors in JS (the same format and the same checks as core/io/safetensors.*): read a file into
// typed arrays, write Float32 tensors back. Every malformed file gets a SafetensorsError that names the
// tensor and what is wrong; nothing else is ever thrown (tests/fuzz/js_mutation_fuzz.mjs checks that).
//
// The checks are those of the reference implementation (huggingface/safetensors, read_metadata and
// Metadata::validate): header length under a cap, UTF-8 JSON object, known dtypes, shapes of
// non-negative integers whose byte size is computed without overflow, and data_offsets that, sorted,
// tile the data section exactly: no overlap, no gap, no trailing bytes.

export class SafetensorsError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

// The reference's MAX_HEADER_SIZE: a header only describes tensors, so 100 MB of JSON is already absurd,
// and the cap keeps a hostile length from making us decode and parse a huge buffer.
export const MAX_HEADER_BYTES = 100_000_000;

// 16-bit floats widen to Float32Array, as core/io/safetensors.cpp's decode_floats does.
const widen = new DataView(new ArrayBuffer(4));
/** IEEE half: exponent 0 is zero or subnormal (m * 2^-24), 31 is infinity or NaN. */
function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}
/** bfloat16 is the top half of a float32. */
function bf16ToFloat(h) {
  widen.setUint32(0, h << 16);
  return widen.getFloat32(0);
}
const halvesToFloats = (halves, convert) => Float32Array.from(halves, convert);

// A Map, not an object literal: a dtype of "constructor" or "__proto__" must not find Object.prototype's.
const DTYPES = new Map([
  ['F32', { size: 4, read: (b, o, n) => new Float32Array(b.slice(o, o + 4 * n)) }],
  ['F16', { size: 2, read: (b, o, n) => halvesToFloats(new Uint16Array(b.slice(o, o + 2 * n)), halfToFloat) }],
  ['BF16', { size: 2, read: (b, o, n) => halvesToFloats(new Uint16Array(b.slice(o, o + 2 * n)), bf16ToFloat) }],
  ['F64', { size: 8, read: (b, o, n) => new Float64Array(b.slice(o, o + 8 * n)) }],
  ['I32', { size: 4, read: (b, o, n) => new Int32Array(b.slice(o, o + 4 * n)) }],
  ['I64', { size: 8, read: (b, o, n) => Int32Array.from(new BigInt64Array(b.slice(o, o + 8 * n)), Number) }],
  ['I8', { size: 1, read: (b, o, n) => new Int8Array(b.slice(o, o + n)) }],
  ['U8', { size: 1, read: (b, o, n) => new Uint8Array(b.slice(o, o + n)) }],
  ['BOOL', { size: 1, read: (b, o, n) => new Uint8Array(b.slice(o, o + n)) }],
]);
const TENSOR_FIELDS = ['dtype', 'shape', 'data_offsets'];
const U64_LIMIT = 2n ** 64n;

/** A value as it appears in a message: JSON, control characters escaped, at most ~60 characters. */
function show(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
// JSON numbers above 2^53 are not exact in JS, so a shape or offset there cannot be trusted.
const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/** One header entry -> {name, dtype, kind, shape, begin, end}, or a SafetensorsError saying why not. */
function checkTensor(name, info, dataSize) {
  const tensor = `tensor ${show(name)}`;
  if (!isObject(info)) throw new SafetensorsError(`${tensor} must be an object with dtype, shape and data_offsets`);
  for (const field of Object.keys(info)) {
    if (!TENSOR_FIELDS.includes(field)) throw new SafetensorsError(`${tensor} has an unknown field ${show(field)}`);
  }
  for (const field of TENSOR_FIELDS) {
    if (!Object.hasOwn(info, field)) throw new SafetensorsError(`${tensor} has no ${show(field)}`);
  }
  const { dtype, shape, data_offsets: offsets } = info;
  const kind = typeof dtype === 'string' ? DTYPES.get(dtype) : undefined;
  if (!kind) throw new SafetensorsError(`${tensor} has unsupported dtype ${show(dtype)}`);
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw new SafetensorsError(`${tensor} has a malformed shape ${show(shape)}: expected [non-negative integers]`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount) || offsets[0] > offsets[1]) {
    throw new SafetensorsError(
      `${tensor} has malformed data_offsets ${show(offsets)}: expected [begin, end] with 0 <= begin <= end`);
  }
  const [begin, end] = offsets;
  // The product in the reference's order (numel, then bytes), each step checked against 2^64 as its
  // checked_mul does: [2^40, 2^40, 0] overflows before the 0 is reached.
  let bytes = 1n;
  for (const d of [...shape, kind.size]) {
    bytes *= BigInt(d);
    if (bytes >= U64_LIMIT) {
      throw new SafetensorsError(`${tensor} has shape [${shape.join(', ')}] whose byte size overflows 64 bits`);
    }
  }
  if (end > dataSize) {
    throw new SafetensorsError(
      `${tensor} data_offsets [${begin}, ${end}] lie outside the ${dataSize}-byte data section`);
  }
  if (BigInt(end - begin) !== bytes) {
    throw new SafetensorsError(`${tensor} has ${end - begin} bytes but its shape and dtype need ${bytes}`);
  }
  return { name, dtype, kind, shape, begin, end, numel: Number(bytes) / kind.size };
}

/** Sorted by offsets (as the reference sorts), the tensors must tile [0, dataSize) exactly. */
function checkTiling(entries, dataSize) {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let previous = null;
  for (const t of sorted) {
    if (t.begin > at) {
      throw new SafetensorsError(
        `the data section has a gap: bytes [${at}, ${t.begin}) belong to no tensor (before tensor ${show(t.name)})`);
    }
    if (t.begin < at) {
      throw new SafetensorsError(`tensor ${show(t.name)} data_offsets [${t.begin}, ${t.end}] overlap tensor ` +
        `${show(previous.name)} [${previous.begin}, ${previous.end}]`);
    }
    at = t.end;
    previous = t;
  }
  if (at !== dataSize) {
    throw new SafetensorsError(
      `the data section has ${dataSize - at} bytes after the last tensor (from ${at} to ${dataSize})`);
  }
}

/**
 * bytes: ArrayBuffer | Uint8Array -> {tensors: {name: {dtype, shape, data}}, metadata: {key: string}}.
 * Both records have a null prototype, so a tensor named "__proto__" or "constructor" is an own entry
 * like any other; read them with Object.hasOwn / Object.entries. Tensors keep the header's order.
 */
export function parseSafetensors(bytes) {
  let u8;
  // By tag, not instanceof: a buffer from another realm (a worker, a vm context) is still a buffer.
  const tag = Object.prototype.toString.call(bytes);
  if (ArrayBuffer.isView(bytes)) u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  else if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') u8 = new Uint8Array(bytes);
  else throw new SafetensorsError('not a safetensors file: expected an ArrayBuffer or a Uint8Array');
  if (u8.byteLength < 8) {
    throw new SafetensorsError(`not a safetensors file: ${u8.byteLength} bytes, need at least 8`);
  }
  const headerLength = new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(
      `not a safetensors file: header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const headerSize = Number(headerLength);
  if (headerSize > u8.byteLength - 8) {
    throw new SafetensorsError(
      `not a safetensors file: header length ${headerSize} exceeds the file size ${u8.byteLength}`);
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(u8.subarray(8, 8 + headerSize));
  } catch {
    throw new SafetensorsError('malformed safetensors header: not UTF-8');
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw new SafetensorsError(`malformed safetensors header: ${e.message}`);
  }
  if (!isObject(header)) throw new SafetensorsError('malformed safetensors header: expected a JSON object');

  // JSON.parse keeps a "__proto__" key as an own property; Object.entries sees it.
  const dataSize = u8.byteLength - 8 - headerSize;
  const metadata = Object.create(null);
  const entries = [];
  for (const [name, info] of Object.entries(header)) {
    if (name !== '__metadata__') {
      entries.push(checkTensor(name, info, dataSize));
      continue;
    }
    if (!isObject(info)) throw new SafetensorsError('malformed safetensors header: __metadata__ must map '
      + 'strings to strings');
    for (const [key, value] of Object.entries(info)) {
      if (typeof value !== 'string') {
        throw new SafetensorsError(
          `malformed safetensors header: __metadata__ must map strings to strings: ${show(key)} is ${show(value)}`);
      }
      metadata[key] = value;
    }
  }
  checkTiling(entries, dataSize);

  const buffer = u8.buffer.slice(u8.byteOffset + 8 + headerSize, u8.byteOffset + u8.byteLength);
  const tensors = Object.create(null);
  for (const t of entries) tensors[t.name] = { dtype: t.dtype, shape: t.shape,
    data: t.kind.read(buffer, t.begin, t.numel) };
  return { tensors, metadata };
}

/** tensors: {name: {shape, data: Float32Array}} -> Uint8Array in safetensors format (F32). */
export function writeSafetensors(tensors, metadata = {}) {
  const header = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  const blobs = [];
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    const f32 = data instanceof Float32Array ? data : new Float32Array(data);
    const n = shape.reduce((a, b) => a * b, 1);
    if (n !== f32.length) {
      throw new SafetensorsError(`tensor "${name}" has ${f32.length} values but shape [${shape}] needs ${n}`);
    }
    // defineProperty, not assignment: a tensor named "__proto__" is written as a key, not a prototype.
    Object.defineProperty(header, name, {
      value: { dtype: 'F32', shape, data_offsets: [offset, offset + 4 * n] }, enumerable: true, writable: true,
      configurable: true,
    });
    blobs.push(new Uint8Array(f32.buffer, f32.byteOffset, 4 * n));
    offset += 4 * n;
  }
  // Padded with spaces to a multiple of 8 bytes (the reference aligns the data so): bytes, not
  // characters, since a name may be UTF-8 of several bytes a character.
  let text = JSON.stringify(header);
  const unpadded = new TextEncoder().encode(text).length;
  text += ' '.repeat((8 - ((8 + unpadded) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const blob of blobs) {
    out.set(blob, at);
    at += blob.length;
  }
  return out;
}
