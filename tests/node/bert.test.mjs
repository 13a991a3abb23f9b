// The Pretrained lab's BERT through the WASM module (issue 13): the tiny Hugging Face checkpoints of
// tests/fixtures/make_bert_fixtures.py (fp32 with the "bert." prefix and the MLM head; fp16 without
// prefix, LayerNorm as gamma/beta; bf16 with its own decoder) streamed from disk tensor by tensor,
// tokenized by web/tokenizers/wordpiece.js, run on every build and CPU backend and on the staged path
// (the kernel outside the module, as WebGPU runs it), against the plain PyTorch BERT to 1e-4. Then
// each malformed folder and file, with its message, and the module keeps working after each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILDS, lab, fixture, FIXTURES, maxAbsDiff, nodeWebGpuAttention, openFolder, pickFiles } from './support.mjs';
import { diskSource, folderSources } from '../../web/cli/file_source.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { runModel } from '../../web/labs/05_pretrained_sections.js';
import { pretrainedLab } from '../../web/labs/05_pretrained.js';

const ref = fixture('bert_tiny_reference.safetensors');
const refMeta = parseSafetensors(readFileSync(path.join(FIXTURES, 'bert_tiny_reference.safetensors'))).metadata;
const VARIANTS = ['modern', 'legacy', 'bf16'];
const folder = (v) => path.join(FIXTURES, 'bert_tiny', v);
// The inputs of make_bert_fixtures.py's CASES.
const CASES = { single: ['The quick brown fox jumps over the lazy dog'], pair: ['the cat sat on the [MASK] .', 'a dog ran .'] };
const TOL = 1e-4;

const open = async (module, v, options) => openFolder(module, await folderSources(folder(v)), 'pretrained', options);
const concat = (arrays) => Float32Array.from(arrays.flatMap((a) => Array.from(a)));

function checkOutputs(bert, key, what) {
  const L = bert.config.layers;
  const layers = [...Array(L).keys()];
  const check = (name, ours) => {
    const diff = maxAbsDiff(ours, ref[`${key}.${name}`].data);
    assert.ok(diff <= TOL, `${what} ${key}.${name}: max |ours - torch| = ${diff}`);
  };
  check('attentions', concat(layers.map((l) => bert.attention(l))));
  check('queries', concat(layers.map((l) => bert.queries(l))));
  check('keys', concat(layers.map((l) => bert.keys(l))));
  check('hidden_states', concat([...Array(L + 1).keys()].map((l) => bert.hidden(l))));
}

for (const build of BUILDS) {
  test(`BERT checkpoints load and match PyTorch to 1e-4 [${build}]`, async () => {
    const module = await lab(build);
    for (const v of VARIANTS) {
      const progress = [];
      const { model: bert, tokenizer, summary } = await open(module, v, { onProgress: (p) => progress.push(p) });
      try {
        assert.equal(summary.mlm, v !== 'legacy', `${v}: MLM head`);
        assert.equal(progress.at(-1).bytes, progress.at(-1).total, `${v}: progress reaches the total`);
        for (const [c, [text, pair]] of Object.entries(CASES)) {
          const { ids, typeIds, tokens } = tokenizer.encode(text, pair);
          assert.deepEqual(tokens, JSON.parse(refMeta[`${c}.tokens`]), `${v} ${c}: tokens`);
          assert.deepEqual(Array.from(ids), Array.from(ref[`${c}.input_ids`].data), `${v} ${c}: ids`);
          assert.deepEqual(Array.from(typeIds), Array.from(ref[`${c}.token_type_ids`].data), `${v} ${c}: token types`);
          for (const backend of module.cpuBackends) {
            bert.forward(ids, typeIds, { backend });
            checkOutputs(bert, `${v}.${c}`, `${build} ${backend}`);
          }
        }
      } finally {
        bert.delete();
      }
    }
  });
}

