// Notebook weights: a state_dict saved from the course notebook's model (by a committed PyTorch script)
// loads into the lab's trainer and gives PyTorch's attention; the lab's own weights export with the
// notebook's names and shapes and load back; mismatches are all listed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab, FIXTURES, fixture, assertClose } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { loadStateDict, saveStateDict, StateDictError } from '../../web/io/state_dict.js';
import { alignmentConfigFromWeights } from '../../web/labs/alignment_weights.js';

const m = await lab('simd');
const notebook = parseSafetensors(readFileSync(path.join(FIXTURES, 'notebook_copy_model.safetensors')));

test("the notebook's copy model loads and shows PyTorch's attention (1e-5)", () => {
  const config = alignmentConfigFromWeights(notebook);
  assert.deepEqual(config, { task: 'copy', dModel: 32, heads: 4, vocab: 32, length: 16 });
  const trainer = new m.AlignmentTrainer(config);
  loadStateDict(trainer, notebook.tensors);
  const expected = fixture('notebook_copy_expected.safetensors');
  const r = trainer.inspect({ tokens: expected.tokens.data });
  assertClose(r.weights, expected.weights.data, 1e-5, 'per-head weights');
  assertClose(r.weightsMean, expected.weights_mean.data, 1e-5, 'head mean');
  assert.deepEqual([...r.predictions], [...expected.predictions.data]);
  trainer.delete();
});

test("the lab's weights export with the notebook's names, shapes and order, and load back", () => {
  const trainer = new m.AlignmentTrainer({ task: 'copy', seed: 2 });
  trainer.train(20);
  const bytes = saveStateDict(trainer, { task: 'copy', heads: 4, lab: 'alignment' });
  const file = parseSafetensors(bytes);
  // Same keys as PyTorch's file (whose order carries no meaning), written in state_dict order.
  assert.deepEqual(Object.keys(file.tensors).sort(), Object.keys(notebook.tensors).sort(), 'same keys');
  assert.deepEqual(Object.keys(file.tensors), ['tok_emb.weight', 'in_pos_emb.weight', 'out_pos_emb.weight',
    'attn.in_proj_weight', 'attn.in_proj_bias', 'attn.out_proj.weight', 'attn.out_proj.bias', 'out.weight', 'out.bias']);
  for (const [name, t] of Object.entries(notebook.tensors)) {
    assert.deepEqual(file.tensors[name].shape, t.shape, name);
    assert.equal(file.tensors[name].dtype, 'F32');
  }
  assert.equal(file.metadata.format, 'pt');
  const copy = new m.AlignmentTrainer(alignmentConfigFromWeights(file));
  loadStateDict(copy, file.tensors);
  const sample = { tokens: [4, 8, 15, 16, 23, 2] };
  assert.deepEqual(copy.inspect(sample).weightsMean, trainer.inspect(sample).weightsMean);
  trainer.delete();
  copy.delete();
});

test('mismatched keys and shapes are all listed, and the model is left as it was', () => {
  const trainer = new m.AlignmentTrainer({ task: 'copy', heads: 4 });
  const before = trainer.parameters();
  const tensors = { ...notebook.tensors };
  delete tensors['out.bias'];
  tensors['attn.bias_k'] = { shape: [1, 1, 32], data: new Float32Array(32) };
  tensors['in_pos_emb.weight'] = { shape: [8, 32], data: new Float32Array(256) };
  assert.throws(() => loadStateDict(trainer, tensors), (e) => {
    assert.ok(e instanceof StateDictError);
    assert.equal(e.message, [
      'the weights do not fit this model:',
      '- missing keys: out.bias',
      '- unexpected keys: attn.bias_k',
      '- in_pos_emb.weight: the model needs shape [16, 32], the file has [8, 32]',
    ].join('\n'));
    return true;
  });
  assert.deepEqual(trainer.parameters(), before);
  trainer.delete();
});

test('a malformed file gets a message that names the problem', () => {
  assert.throws(() => parseSafetensors(new Uint8Array([1, 2, 3])), /not a safetensors file: 3 bytes, need at least 8/);
  const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'notebook_copy_model.safetensors')));
  assert.throws(() => parseSafetensors(bytes.slice(0, bytes.length - 100)), /data_offsets .* lie outside the .*-byte data section/);
});
