// web/io/safetensors.js on hand-made files: the checks of the reference implementation
// (huggingface/safetensors, Metadata::validate and read_metadata) and what a JS object can get wrong
// (prototype keys). Needs no WASM: it imports only web/io/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSafetensors, writeSafetensors, SafetensorsError, MAX_HEADER_BYTES } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** header (object or JSON text) + dataBytes bytes of data (0, 1, 2, ...) -> a file's bytes. */
function fileWith(header, dataBytes = 0) {
  const text = typeof header === 'string' ? header : JSON.stringify(header);
  const json = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + json.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  for (let i = 0; i < dataBytes; i++) out[8 + json.length + i] = i & 0xff;
  return out;
}

/**
 * Asserts that parsing throws a SafetensorsError (never a TypeError, RangeError...) whose message matches
 * `pattern` (a RegExp, or a string it must contain).
 */
function rejects(bytes, pattern) {
  assert.throws(() => parseSafetensors(bytes), (e) => {
    assert.ok(e instanceof SafetensorsError, `expected a SafetensorsError, got ${e?.constructor?.name}: ${e?.message}`);
    if (typeof pattern === 'string') assert.ok(e.message.includes(pattern), `"${e.message}" lacks "${pattern}"`);
    else assert.match(e.message, pattern);
    return true;
  });
}

const f32 = (shape, offsets) => ({ dtype: 'F32', shape, data_offsets: offsets });

test('every committed fixture parses (they were written by the reference implementation)', () => {
  const names = readdirSync(FIXTURES).filter((n) => n.endsWith('.safetensors'));
  assert.ok(names.length > 5);
  for (const name of names) parseSafetensors(readFileSync(path.join(FIXTURES, name)));
});

test('write then read: same names (in order), shapes, values and metadata', () => {
  const bytes = writeSafetensors({ a: { shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }, 'b.bias': { shape: [1], data: [-0.5] },
    empty: { shape: [0, 4], data: [] } }, { format: 'pt' });
  const { tensors, metadata } = parseSafetensors(bytes);
  assert.deepEqual(Object.keys(tensors), ['a', 'b.bias', 'empty']);
  assert.deepEqual(tensors.a.shape, [2, 3]);
  assert.deepEqual([...tensors.a.data], [1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...tensors['b.bias'].data], [-0.5]);
  assert.equal(tensors.empty.data.length, 0);
  assert.equal(metadata.format, 'pt');
});

test('write then read: tensors named "__proto__" and "é" round-trip, and the data starts 8-byte aligned', () => {
  const bytes = writeSafetensors({ ['__proto__']: { shape: [1], data: [3] }, é: { shape: [2], data: [4, 5] } });
  const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal((8 + headerLength) % 8, 0);
  const { tensors } = parseSafetensors(bytes);
  assert.deepEqual(Object.keys(tensors), ['__proto__', 'é']);
  assert.deepEqual([...tensors.__proto__.data], [3]);
  assert.deepEqual([...tensors.é.data], [4, 5]);
});

test('every dtype reads into its typed array (F32 F64 I32 I64 I8 U8 BOOL)', () => {
  const header = {
    f32: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, f64: { dtype: 'F64', shape: [1], data_offsets: [4, 12] },
    i32: { dtype: 'I32', shape: [1], data_offsets: [12, 16] }, i64: { dtype: 'I64', shape: [1], data_offsets: [16, 24] },
    i8: { dtype: 'I8', shape: [2], data_offsets: [24, 26] }, u8: { dtype: 'U8', shape: [1], data_offsets: [26, 27] },
    bool: { dtype: 'BOOL', shape: [1], data_offsets: [27, 28] },
  };
  const bytes = fileWith(header, 28);
  const body = bytes.length - 28;
  const view = new DataView(bytes.buffer);
  view.setFloat32(body, 1.5, true);
  view.setFloat64(body + 4, -2.25, true);
  view.setInt32(body + 12, -7, true);
  view.setBigInt64(body + 16, -9n, true);
  view.setInt8(body + 24, -128);
  view.setInt8(body + 25, 127);
  view.setUint8(body + 26, 200);
  view.setUint8(body + 27, 1);
  const { tensors: t } = parseSafetensors(bytes);
  assert.deepEqual([t.f32.data[0], t.f64.data[0], t.i32.data[0], t.i64.data[0], ...t.i8.data, t.u8.data[0], t.bool.data[0]],
    [1.5, -2.25, -7, -9, -128, 127, 200, 1]);
  assert.ok(t.i8.data instanceof Int8Array);
});