test('the staged forward (the kernel outside the module, as WebGPU runs it) gives the same numbers', async () => {
  const module = await lab('simd');
  const { model: bert, tokenizer } = await open(module, 'modern');
  const { ids, typeIds } = tokenizer.encode(...CASES.pair);
  const T = ids.length, H = bert.config.heads, D = bert.config.hiddenSize / H;
  // No pass under way: the protocol says what to do first.
  assert.equal(bert.raw._next_call(), null);
  assert.equal(bert.raw._finish_call(new Float32Array(1), new Float32Array(1)), 'no forward pass is under way: begin one first');
  const calls = [];
  await bert.forwardWith(ids, typeIds, (args) => {
    calls.push(args);
    return module.attentionForward({ ...args, backend: 'scalar' });
  });
  assert.equal(calls.length, bert.config.layers, 'one attention call per layer');
  for (const [l, call] of calls.entries()) {
    assert.deepEqual([call.B, call.H, call.T, call.S, call.D], [1, H, T, T, D], `layer ${l}'s call: [B, H, T, S, D]`);
    assert.ok(Math.abs(call.scale - 1 / Math.sqrt(D)) < 1e-7);
    assert.deepEqual(call.q, bert.queries(l), `layer ${l}: the call's q is the layer's queries`);
  }
  checkOutputs(bert, 'modern.pair', 'staged');
  // A wrong result is refused by name and the pass stays where it was.
  assert.equal(bert.raw._begin_forward(ids, typeIds, null), '');
  const first = bert.raw._next_call().q.slice();
  assert.equal(bert.raw._finish_call(new Float32Array(3), new Float32Array(3)), `weights must have ${H * T * T} elements [B=1, H=${H}, T=${T}, S=${T}], got 3`);
  assert.equal(bert.raw._finish_call(new Float32Array(H * T * T).fill(2), new Float32Array(H * T * D)), 'weights[0] = 2 must lie in [0, 1]');
  assert.deepEqual(bert.raw._next_call().q.slice(), first, 'still the first layer\'s call');
  bert.delete();
});

test('the lab\'s forward (every layer\'s kernel through the page\'s KernelRunner) on WebGPU (Dawn on SwiftShader) matches PyTorch to 1e-4', async () => {
  const gpuAttention = await nodeWebGpuAttention();
  const module = await lab('simd');
  const { state } = await pretrainedLab.open.load(module, await folderSources(folder('bf16')), { name: 'bf16' });
  try {
    const runner = new KernelRunner({ module, request: { requested: 'webgpu', gpu: { attention: gpuAttention, reason: 'ok' } } });
    const ctx = { module, backend: 'webgpu', opened: state, attention: (args) => runner.forward(args) };
    const r = await runModel(ctx, { text: CASES.pair[0], pair: CASES.pair[1] });
    assert.equal(r.choice.backend, 'webgpu');
    assert.deepEqual(r.tokens, JSON.parse(refMeta['pair.tokens']));
    checkOutputs(state.model, 'bf16.pair', 'webgpu');
    assert.deepEqual(r.predictions[0].top.map((p) => p.token), JSON.parse(refMeta['bf16.pair.mask_top5']));
    // The same text again is not computed again (the four sections share one forward).
    assert.equal(await runModel(ctx, { text: CASES.pair[0], pair: CASES.pair[1] }), r);
  } finally {
    pretrainedLab.open.dispose(state);
    gpuAttention.destroy();
  }
});

test('[MASK] fill-in: the top five tokens of the MLM head, as PyTorch ranks them', async () => {
  const module = await lab('simd');
  for (const v of ['modern', 'bf16']) {
    const { model: bert, tokenizer } = await open(module, v);
    const { ids, typeIds } = tokenizer.encode(...CASES.pair);
    bert.forward(ids, typeIds);
    const top = bert.predict(Number(refMeta['pair.mask_index']), 5);
    assert.deepEqual(top.map((p) => tokenizer.idToToken(p.id)), JSON.parse(refMeta[`${v}.pair.mask_top5`]), v);
    const logits = ref[`${v}.pair.mlm_logits`].data, V = bert.config.vocabSize, at = Number(refMeta['pair.mask_index']);
    for (const p of top) assert.ok(Math.abs(p.logit - logits[at * V + p.id]) <= TOL, `${v}: logit of ${p.id}`);
    bert.delete();
  }
  const { model: bert } = await open(module, 'legacy');
  assert.deepEqual(bert.predict(1, 5), [], 'no head, no predictions');
  bert.delete();
});

