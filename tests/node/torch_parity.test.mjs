// The WASM module (both builds, both CPU kernels) against the PyTorch fixtures, to 1e-5.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, lab, fixture, assertClose } from './support.mjs';

const CASES = ['self_1head', 'self_4heads', 'cross_2heads', 'cross_4heads_long', 'bool_masks',
  'bool_padding_float_attn', 'float_padding', 'float_attn_per_head'];
const TOL = 1e-5;

function maskFrom(t) {
  if (!t) return undefined;
  return t.data; // Uint8Array (BOOL) = boolean mask, Float32Array = additive
}

for (const build of BUILDS) {
  for (const backend of ['scalar', 'simd128']) {
    for (const name of CASES) {
      test(`MultiheadAttention ${name} [${build} build, ${backend} kernel] matches PyTorch`, async () => {
        const m = await lab(build);
        const f = fixture(`mha_${name}.safetensors`);
        const [B, T, S, E, H] = f.dims.data;
        const mha = new m.MultiheadAttention(E, H, { seed: 0 });
        try {
          for (const p of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) {
            mha.setParameter(p, f[p].data);
          }
          const out = mha.forward({
            batch: B, queryLength: T, keyLength: S, query: f.query.data, key: f.key.data,
            value: f.value.data, keyPaddingMask: maskFrom(f.key_padding_mask),
            attnMask: maskFrom(f.attn_mask), backend,
          });
          assertClose(out.output, f.out.data, TOL, 'out');
          assertClose(out.weights, f.weights.data, TOL, 'weights');
          assertClose(out.weightsMean, f.weights_mean.data, TOL, 'weights_mean');
          const grads = mha.backward(f.grad_out.data, f.grad_weights.data, { backend });
          assertClose(grads.dQuery, f.d_query.data, TOL, 'd_query');
          assertClose(grads.dKey, f.d_key.data, TOL, 'd_key');
          assertClose(grads.dValue, f.d_value.data, TOL, 'd_value');
          const g = mha.gradients();
          assertClose(g.in_proj_weight, f.d_in_proj_weight.data, TOL, 'd_in_proj_weight');
          assertClose(g.in_proj_bias, f.d_in_proj_bias.data, TOL, 'd_in_proj_bias');
          assertClose(g['out_proj.weight'], f['d_out_proj.weight'].data, TOL, 'd_out_proj.weight');
          assertClose(g['out_proj.bias'], f['d_out_proj.bias'].data, TOL, 'd_out_proj.bias');
        } finally {
          mha.delete();
        }
      });
    }
  }

  test(`Adam [${build} build] matches torch.optim.Adam over two steps`, async () => {
    const m = await lab(build);
    const f = fixture('adam.safetensors');
    // A 3x4 parameter: a Linear(4, 3) without bias holds exactly one [3, 4] weight.
    const layer = new m.Linear(4, 3, { bias: false });
    layer.setParameter('weight', f.p0.data);
    const adam = new m.Adam([layer]);
    // Gradients enter through backward: dW = dY^T X with X = I (4 rows) gives dW^T = dY... use
    // rows = 4, X = identity, dY = g^T, so dW = g.
    const identity = new Float32Array(16);
    for (let i = 0; i < 4; i++) identity[i * 5] = 1;
    const transpose = (g) => {
      const t = new Float32Array(12);
      for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) t[c * 3 + r] = g[r * 4 + c];
      return t;
    };
    layer.forward(identity, 4);
    layer.backward(transpose(f.g1.data));
    assertClose(layer.gradients().weight, f.g1.data, 0, 'gradient set up');
    adam.step();
    assertClose(layer.parameters().weight, f.p1.data, TOL, 'after step 1');
    adam.zeroGrad();
    layer.backward(transpose(f.g2.data));
    adam.step();
    assertClose(layer.parameters().weight, f.p2.data, TOL, 'after step 2');
    assert.equal(adam.stepsTaken, 2);
    adam.delete();
    layer.delete();
  });

  test(`losses [${build} build] match PyTorch`, async () => {
    const m = await lab(build);
    const f = fixture('losses.safetensors');
    let r = m.crossEntropy(f.ce_logits.data, f.ce_targets.data, 5);
    assert.ok(Math.abs(r.loss - f.ce_loss.data[0]) <= TOL);
    assertClose(r.grad, f.ce_grad.data, TOL, 'ce grad');
    r = m.binaryCrossEntropy(f.bce_p.data, f.bce_y.data);
    assert.ok(Math.abs(r.loss - f.bce_loss.data[0]) <= TOL);
    assertClose(r.grad, f.bce_grad.data, TOL, 'bce grad');
    r = m.mse(f.mse_pred.data, f.mse_target.data);
    assert.ok(Math.abs(r.loss - f.mse_loss.data[0]) <= TOL);
    assertClose(r.grad, f.mse_grad.data, TOL, 'mse grad');
  });

  test(`Rng [${build} build] gives the same numbers as native and the Python reference`, async () => {
    const m = await lab(build);
    const f = fixture('rng.safetensors');
    const check = (seed, fn, expected) => {
      const rng = new m.Rng(seed);
      for (const e of expected) assert.equal(fn(rng), e);
      rng.delete();
    };
    check(2024, (r) => r.nextU32(), f.u32_seed2024.data);
    check(7, (r) => r.below(10), f.below10_seed7.data);
    check(3, (r) => r.uniform(), f.uniform_seed3.data);
    check(5, (r) => r.normal(), f.normal_seed5.data);
  });
}