test('data_offsets [-8, 0] (negative begin) is rejected, not read from the header', () => {
  rejects(fileWith({ w: f32([2], [-8, 0]) }, 0), /tensor "w" has malformed data_offsets \[-8,0\]/);
  rejects(fileWith({ w: f32([1], [0, -4]) }, 4), /tensor "w" has malformed data_offsets/);
});

test('data_offsets given as an object {"0":0,"1":4} is a SafetensorsError, not a TypeError', () => {
  rejects(fileWith({ w: f32([1], { 0: 0, 1: 4 }) }, 4), /tensor "w" has malformed data_offsets \{"0":0,"1":4\}/);
});

for (const offsets of [[0], [0, 4, 8], ['0', '4'], [4, 0], [0.5, 4], [0, 2 ** 53], null, 'x']) {
  test(`data_offsets ${JSON.stringify(offsets)} is rejected with the tensor's name`, () => {
    rejects(fileWith({ w: f32([1], offsets) }, 4), /tensor "w" has malformed data_offsets/);
  });
}

for (const dtype of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'Q4', 'f32', 7, null]) {
  test(`dtype ${JSON.stringify(dtype)} is unsupported (no lookup on a prototype)`, () => {
    rejects(fileWith({ w: { dtype, shape: [1], data_offsets: [0, 4] } }, 4), `tensor "w" has unsupported dtype ${JSON.stringify(dtype)}`);
  });
}

test('a tensor named "__proto__" is kept as an own tensor, and the result\'s prototype is untouched', () => {
  const bytes = fileWith('{"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
    '"constructor":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}', 8);
  const { tensors } = parseSafetensors(bytes);
  assert.deepEqual(Object.keys(tensors), ['__proto__', 'constructor']);
  assert.ok(Object.hasOwn(tensors, '__proto__'));
  assert.deepEqual(tensors.__proto__.shape, [1]);
  assert.equal(tensors.__proto__.data.length, 1);
  assert.deepEqual([...tensors.constructor.data], [4, 5, 6, 7]);
  assert.equal(Object.getPrototypeOf(tensors), null, 'a null-prototype record: no inherited names');
  assert.equal(tensors.toString, undefined);
});

test('overlapping data_offsets (a [0, 8], b [4, 8]) are rejected', () => {
  rejects(fileWith({ a: f32([2], [0, 8]), b: f32([1], [4, 8]) }, 8), /tensor "b" data_offsets \[4, 8\] overlap tensor "a" \[0, 8\]/);
  rejects(fileWith({ a: f32([1], [0, 4]), b: f32([1], [0, 4]) }, 4), /data_offsets \[0, 4\] overlap tensor "[ab]" \[0, 4\]/);
});

test('a gap in the data section (a [0, 4], b [8, 12]) is rejected', () => {
  rejects(fileWith({ a: f32([1], [0, 4]), b: f32([1], [8, 12]) }, 12),
    /the data section has a gap: bytes \[4, 8\) belong to no tensor \(before tensor "b"\)/);
  rejects(fileWith({ b: f32([1], [4, 8]) }, 8), /bytes \[0, 4\) belong to no tensor \(before tensor "b"\)/);
});

test('trailing bytes after the last tensor (4 of 8, and 3 with no tensors) are rejected', () => {
  rejects(fileWith({ a: f32([1], [0, 4]) }, 8), /the data section has 4 bytes after the last tensor \(from 4 to 8\)/);
  rejects(fileWith({}, 3), /the data section has 3 bytes after the last tensor \(from 0 to 3\)/);
});

test('tensors in any header order, stored in offset order, parse (the reference sorts by offsets)', () => {
  const { tensors } = parseSafetensors(fileWith({ late: f32([1], [4, 8]), early: f32([1], [0, 4]), none: f32([0], [4, 4]) }, 8));
  assert.deepEqual(Object.keys(tensors), ['late', 'early', 'none']);
  assert.deepEqual([...new Uint8Array(tensors.late.data.buffer)], [4, 5, 6, 7]);
});

