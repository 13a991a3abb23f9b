// The Translation lab's attention on any kernel backend (issue 14): the encoder and the teacher-forced
// decoder staged around the kernel (Marian.encodeWith / decodeWith, raw_marian.h), as the page runs them
// through its KernelRunner. With a CPU kernel in between they give encode()'s and decode()'s bits in
// every build, and their cross-attention rows are what the decoding loop saw for each generated token;
// on WebGPU (Dawn on SwiftShader) the lab's sections match PyTorch to 1e-4 and the badge says WebGPU
// computed the attention shown while the decoding loop ran on the CPU. Stages out of order are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BUILDS, lab, fixture, FIXTURES, maxAbsDiff, nodeWebGpuAttention, openFolder } from './support.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { runTranslation } from '../../web/labs/06_translation_sections.js';

const ref = fixture('marian_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'marian_tiny_reference.safetensors'))).metadata;
const FOLDER = path.join(FIXTURES, 'marian_tiny');
const TOL = 1e-4;
const layers = (n, view) => Array.from({ length: n }, (_, l) => view(l));
const sameBits = (a, b) => a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const concat = (arrays) => Float32Array.from(arrays.flatMap((a) => Array.from(a)));

for (const build of BUILDS) {
  test(`Marian staged around a CPU kernel = encode() and decode(), bit for bit; its cross rows = the decoding loop's [${build}]`, async () => {
    const module = await lab(build);
    const { model: marian, tokenizer } = await openFolder(module, await folderSources(FOLDER), 'translation');
    try {
      const c = marian.config;
      const { ids } = tokenizer.encode(meta['cat.source_text']);
      for (const backend of module.cpuBackends) {
        marian.encode(ids, { backend });
        const g = marian.generate({ beams: c.numBeams, backend });
        const encoder = layers(c.encoderLayers, (l) => marian.encoderAttention(l));
        marian.decode(g.ids, { backend });
        const decoder = layers(c.decoderLayers, (l) => marian.decoderAttention(l));
        const cross = layers(c.decoderLayers, (l) => marian.crossAttention(l));
        const logits = marian.logits();

        const calls = [];
        const kernel = (args) => {
          calls.push(`${args.T}x${args.S}${args.mask ? ' causal' : ''}`);
          return module.attentionForward({ ...args, backend });
        };
        await marian.encodeWith(ids, kernel);
        await marian.decodeWith(g.ids, kernel);
        const S = ids.length, T = g.ids.length;
        assert.deepEqual(calls, [...Array(c.encoderLayers).fill(`${S}x${S}`), ...Array(c.decoderLayers).fill([`${T}x${T} causal`, `${T}x${S}`]).flat()]);
        for (let l = 0; l < c.encoderLayers; l++) assert.ok(sameBits(marian.encoderAttention(l), encoder[l]), `${build} ${backend}: encoder layer ${l}`);
        for (let l = 0; l < c.decoderLayers; l++) {
          assert.ok(sameBits(marian.decoderAttention(l), decoder[l]), `${build} ${backend}: decoder layer ${l}`);
          assert.ok(sameBits(marian.crossAttention(l), cross[l]), `${build} ${backend}: cross layer ${l}`);
        }
        assert.ok(sameBits(marian.logits(), logits), `${build} ${backend}: logits`);
        // Teacher forcing on the translation sees what the decoding loop saw: row t of each layer's
        // cross-attention is generated token t's (the loop's per-token [L][H][S]), to float rounding.
        const H = c.decoderHeads;
        for (let t = 0; t < g.cross.length; t++) {
          const rows = [];
          for (let l = 0; l < c.decoderLayers; l++) for (let h = 0; h < H; h++) rows.push(cross[l].subarray((h * T + t) * S, (h * T + t + 1) * S));
          const diff = maxAbsDiff(concat(rows), g.cross[t]);
          assert.ok(diff <= 1e-5, `${build} ${backend}: token ${t}'s cross-attention, teacher-forced vs the loop: ${diff}`);
        }
      }

      // Before a pass, or with a wrong result, the protocol says what is wrong and the model keeps working.
      const raw = marian.raw;
      assert.equal(raw._next_call(), null, 'the last pass is over');
      assert.equal(raw._finish_call(new Float32Array(3), new Float32Array(3)), 'no staged pass is under way: begin the encoder or the decoder first');
      assert.equal(raw._begin_encode(ids), '');
      assert.equal(raw._begin_decode(g0Ids(c), null), 'encode the source first (every encoder layer\'s stages)');
      assert.equal(raw._finish_call(new Float32Array(3), new Float32Array(3)), 'ask for the next attention call first (next_call)');
      const { H: He, T: Te, S: Se, D: De, mask } = raw._next_call();
      assert.equal(mask, null, 'the encoder reads the whole source: no mask');
      assert.equal(raw._finish_call(new Float32Array(3), new Float32Array(3)), `weights must have ${He * Te * Se} elements [B=1, H=${He}, T=${Te}, S=${Se}], got 3`);
      assert.equal(raw._finish_call(new Float32Array(He * Te * Se).fill(2), new Float32Array(He * Te * De)), 'weights[0] = 2 must lie in [0, 1]');
      await assert.rejects(marian.decodeWith(g0Ids(c), kernelOf(module)), /encode the source first/);
      marian.encode(ids);
      assert.deepEqual(marian.generate({ beams: 1 }).ids, Array.from(ref['cat.greedy.ids'].data));
    } finally {
      marian.delete();
    }
  });
}

const g0Ids = (c) => [c.decoderStartId];
const kernelOf = (module) => (args) => module.attentionForward({ ...args, backend: 'scalar' });

test('the Translation lab on WebGPU (Dawn on SwiftShader): its attention through the page\'s KernelRunner matches PyTorch to 1e-4; the badge names both', async () => {
  const gpuAttention = await nodeWebGpuAttention();
  const module = await lab('simd');
  const opened = await openFolder(module, await folderSources(FOLDER), 'translation');
  try {
    const c = opened.model.config;
    const runner = new KernelRunner({ module, request: { requested: 'webgpu', gpu: { attention: gpuAttention, reason: 'ok' } } });
    const ctx = { module, backend: 'webgpu', opened, attention: (args) => runner.forward(args) };
    const r = await runTranslation(ctx, { text: meta['cat.source_text'], beams: c.numBeams, maxLength: c.maxLength });
    assert.equal(r.choice.backend, 'webgpu');
    assert.match(r.choice.reason, /forced: WebGPU.*ran the attention shown, and the decoding loop \(choosing each word\) ran the SIMD128 CPU kernel/);
    assert.deepEqual(r.ids, Array.from(ref['cat.beam.ids'].data));
    const diff = (ours, key) => maxAbsDiff(ours, ref[key].data);
    assert.ok(diff(concat(r.encoder), 'cat.encoder_attentions') <= TOL, 'encoder attentions on WebGPU');
    assert.ok(diff(concat(r.cross), 'cat.beam.cross_attentions') <= TOL, `cross-attention per generated token on WebGPU: ${diff(concat(r.cross), 'cat.beam.cross_attentions')}`);
    // The same input again is not computed again (the three sections share one translation).
    assert.equal(await runTranslation(ctx, { text: meta['cat.source_text'], beams: c.numBeams, maxLength: c.maxLength }), r);
    // On a CPU backend the badge names one kernel for both.
    const cpu = await runTranslation({ ...ctx, backend: 'simd', attention: (args) => new KernelRunner({ module, request: { requested: 'simd' } }).forward(args) },
      { text: meta['cat.source_text'], beams: 1, maxLength: c.maxLength });
    assert.equal(cpu.choice.backend, 'simd128');
    assert.match(cpu.choice.reason, /it ran the decoding loop and the attention shown$/);
    assert.deepEqual(cpu.ids, Array.from(ref['cat.greedy.ids'].data));
  } finally {
    opened.model.delete();
    gpuAttention.destroy();
  }
});
