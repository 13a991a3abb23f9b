// safetensors in JS (the same format as core/io/safetensors.*): read a file into typed arrays, write
// Float32 tensors back. Every malformed file gets a SafetensorsError that says what is wrong.

export class SafetensorsError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

const DTYPES = {
  F32: [4, (b, o, n) => new Float32Array(b.slice(o, o + 4 * n))],
  F64: [8, (b, o, n) => new Float64Array(b.slice(o, o + 8 * n))],
  I32: [4, (b, o, n) => new Int32Array(b.slice(o, o + 4 * n))],
  I64: [8, (b, o, n) => Int32Array.from(new BigInt64Array(b.slice(o, o + 8 * n)), Number)],
  U8: [1, (b, o, n) => new Uint8Array(b.slice(o, o + n))],
  BOOL: [1, (b, o, n) => new Uint8Array(b.slice(o, o + n))],
};

/** bytes: ArrayBuffer | Uint8Array -> {tensors: {name: {dtype, shape, data}}, metadata} */
export function parseSafetensors(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const buffer = u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength);
  if (u8.byteLength < 8) {
    throw new SafetensorsError(`not a safetensors file: ${u8.byteLength} bytes, need at least 8`);
  }
  const headerLength = Number(new DataView(buffer).getBigUint64(0, true));
  if (headerLength > u8.byteLength - 8) {
    throw new SafetensorsError(
      `not a safetensors file: header length ${headerLength} exceeds the file size ${u8.byteLength}`);
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + headerLength)));
  } catch (e) {
    throw new SafetensorsError(`malformed safetensors header: ${e.message}`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) {
    throw new SafetensorsError('malformed safetensors header: expected a JSON object');
  }
  const dataStart = 8 + headerLength;
  const dataSize = u8.byteLength - dataStart;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const kind = DTYPES[info?.dtype];
    if (!kind) throw new SafetensorsError(`tensor "${name}" has unsupported dtype "${info?.dtype}"`);
    const shape = info.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new SafetensorsError(`tensor "${name}" has a malformed shape`);
    }
    const [begin, end] = info.data_offsets ?? [];
    if (!Number.isInteger(begin) || !Number.isInteger(end) || begin > end || end > dataSize) {
      throw new SafetensorsError(
        `tensor "${name}" data_offsets [${begin}, ${end}] lie outside the ${dataSize}-byte data section`);
    }
    const n = shape.reduce((a, b) => a * b, 1);
    if (end - begin !== n * kind[0]) {
      throw new SafetensorsError(
        `tensor "${name}" has ${end - begin} bytes but its shape and dtype need ${n * kind[0]}`);
    }
    tensors[name] = { dtype: info.dtype, shape, data: kind[1](buffer, dataStart + begin, n) };
  }
  return { tensors, metadata: header.__metadata__ ?? {} };
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
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + 4 * n] };
    blobs.push(new Uint8Array(f32.buffer, f32.byteOffset, 4 * n));
    offset += 4 * n;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - ((8 + text.length) % 8)) % 8);
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