test(`header length over the ${MAX_HEADER_BYTES}-byte cap, up to 2^64 - 1, is rejected before any read`, () => {
  for (const n of [BigInt(MAX_HEADER_BYTES) + 1n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
    const bytes = new Uint8Array(16);
    new DataView(bytes.buffer).setBigUint64(0, n, true);
    rejects(bytes, new RegExp(`not a safetensors file: header length ${n} exceeds the ${MAX_HEADER_BYTES}-byte limit`));
  }
  rejects(fileWith('{}').subarray(0, 9), /header length 2 exceeds the file size 9/);
});

test('a header that is not UTF-8 or not a JSON object is rejected', () => {
  const bytes = fileWith('{"\u00e9":1}');
  bytes[10] = 0xff;
  rejects(bytes, /malformed safetensors header: not UTF-8/);
  rejects(fileWith('[1,2]'), /malformed safetensors header: expected a JSON object/);
  rejects(fileWith('null'), /malformed safetensors header: expected a JSON object/);
  rejects(fileWith('{"a":'), /malformed safetensors header: /);
});

for (const shape of [[-1], [1.5], ['2'], { 0: 2 }, [2 ** 53], null]) {
  test(`shape ${JSON.stringify(shape)} is malformed`, () => {
    rejects(fileWith({ w: f32(shape, [0, 4]) }, 4), /tensor "w" has a malformed shape/);
  });
}

test('shape [2^40, 2^40, 0] whose running product passes 2^64 is rejected as the reference does (checked product)', () => {
  rejects(fileWith({ w: f32([2 ** 40, 2 ** 40, 0], [0, 0]) }, 0), /tensor "w" has shape \[1099511627776, 1099511627776, 0\] whose byte size overflows 64 bits/);
  rejects(fileWith({ w: f32([2 ** 31, 2 ** 31, 2 ** 3], [0, 0]) }, 0), /whose byte size overflows 64 bits/);
  rejects(fileWith({ w: f32([2 ** 26, 2 ** 26], [0, 4]) }, 4), /tensor "w" has 4 bytes but its shape and dtype need 18014398509481984/);
});

test('a tensor without shape, with an unknown field, or not an object is rejected', () => {
  rejects(fileWith({ w: { dtype: 'F32', data_offsets: [0, 4] } }, 4), /tensor "w" has no "shape"/);
  rejects(fileWith({ w: { ...f32([1], [0, 4]), extra: 1 } }, 4), /tensor "w" has an unknown field "extra"/);
  rejects(fileWith({ w: [1, 2] }, 0), /tensor "w" must be an object with dtype, shape and data_offsets/);
});

test('__metadata__ must map strings to strings (as the reference requires)', () => {
  rejects(fileWith({ __metadata__: { heads: 4 } }), /__metadata__ must map strings to strings: "heads" is 4/);
  rejects(fileWith({ __metadata__: ['x'] }), /__metadata__ must map strings to strings/);
  const { metadata } = parseSafetensors(fileWith('{"__metadata__":{"__proto__":"kept","task":"copy"}}'));
  assert.equal(Object.getPrototypeOf(metadata), null);
  assert.deepEqual(Object.entries(metadata), [['__proto__', 'kept'], ['task', 'copy']]);
});

test('a long tensor name is shortened in the message, and control characters are escaped', () => {
  const name = `x\n${'y'.repeat(500)}`;
  assert.throws(() => parseSafetensors(fileWith({ [name]: f32([1], [0, 8]) }, 8)), (e) => {
    assert.ok(e instanceof SafetensorsError);
    assert.ok(e.message.length < 300, e.message);
    assert.match(e.message, /^tensor "x\\nyyyy/);
    return true;
  });
});

test('F16 and BF16 tensors widen to Float32Array exactly (subnormal, infinity, -0; bf16 is a float32\'s top half)', () => {
  const bytes = fileWith({ h: { dtype: 'F16', shape: [6], data_offsets: [0, 12] }, b: { dtype: 'BF16', shape: [2], data_offsets: [12, 16] } }, 16);
  const at = bytes.length - 16;
  bytes.set([0x01, 0x00, 0x00, 0x3c, 0x00, 0x7c, 0x00, 0xfc, 0xff, 0x7b, 0x00, 0x80, 0x80, 0x3f, 0x49, 0x40], at);
  const { tensors } = parseSafetensors(bytes);
  assert.ok(tensors.h.data instanceof Float32Array && tensors.b.data instanceof Float32Array);
  assert.deepEqual(Array.from(tensors.h.data), [2 ** -24, 1, Infinity, -Infinity, 65504, -0]);
  assert.ok(Object.is(tensors.h.data[5], -0));
  assert.deepEqual(Array.from(tensors.b.data), [1, 3.140625]);
});
