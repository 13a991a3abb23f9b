#!/usr/bin/env node
// Writes tests/fuzz/corpus/safetensors/: small valid safetensors files, the seeds of both fuzzers
// (tests/fuzz/run_cpp_fuzz.sh, tests/fuzz/js_mutation_fuzz.mjs). Generated: run
//   node tests/fuzz/make_corpus.mjs
// and commit the result; every file's __metadata__ names this script as its generator (except empty
// and no_metadata, whose point is to have none). Each seed reaches one path of the parsers: dtypes,
// zero-size tensors, header order unlike offset order, escapes, padding.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus', 'safetensors');
const GENERATOR = { generator: 'tests/fuzz/make_corpus.mjs' };
const SIZES = { F32: 4, F64: 8, I32: 4, I64: 8, I8: 1, U8: 1, BOOL: 1 };

/**
 * tensors: [[name, dtype, shape]] in data order; headerOrder: names in the header's order (default:
 * data order); text: the header JSON as given (for escapes the encoder would not write). Data bytes are
 * 0, 1, 2, ... (mod 251, a prime, so no tensor repeats another's bytes).
 */
function file({ tensors = [], metadata = GENERATOR, headerOrder, pad = true, text } = {}) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  const placed = {};
  let offset = 0;
  for (const [name, dtype, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * SIZES[dtype];
    placed[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  for (const name of headerOrder ?? Object.keys(placed)) header[name] = placed[name];
  let json = new TextEncoder().encode(text ?? JSON.stringify(header));
  if (pad && (8 + json.length) % 8) {
    const padded = new Uint8Array(json.length + 8 - ((8 + json.length) % 8)).fill(0x20);
    padded.set(json);
    json = padded;
  }
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  for (let i = 0; i < offset; i++) out[8 + json.length + i] = i % 251;
  return out;
}

const seeds = {
  empty: file({ metadata: null, pad: false }),
  metadata_only: file({ metadata: { ...GENERATOR, format: 'pt', task: 'copy' } }),
  no_metadata: file({ metadata: null, tensors: [['w', 'F32', [2]]] }),
  f32_matrix: file({ tensors: [['attn.in_proj_weight', 'F32', [3, 2]], ['attn.in_proj_bias', 'F32', [3]]] }),
  every_dtype: file({ tensors: [['f32', 'F32', [1]], ['f64', 'F64', [1]], ['i32', 'I32', [2]], ['i64', 'I64', [1]],
    ['i8', 'I8', [3]], ['u8', 'U8', [2]], ['bool', 'BOOL', [1]]] }),
  scalar_and_empty: file({ tensors: [['scalar', 'F32', []], ['none', 'F32', [0, 3]], ['after', 'U8', [1]]] }),
  header_order_differs: file({ tensors: [['a', 'F32', [1]], ['b', 'I32', [2]], ['c', 'U8', [4]]], headerOrder: ['c', 'a', 'b'] }),
  unpadded: file({ tensors: [['x', 'U8', [3]]], pad: false }),
  escaped_names: file({ metadata: null, tensors: [['A\u00e9\n', 'U8', [1]]],
    text: '{"\\u0041\\u00e9\\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"generator":"tests\\/fuzz\\/make_corpus.mjs"}}' }),
  spaced_json: file({ metadata: null, tensors: [['w', 'I64', [1, 1]]],
    text: ' { "w" : { "shape" : [ 1 , 1 ] , "dtype" : "I64" , "data_offsets" : [ 0 , 8 ] } ,\n\t"__metadata__" : { "generator" : "tests/fuzz/make_corpus.mjs" } } ' }),
};

mkdirSync(OUT, { recursive: true });
for (const name of readdirSync(OUT)) rmSync(path.join(OUT, name));
for (const [name, bytes] of Object.entries(seeds)) writeFileSync(path.join(OUT, `${name}.safetensors`), bytes);
console.log(`wrote ${Object.keys(seeds).length} seeds to ${path.relative(process.cwd(), OUT)}`);
