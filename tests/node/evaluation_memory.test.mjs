// evaluate() runs its 1,024 samples in chunks of 128 (AlignmentTrainer::kEvalChunk): at once, the
// largest models' evaluation held over a gigabyte of activations (1,053 MB of heap for length 64,
// vocabulary 256, width 256, 16 heads) and could take the WASM module to its 2 GB limit (issue 16 §2).
// Heap figures are the allocator's own count (mallinfo), the same on every run: no timing here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';

const MiB = 2 ** 20;

test('evaluate(1024)[L=64,V=256,E=256,H=16,B=64]: the heap grows by less than a training step\'s worth, not a gigabyte', async (t) => {
  const m = await lab('simd');
  const before = m.heapBytesInUse();
  const trainer = new m.AlignmentTrainer({ task: 'copy', length: 64, vocab: 256, dModel: 256, heads: 16, batch: 64, seed: 1 });
  trainer.train(1, { backend: 'simd128' });
  const afterStep = m.heapBytesInUse();
  const e = trainer.evaluate(1024, { backend: 'simd128' });
  const afterEval = m.heapBytesInUse();
  t.diagnostic(`heap: +${((afterStep - before) / MiB).toFixed(0)} MiB after a step, +${((afterEval - afterStep) / MiB).toFixed(0)} MiB more after evaluate(1024)`);
  assert.equal(e.samples, 1024);
  assert.ok(Number.isFinite(e.loss) && e.accuracy >= 0 && e.accuracy <= 1);
  // A chunk of 128 samples costs about two training steps of 64: well under 400 MiB; all 1,024 at once took ~945 MiB more.
  assert.ok(afterEval - afterStep < 400 * MiB, `evaluate grew the heap by ${((afterEval - afterStep) / MiB).toFixed(0)} MiB`);
  trainer.delete();
});

test('evaluate over 100, 129 and 1,024 samples (one short chunk; a chunk and a single sample; eight chunks): well-formed and repeatable', async () => {
  const m = await lab('simd');
  // 1,024 samples run as 8 chunks; 100 samples as one short chunk; 129 as a full chunk and a single sample.
  const trainer = new m.AlignmentTrainer({ task: 'pointer', seed: 4 });
  trainer.train(30, { backend: 'simd128' });
  for (const samples of [100, 129, 1024]) {
    const a = trainer.evaluate(samples, { backend: 'simd128' });
    const b = trainer.evaluate(samples, { backend: 'simd128' });
    assert.deepEqual(a, b, `${samples} samples: the same numbers twice`);
    assert.equal(a.samples, samples);
    assert.ok(a.headMass.every((x) => x >= 0 && x <= 1));
  }
  trainer.delete();
});
