// Heads switched off are an argument of one pass on every checkpoint model (issue 44, item 5): BERT's
// forward and Marian's decode and generate take `heads` as the decoder's passes do, so the pass after one
// with heads off gives the bits of a model that never had any off, and no lab section can leave heads off
// for another. A list the model cannot take throws naming the head before anything runs, and the model
// stays as it was. PyTorch's numbers with the heads zeroed are tests/node/ablation_cli.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FIXTURES, lab, openFolder } from './support.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { runModel } from '../../web/labs/05_pretrained_sections.js';

const BERT = path.join(FIXTURES, 'bert_tiny', 'modern');
const MARIAN = path.join(FIXTURES, 'marian_tiny');

const logitsOf = (bert, T) => Array.from({ length: T }, (_, t) => bert.predict(t, 8).map((p) => p.logit)).flat();

test('BERT: a pass with heads off leaves the next pass whole; a head it lacks is refused before the pass', async () => {
  const module = await lab('simd');
  const [a, b] = [await openFolder(module, await folderSources(BERT), 'pretrained'),
    await openFolder(module, await folderSources(BERT), 'pretrained')];
  try {
    const { ids, typeIds } = a.tokenizer.encode('the cat sat on the [MASK] .', null);
    const T = ids.length;
    assert.equal(a.model.ablateHeads, undefined, 'the model takes no heads of its own');
    assert.deepEqual(a.model.headGrid, { layers: a.model.config.layers, heads: a.model.config.heads });
    a.model.forward(ids, typeIds, { heads: [{ layer: 0, head: 1 }] });
    const off = logitsOf(a.model, T);
    a.model.forward(ids, typeIds);
    b.model.forward(ids, typeIds);
    const whole = logitsOf(b.model, T);
    assert.deepEqual(logitsOf(a.model, T), whole, 'the pass after: every head on');
    assert.notDeepEqual(off, whole, 'the heads off changed the pass');
    await a.model.forwardWith(ids, typeIds, (args) => module.attentionForward({ ...args, backend: 'scalar' }),
      { heads: [{ layer: 1, head: 0 }] });
    assert.notDeepEqual(logitsOf(a.model, T), whole, 'the staged pass takes its heads too');
    assert.throws(() => a.model.forward(ids, typeIds, { heads: [{ layer: 0, head: 9 }] }),
      /^AttnLabError: head 0\.9: this model's heads are 0 to 1 in each layer$/);
    assert.throws(() => a.model.forward(ids, typeIds, { heads: [{ layer: 0, head: 1 }, { layer: 0, head: 1 }] }),
      /head 0\.1 is given twice/);
    assert.deepEqual(logitsOf(a.model, T), logitsOf(a.model, T));
    // The Pretrained lab's sections: heads off in one request, none in the next, the fresh model's numbers.
    const ctx = (opened) => ({ opened, backend: 'simd128', attention: (args) => module.attentionForward({ ...args, backend: 'simd128' }) });
    const v = { text: 'the cat sat on the [MASK] .', pair: '' };
    const switched = await runModel(ctx(a), { ...v, ablate: '0.0,1.1' });
    assert.ok(switched.changes[0].chosen.change !== 0);
    const after = await runModel(ctx(a), { ...v, ablate: '' });
    const fresh = await runModel(ctx(b), { ...v, ablate: '' });
    assert.deepEqual(after.predictions, fresh.predictions);
    assert.deepEqual(after.attentions, fresh.attentions);
  } finally {
    a.model.delete();
    b.model.delete();
  }
});

test('Marian: generate and decode with cross heads off leave the next pass whole; a layer it lacks is refused', async () => {
  const module = await lab('simd');
  const [a, b] = [await openFolder(module, await folderSources(MARIAN), 'translation'),
    await openFolder(module, await folderSources(MARIAN), 'translation')];
  try {
    const { ids } = a.tokenizer.encode('the cat sat on the mat.');
    for (const m of [a.model, b.model]) m.encode(ids, { backend: 'simd128' });
    assert.deepEqual(a.model.headGrid, { layers: a.model.config.decoderLayers, heads: a.model.config.decoderHeads });
    const cross = (g) => g.cross.map((c) => Array.from(c)).flat();
    const switched = a.model.generate({ beams: 1, backend: 'simd128', heads: [{ layer: 0, head: 0 }, { layer: 1, head: 1 }] });
    const after = a.model.generate({ beams: 1, backend: 'simd128' });
    const whole = b.model.generate({ beams: 1, backend: 'simd128' });
    assert.deepEqual(after.ids, whole.ids);
    assert.deepEqual(cross(after), cross(whole));
    assert.notDeepEqual(cross(switched), cross(whole));
    const target = Int32Array.from(whole.ids);
    a.model.decode(target, { backend: 'simd128', heads: [{ layer: 1, head: 0 }] });
    const offLogits = a.model.logits();
    a.model.decode(target, { backend: 'simd128' });
    b.model.decode(target, { backend: 'simd128' });
    assert.deepEqual(a.model.logits(), b.model.logits());
    assert.notDeepEqual(offLogits, b.model.logits());
    assert.throws(() => a.model.generate({ beams: 1, backend: 'simd128', heads: [{ layer: 5, head: 1 }] }),
      /^AttnLabError: head 5\.1: this model's layers are 0 to 1$/);
  } finally {
    a.model.delete();
    b.model.delete();
  }
});