// ---- bad folders and files: each with its message; the module keeps working

function tempCopy(v, edit) {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-bert-'));
  for (const f of ['config.json', 'vocab.txt', 'model.safetensors', 'tokenizer_config.json']) copyFileSync(path.join(folder(v), f), path.join(dir, f));
  edit(dir);
  return dir;
}

async function rejects(dir, pattern) {
  const module = await lab('simd');
  await assert.rejects(openFolder(module, await folderSources(dir), 'pretrained'), pattern);
  rmSync(dir, { recursive: true });
}

test('a BERT saved with torch.save (pytorch_model.bin only, the decoder tied) opens and computes what its model.safetensors does', async () => {
  const picked = await pickFiles('bert', [{ name: 'config.json' }, { name: 'pytorch_model.bin' }, { name: 'vocab.txt' }]);
  assert.deepEqual([picked.weights.name, picked.weights.format], ['pytorch_model.bin', 'bin']);
  // With both, model.safetensors is read, as from_pretrained does.
  assert.equal((await pickFiles('bert', [{ name: 'config.json' }, { name: 'pytorch_model.bin' }, { name: 'model.safetensors' }, { name: 'vocab.txt' }])).weights.name,
    'model.safetensors');
  const module = await lab('simd');
  const fromBin = await open(module, 'bin');
  const fromSafetensors = await open(module, 'modern');
  try {
    assert.deepEqual(fromBin.files, ['config.json', 'vocab.txt', 'tokenizer_config.json', 'pytorch_model.bin']);
    assert.equal(fromBin.summary.file, 'pytorch_model.bin');
    assert.ok(fromBin.summary.mlm);
    const { ids, typeIds } = fromBin.tokenizer.encode(...CASES.pair);
    for (const { model: bert } of [fromBin, fromSafetensors]) bert.forward(ids, typeIds, { backend: 'simd128' });
    for (let l = 0; l < fromBin.model.config.layers; l++) assert.deepEqual(fromBin.model.attention(l), fromSafetensors.model.attention(l), `layer ${l}`);
    assert.deepEqual(fromBin.model.predict(6), fromSafetensors.model.predict(6));
  } finally {
    fromBin.model.delete();
    fromSafetensors.model.delete();
  }
});

test('a folder without the checkpoint files says which are missing', async () => {
  await assert.rejects(pickFiles('bert', [{ name: 'config.json' }, { name: 'tf_model.h5' }, { name: 'vocab.txt' }]),
    /missing model\.safetensors or pytorch_model\.bin \(given: config\.json, tf_model\.h5, vocab\.txt\)\. TensorFlow and Flax weights are not read here/);
  await assert.rejects(pickFiles('bert', []),
    /A BERT checkpoint needs config\.json, vocab\.txt, and model\.safetensors or pytorch_model\.bin; missing config\.json; vocab\.txt; model\.safetensors or pytorch_model\.bin \(given: no files\)/);
  await assert.rejects(pickFiles('bert', [{ name: 'a/config.json' }, { name: 'b/config.json' }]), /two files are named config\.json/);
});

test('a truncated model.safetensors names the tensor that lies outside the file', async () => {
  await rejects(tempCopy('modern', (dir) => {
    const f = path.join(dir, 'model.safetensors');
    const bytes = readFileSync(f);
    writeFileSync(f, bytes.subarray(0, bytes.length - 1000));
  }), /^AttnLabError: model\.safetensors: tensor "[^"]+" data_offsets \[\d+, \d+\] lie outside the \d+-byte data section$/);
});

test('a header that is not JSON, or not safetensors at all', async () => {
  await rejects(tempCopy('modern', (dir) => writeFileSync(path.join(dir, 'model.safetensors'), 'PK\u0003\u0004 this is a zip')),
    /model\.safetensors: not a safetensors file: header length \d+ exceeds the/);
  await rejects(tempCopy('modern', (dir) => {
    const f = path.join(dir, 'model.safetensors');
    const bytes = readFileSync(f);
    bytes[8] = 0x5b; // '{' -> '['
    writeFileSync(f, bytes);
  }), /model\.safetensors: malformed safetensors header: expected '\{' at the start of the header/);
});

