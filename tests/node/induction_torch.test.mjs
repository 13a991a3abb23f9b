// The Induction lab's gradients against PyTorch (tests/fixtures/make_induction_fixtures.py: a transformer
// written to TransformerLens's conventions), through the WASM module as the page and the CLI train: on
// every build's CPU kernels (scalar, SIMD128, the threads build's two shards) and on the WebGPU kernel
// (the npm webgpu package on SwiftShader), where a step is one attention call a layer forward and one a
// layer backward through the staged-call protocol. From the fixture's weights and batch, one step: every
// parameter's gradient within 1e-5, or twice PyTorch's own float32 error where that is larger.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, fixture, lab, maxAbsDiff, nodeWebGpuAttention } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';

const reference = fixture('induction_reference.safetensors');
const CASES = JSON.parse(parseSafetensors(readFileSync(path.join(FIXTURES, 'induction_reference.safetensors'))).metadata.cases);

/** A trainer of the case with its weights, training on its one batch (lr is irrelevant: gradients are read). */
function trainerOf(m, name) {
  const c = CASES[name];
  const t = m.createTrainer('induction', { layers: c.layers, heads: c.heads, dModel: c.dModel, dHead: c.dHead, mlp: c.mlp,
    layerNorm: c.layerNorm, vocab: c.vocab, context: c.context, batch: c.batch });
  for (const p of t.parameterNames()) t.setParameter(p, reference[`${name}/init/${p}`].data);
  const tokens = reference[`${name}/tokens`].data;
  t.setData(Array.from({ length: c.batch }, (_, b) => Array.from(tokens.slice(b * c.context, (b + 1) * c.context))));
  return t;
}

function checkGradients(t, name, what) {
  const names = t.parameterNames();
  assert.equal(names.length, Object.keys(reference).filter((k) => k.startsWith(`${name}/grad/`)).length, 'every parameter of the fixture');
  for (const p of names) {
    const torch = reference[`${name}/grad/${p}`].data;
    const tolerance = Math.max(1e-5, 2 * reference[`${name}/err/grad/${p}`].data[0]);
    const diff = maxAbsDiff(t.raw._gradient(p), torch);
    assert.ok(diff <= tolerance, `${what} ${name} ${p}: max |ours - torch| ${diff} > ${tolerance}`);
  }
}

for (const build of BUILDS) {
  test(`induction gradients against PyTorch[${build}: every CPU backend, attn2, full3, ln1]`, async () => {
    const m = await lab(build);
    for (const backend of m.cpuBackends) {
      for (const name of Object.keys(CASES)) {
        const t = trainerOf(m, name);
        const { losses } = t.train(1, { backend });
        assert.ok(Math.abs(losses[0] - reference[`${name}/loss`].data[0]) <= 1e-5, `${build} ${backend} ${name} loss ${losses[0]}`);
        checkGradients(t, name, `${build} ${backend}`);
        t.delete();
      }
    }
  });
}

test('induction gradients against PyTorch[webgpu on SwiftShader: one attention call a layer, forward then backward]', async () => {
  const m = await lab('simd');
  const attention = await nodeWebGpuAttention();
  const kernel = new KernelRunner({ module: m, request: { requested: 'webgpu', gpu: { attention, reason: '', software: true } } });
  try {
    for (const name of Object.keys(CASES)) {
      const t = trainerOf(m, name);
      let forward = 0, backward = 0;
      // As the page's steps run (web/training/backend_steps.js): each layer's call keeps its tensors apart on the GPU.
      const callOf = ({ index }) => (index === 0 ? 'step' : `step:${index}`);
      const metrics = await t.stepWith({
        forward: (args, at) => { forward += 1; return kernel.forward(args, { call: callOf(at) }); },
        backward: (args, at) => { backward += 1; return kernel.backward(args, { call: callOf(at) }); },
      });
      assert.equal(kernel.lostMessage, null, 'the device stayed');
      assert.deepEqual([forward, backward], [CASES[name].layers, CASES[name].layers], `${name}: one call a layer each way`);
      assert.ok(Math.abs(metrics.loss - reference[`${name}/loss`].data[0]) <= 1e-5, `webgpu ${name} loss ${metrics.loss}`);
      checkGradients(t, name, 'webgpu');
      t.delete();
    }
  } finally {
    attention.destroy();
  }
});
