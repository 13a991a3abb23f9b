// DistilBERT in the Pretrained lab (issue 25's "models that fit"; issue 24's registry: a kind that is a
// BertModel under other names, core/models/distilbert_checkpoint.h): the tiny checkpoints of
// tests/fixtures/make_distilbert_fixtures.py open through the lab's own opener (model.safetensors with
// the MLM head; pytorch_model.bin without it), run through the lab's own sections on the page's kernel,
// and match a plain PyTorch DistilBERT within twice PyTorch's own float32 error against float64 (at least
// 1e-5). A sentence pair reads as one sequence (no token types).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { pretrainedLab } from '../../web/labs/05_pretrained.js';
import { runModel } from '../../web/labs/05_pretrained_sections.js';
import { checkpointKind } from '../../web/models/registry.js';

const ref = fixture('distilbert_tiny_reference.safetensors');
const folder = (v) => path.join(FIXTURES, 'distilbert_tiny', v);
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'distilbert_tiny_reference.safetensors'))).metadata;
const tol = (name) => Math.max(1e-5, 2 * Number(meta[`${name}.f32_vs_f64`]));

test('a DistilBERT folder is found as its kind and opens in the Pretrained lab, from model.safetensors or pytorch_model.bin', async () => {
  const module = await lab('simd');
  for (const [variant, file, mlm] of [['mlm', 'model.safetensors', true], ['base', 'pytorch_model.bin', false]]) {
    const sources = await folderSources(folder(variant));
    assert.equal((await checkpointKind(sources)).kind.kind, 'distilbert');
    const { state, summary } = await pretrainedLab.open.load(module, sources, { name: variant });
    try {
      assert.match(summary.text, new RegExp(`^${variant}: a DistilBERT, 2 layers × 2 heads, hidden size 32, vocabulary 179, .*\\((${mlm ? '"distilbert\\." prefix' : 'no prefix'}), LayerNorm as weight/bias\\)`));
      assert.equal(summary.mlm, mlm);
      assert.equal(state.summary.file, file);
      const ctx = { opened: state, backend: 'simd128', attention: (args) => new KernelRunner({ module, request: { requested: 'simd' } }).forward(args) };
      // The pair of bert_tiny's "pair" case, read as DistilBERT reads it: its token types add nothing.
      await runModel(ctx, { text: 'the cat sat on the [MASK] .', pair: 'a dog ran .' });
      const ids = Array.from(ref['pair.input_ids'].data);
      assert.deepEqual(Array.from(state.tokenizer.encode('the cat sat on the [MASK] .', 'a dog ran .').ids), ids);
      const L = state.model.config.layers;
      const attentions = Float32Array.from([...Array(L).keys()].flatMap((l) => Array.from(state.model.attention(l))));
      const hidden = Float32Array.from([...Array(L + 1).keys()].flatMap((l) => Array.from(state.model.hidden(l))));
      assert.ok(maxAbsDiff(attentions, ref['pair.attentions'].data) <= tol('pair.attentions'), `${variant}: attentions`);
      assert.ok(maxAbsDiff(hidden, ref['pair.hidden_states'].data) <= tol('pair.hidden_states'), `${variant}: hidden states`);
      if (mlm) {
        const mask = ids.indexOf(state.tokenizer.tokenToId('[MASK]'));
        const logits = ref['pair.mlm_logits'].data;
        const V = state.model.config.vocabSize;
        const top = state.model.predict(mask, 3);
        const row = Array.from(logits.subarray(mask * V, (mask + 1) * V));
        const torchTop = row.map((x, id) => [x, id]).sort((a, b) => b[0] - a[0]).slice(0, 3).map(([, id]) => id);
        assert.deepEqual(top.map((p) => p.id), torchTop, 'the [MASK] head ranks as PyTorch does');
        for (const p of top) assert.ok(Math.abs(p.logit - row[p.id]) <= tol('pair.mlm_logits'));
      }
    } finally {
      pretrainedLab.open.dispose(state);
    }
  }
});