test('a checkpoint that does not fit its config names the tensor and both shapes', async () => {
  await rejects(tempCopy('modern', (dir) => {
    const f = path.join(dir, 'config.json');
    writeFileSync(f, readFileSync(f, 'utf8').replace('"hidden_size": 32', '"hidden_size": 64'));
  }), /model\.safetensors: tensor "bert\.embeddings\.word_embeddings\.weight" has shape \[179, 32\] but config\.json \(hidden_size 64, intermediate_size 64, vocab_size 179\) needs \[179, 64\]/);
});

test('config.json and vocab.txt: not JSON, another model type, a vocabulary of another model', async () => {
  await rejects(tempCopy('modern', (dir) => writeFileSync(path.join(dir, 'config.json'), '{"hidden_size": ')), /config\.json/);
  await rejects(tempCopy('modern', (dir) => writeFileSync(path.join(dir, 'config.json'), '{"model_type": "gpt2"}')),
    /^CheckpointError: This folder holds a GPT-2 model \(config\.json's model_type is "gpt2"\), not a BERT or DistilBERT one: open it in the Writing lab\.$/);
  await rejects(tempCopy('modern', (dir) => writeFileSync(path.join(dir, 'vocab.txt'), 'hello\nworld\n')), /vocab\.txt has no \[CLS\], \[SEP\], \[UNK\]/);
  await rejects(tempCopy('modern', (dir) => writeFileSync(path.join(dir, 'vocab.txt'), `${readFileSync(path.join(dir, 'vocab.txt'), 'utf8')}extra1\nextra2\n`)),
    /vocab\.txt has 181 tokens but config\.json's vocab_size is 179: they belong to different models/);
});

test('NaN in a weight is named; input the model cannot take is refused; the module keeps working', async () => {
  await rejects(tempCopy('modern', (dir) => {
    const f = path.join(dir, 'model.safetensors');
    const bytes = readFileSync(f);
    const n = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + n).toString());
    const at = 8 + n + header['bert.encoder.layer.1.output.dense.bias'].data_offsets[0];
    bytes.writeFloatLE(NaN, at + 4 * 3);
    writeFileSync(f, bytes);
  }), /model\.safetensors: tensor "bert\.encoder\.layer\.1\.output\.dense\.bias" holds NaN at element 3/);
  const module = await lab('simd');
  const { model: bert, tokenizer } = await open(module, 'modern');
  assert.throws(() => bert.forward([2, 500, 3], [0, 0, 0]), /token id 500 at position 1 is outside the vocabulary \[0, 179\)/);
  assert.throws(() => bert.forward([2, 5], [0]), /ids has 2 tokens but types has 1/);
  assert.throws(() => bert.forward(new Array(65).fill(5), new Array(65).fill(0)), /65 tokens: this model has position embeddings for 64/);
  assert.throws(() => tokenizer.encode('word '.repeat(70)), /reads at most 64/);
  assert.throws(() => bert.attention(0), /no attention for layer 0: run forward\(\) first/);
  const { ids, typeIds } = tokenizer.encode(...CASES.single);
  bert.forward(ids, typeIds);
  checkOutputs(bert, 'modern.single', 'after the errors');
  bert.delete();
});

test('a file that shrinks while it is read is named, not read past', async () => {
  const module = await lab('simd');
  const sources = await folderSources(folder('modern'));
  const weights = sources.find((s) => s.name === 'model.safetensors');
  const short = { ...weights, read: async (o, l) => (o > 1000 ? (await weights.read(o, l)).subarray(0, l - 1) : weights.read(o, l)) };
  await assert.rejects(openFolder(module, sources.map((s) => (s === weights ? short : s)), 'pretrained'),
    /model\.safetensors: could read only \d+ of \d+ bytes of tensor "[^"]+" \(was the file changed while it was read\?\)/);
});
