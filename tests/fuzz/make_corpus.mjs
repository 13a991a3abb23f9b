#!/usr/bin/env node
// Writes tests/fuzz/corpus/safetensors/: small valid safetensors files, the seeds of both fuzzers
// (tests/fuzz/run_cpp_fuzz.sh, tests/fuzz/js_mutation_fuzz.mjs). Generated: run
//   node tests/fuzz/make_corpus.mjs
// and commit the result; every file's __metadata__ names this script as its generator (except empty
// and no_metadata, whose point is to have none). Each seed reaches one path of the parsers: dtypes,
// zero-size tensors, header order unlike offset order, escapes, padding.
//
// Also writes tests/fuzz/corpus/bert/, the seeds of tests/fuzz/fuzz_bert_checkpoint.cpp (`run_cpp_fuzz.sh
// RUNS bert_checkpoint`): each file is one mode byte (see the harness) and its input: the three tiny
// checkpoints of tests/fixtures/bert_tiny/ (mode 0), their config.json and variants (mode 1), tiny
// configs with tiny checkpoints in each naming and dtype (mode 2), and field edits of the config (mode 3).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(HERE, 'corpus', 'safetensors');
const OUT_BERT = path.join(HERE, 'corpus', 'bert');
const BERT_TINY = path.join(HERE, '..', 'fixtures', 'bert_tiny');
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

// ---- tests/fuzz/corpus/bert/

const BERT_SIZES = { ...SIZES, F16: 2, BF16: 2 };

/** float32 -> IEEE half, for values a half holds exactly (the seeds' k/64, |k| <= 64). */
function half(x) {
  if (x === 0) return 0;
  const bits = new Uint32Array(new Float32Array([x]).buffer)[0];
  const sign = (bits >>> 16) & 0x8000, exponent = ((bits >>> 23) & 0xff) - 127 + 15, mantissa = (bits >>> 13) & 0x3ff;
  return sign | (exponent << 10) | mantissa;
}

/**
 * A checkpoint from [[name, dtype, shape, values(i)]]: the values are written in the dtype (F32, F64,
 * F16, BF16, I64), the header as `file` writes it.
 */
function checkpoint(tensors, metadata = { format: 'pt', ...GENERATOR }) {
  const header = { __metadata__: metadata };
  const parts = [];
  let offset = 0;
  for (const [name, dtype, shape, value] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    const bytes = new Uint8Array(n * BERT_SIZES[dtype]);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < n; i++) {
      const x = value(i);
      if (dtype === 'F32') view.setFloat32(4 * i, x, true);
      else if (dtype === 'F64') view.setFloat64(8 * i, x, true);
      else if (dtype === 'F16') view.setUint16(2 * i, half(x), true);
      else if (dtype === 'BF16') view.setUint16(2 * i, new Uint32Array(new Float32Array([x]).buffer)[0] >>> 16, true);
      else if (dtype === 'I64') view.setBigInt64(8 * i, BigInt(x), true);
    }
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  if ((8 + json.length) % 8) {
    const padded = new Uint8Array(json.length + 8 - ((8 + json.length) % 8)).fill(0x20);
    padded.set(json);
    json = padded;
  }
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/** The tensors of a BERT of config c, named as the options say; values k/64 in [-0.5, 0.5], LayerNorm 1 and 0. */
function bertTensors(c, { prefix = 'bert.', gamma = false, dtype = 'F32', head = true, decoder = false, extras = false } = {}) {
  const E = c.hidden_size, F = c.intermediate_size;
  let k = 0;
  const small = () => (i) => (((i * 37 + k * 11) % 65) - 32) / 64;
  const tensors = [];
  const add = (name, shape, value, d = dtype) => { k++; tensors.push([name, d, shape, value ?? small()]); };
  const norm = (name) => {
    add(`${name}.${gamma ? 'gamma' : 'weight'}`, [E], () => 1);
    add(`${name}.${gamma ? 'beta' : 'bias'}`, [E], () => 0);
  };
  const linear = (name, inF, outF) => { add(`${name}.weight`, [outF, inF]); add(`${name}.bias`, [outF]); };
  add(`${prefix}embeddings.word_embeddings.weight`, [c.vocab_size, E]);
  add(`${prefix}embeddings.position_embeddings.weight`, [c.max_position_embeddings, E]);
  add(`${prefix}embeddings.token_type_embeddings.weight`, [c.type_vocab_size ?? 2, E]);
  norm(`${prefix}embeddings.LayerNorm`);
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `${prefix}encoder.layer.${l}.`;
    for (const m of ['query', 'key', 'value']) linear(`${p}attention.self.${m}`, E, E);
    linear(`${p}attention.output.dense`, E, E);
    norm(`${p}attention.output.LayerNorm`);
    linear(`${p}intermediate.dense`, E, F);
    linear(`${p}output.dense`, F, E);
    norm(`${p}output.LayerNorm`);
  }
  if (head) {
    linear('cls.predictions.transform.dense', E, E);
    norm('cls.predictions.transform.LayerNorm');
    add('cls.predictions.bias', [c.vocab_size]);
    if (decoder) add('cls.predictions.decoder.weight', [c.vocab_size, E]);
  }
  if (extras) {
    add(`${prefix}embeddings.position_ids`, [1, c.max_position_embeddings], (i) => i, 'I64');
    linear(`${prefix}pooler.dense`, E, E);
    add('cls.seq_relationship.weight', [2, E]);
  }
  return tensors;
}

