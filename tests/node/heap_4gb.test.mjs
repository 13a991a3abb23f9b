// The modules grow past 2 GB (issue 37, item 2: -sMAXIMUM_MEMORY=4GB, so that a 1.1B decoder at 16 bits
// fits): a filler of 2.1 GB is malloc'd in the module first (three blocks, as sbrk takes a signed 32-bit
// increment; pages never touched, so they cost no resident memory), then 64-byte blocks until one comes
// from above 2^31 (the holes below are used up), so that the tiny llama's weights, its cache and the
// work buffers, and every copy the bindings make, lie above 2^31, where a signed pointer (`ptr >> 2`)
// would be negative; its logits and
// greedy writing must still be PyTorch's. In the SIMD128 build and the threads build (whose shared
// memory has the same 4 GB maximum). And the memory rule (core/models/model_memory.h) through the
// module's checkConfig: TinyLlama-1.1B and Llama-3.2-1B in BF16 fit, GPT-2 XL in float32 does not, said
// with the memory it needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { openCheckpoint } from '../../web/models/registry.js';

const REF = fixture('llama_tiny_reference.safetensors');
const META = parseSafetensors(readFileSync(path.join(FIXTURES, 'llama_tiny_reference.safetensors'))).metadata;
const tol = (t) => Math.max(1e-5, 2 * Number(META[`${t}.f32_vs_f64`]));
const FILLER_MB = [768, 768, 640];

/** Fills the module's heap up to 2^31 -> the blocks to free. */
function fillBelow2G(raw) {
  const blocks = FILLER_MB.map((mb) => raw._malloc(mb * 2 ** 20) >>> 0);
  assert.ok(blocks.every((p) => p !== 0), 'the module grows past 2 GB (-sMAXIMUM_MEMORY=4GB)');
  for (let n = 0; n < 100000; n++) {
    const probe = raw._malloc(64) >>> 0;
    if (probe > 2 ** 31) {
      raw._free(probe);
      return blocks;
    }
    blocks.push(probe);
  }
  assert.fail('no block above 2^31');
  return blocks;
}

for (const build of ['simd', 'simd-threads']) {
  test(`${build}: the tiny llama above 2^31 (after a 2.1 GB filler) computes PyTorch's logits and greedy ids`, async () => {
    const module = await lab(build);
    const raw = module._module;
    const filler = fillBelow2G(raw);
    try {
      assert.ok(raw.HEAPU8.buffer.byteLength > 2 ** 31, `heap ${raw.HEAPU8.buffer.byteLength}`);
      const { opened: { model, tokenizer } } = await openCheckpoint(module, await folderSources(path.join(FIXTURES, 'llama_tiny')), { lab: 'writing' });
      try {
        const ids = Array.from(REF['prompt.input_ids'].data);
        assert.deepEqual(tokenizer.encode(META['prompt.text']).ids, ids);
        model.forward(ids, { backend: 'simd128' });
        const V = 407, T = ids.length;
        const logits = Float32Array.from([...Array(T).keys()].flatMap((t) => Array.from(model.logits(t))));
        assert.ok(maxAbsDiff(logits, REF['prompt.logits'].data.slice(0, T * V)) <= tol('prompt.logits'));
        const attentions = Float32Array.from([0, 1].flatMap((l) => Array.from(model.attention(l))));
        assert.ok(maxAbsDiff(attentions, REF['prompt.attentions'].data) <= tol('prompt.attentions'));
        const greedy = Array.from(REF['greedy.ids'].data);
        const written = model.generate(ids, { temperature: 0, maxNewTokens: greedy.length, stopAtEos: false });
        assert.deepEqual(written.ids, greedy);
        assert.equal(written.steps.at(-1).attention.length, 2 * 4 * (T + greedy.length), "the last row: L x H x its T + 12 keys");
        assert.equal(JSON.parse(JSON.stringify(model.summary)).config.vocabSize, V, 'strings and objects through Embind above 2^31');
      } finally {
        model.delete();
      }
    } finally {
      for (const p of filler) raw._free(p);
    }
  });
}

test('the memory rule: TinyLlama-1.1B and Llama-3.2-1B in BF16 fit the 4 GB heap; GPT-2 XL in float32 is refused with what it needs', async () => {
  const module = await lab('simd');
  const llama = (fields) => JSON.stringify({ model_type: 'llama', hidden_act: 'silu', rms_norm_eps: 1e-5, torch_dtype: 'bfloat16', ...fields });
  // Their config.json's shapes (huggingface.co: TinyLlama/TinyLlama-1.1B-Chat-v1.0, meta-llama/Llama-3.2-1B).
  const tinyLlama = llama({ vocab_size: 32000, hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 22, num_attention_heads: 32,
    num_key_value_heads: 4, max_position_embeddings: 2048 });
  const llama32 = llama({ vocab_size: 128256, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32,
    num_key_value_heads: 8, head_dim: 64, max_position_embeddings: 131072, tie_word_embeddings: true, rope_theta: 500000,
    rope_scaling: { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 } });
  assert.equal(module.checkConfig('llama', tinyLlama), '');
  assert.equal(module.checkConfig('llama', llama32), '');
  // The same TinyLlama stored in float32 (4.4 GB of weights): refused before its weights, with the numbers.
  assert.match(module.checkConfig('llama', tinyLlama.replace('"bfloat16"', '"float32"')),
    /^config\.json describes a model that needs \d+ MB: 4\d\d\d MB of weights as float32 and \d+ MB of work, more than the 3840 MB a browser tab's WebAssembly memory can hold \(4 GB, less 256 MB for the module itself\)$/);
  const gpt2xl = JSON.stringify({ model_type: 'gpt2', vocab_size: 50257, n_embd: 1600, n_layer: 48, n_head: 25, n_positions: 1024 });
  assert.match(module.checkConfig('gpt2', gpt2xl), /^config\.json describes a model that needs \d+ MB: 5\d\d\d MB of weights as float32/);
});