const TINY = { vocab_size: 7, hidden_size: 4, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 3,
  max_position_embeddings: 6, type_vocab_size: 2, layer_norm_eps: 1e-12, hidden_act: 'gelu', model_type: 'bert' };
const { type_vocab_size: _t, layer_norm_eps: _e, hidden_act: _a, model_type: _m, ...OLD_TINY } = TINY;  // an old config: defaults
const ONE = { ...TINY, vocab_size: 1, hidden_size: 1, num_attention_heads: 1, intermediate_size: 1, max_position_embeddings: 1, type_vocab_size: 1 };

const bytes = (s) => new TextEncoder().encode(s);
const cat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const mode = (m, ...parts) => cat(new Uint8Array([m]), ...parts.map((p) => (typeof p === 'string' ? bytes(p) : p)));
const withFile = (config, file) => mode(2, JSON.stringify(config), new Uint8Array([0]), file);
const fixture = (kind, file) => readFileSync(path.join(BERT_TINY, kind, file));

const bertSeeds = {};
for (const kind of ['modern', 'legacy', 'bf16']) {
  bertSeeds[`checkpoint_${kind}`] = mode(0, fixture(kind, 'model.safetensors'));
  bertSeeds[`config_${kind}`] = mode(1, fixture(kind, 'config.json'));
}
Object.assign(bertSeeds, {
  config_old_defaults: mode(1, JSON.stringify(OLD_TINY)),
  config_roberta: mode(1, JSON.stringify({ ...TINY, model_type: 'roberta' })),
  config_gelu_new: mode(1, JSON.stringify({ ...TINY, hidden_act: 'gelu_new' })),
  config_heads_do_not_divide: mode(1, JSON.stringify({ ...TINY, num_attention_heads: 3 })),
  config_too_big: mode(1, JSON.stringify({ ...TINY, vocab_size: 1000000, hidden_size: 8192 })),
  config_nan: mode(1, JSON.stringify({ ...TINY, layer_norm_eps: { $number: 'NaN' } })),
  config_not_object: mode(1, '[1, 2]'),
  tiny_prefixed_f32_tied: withFile(TINY, checkpoint(bertTensors(TINY))),
  tiny_plain_gamma_f16: withFile(TINY, checkpoint(bertTensors(TINY, { prefix: '', gamma: true, dtype: 'F16', head: false }))),
  tiny_bf16_decoder_extras: withFile(TINY, checkpoint(bertTensors(TINY, { dtype: 'BF16', decoder: true, extras: true }))),
  tiny_f64_old_config: withFile(OLD_TINY, checkpoint(bertTensors(OLD_TINY, { dtype: 'F64', head: false }))),
  one_of_everything: withFile(ONE, checkpoint(bertTensors(ONE, { gamma: true }))),
  edit_hidden_size: mode(3, 'hidden_size:16'),
  edit_eps: mode(3, 'layer_norm_eps:1e-5'),
  edit_layers_removed: mode(3, 'num_hidden_layers:'),
  edit_vocab_float: mode(3, 'vocab_size:179.0'),
  edit_model_type: mode(3, 'model_type:"roberta"'),
  edit_type_vocab: mode(3, 'type_vocab_size:1'),
});

mkdirSync(OUT, { recursive: true });
for (const name of readdirSync(OUT)) rmSync(path.join(OUT, name));
for (const [name, bytes] of Object.entries(seeds)) writeFileSync(path.join(OUT, `${name}.safetensors`), bytes);
console.log(`wrote ${Object.keys(seeds).length} seeds to ${path.relative(process.cwd(), OUT)}`);
mkdirSync(OUT_BERT, { recursive: true });
for (const name of readdirSync(OUT_BERT)) rmSync(path.join(OUT_BERT, name));
for (const [name, bytes] of Object.entries(bertSeeds)) writeFileSync(path.join(OUT_BERT, name), bytes);
console.log(`wrote ${Object.keys(bertSeeds).length} seeds to ${path.relative(process.cwd(), OUT_BERT)}`);
