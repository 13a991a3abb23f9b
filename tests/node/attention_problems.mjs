// Random attention problems for the backend sweeps (kernel_backends.test.mjs, webgpu_parity.test.mjs):
// inputs, a mask of a given kind, and the name that carries the parameters.
import assert from 'node:assert/strict';

// mulberry32: a seeded, dependency-free PRNG, so every run draws the same problems.
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uniform(n, random) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = 2 * random() - 1;
  return out;
}

// Mask kinds:
//   'none'          no mask
//   'masked'        one [T, S] mask per (b, h): strides (H*T*S, T*S); about a third of keys blocked
//   'shared'        one [T, S] mask for every (b, h): strides (0, 0)
//   'per-head'      one [T, S] mask per head, shared across the batch: strides (0, T*S)
//   'fully-masked'  per (b, h), with every third query row entirely blocked (zero weights, zero out)
export const MASK_KINDS = ['none', 'masked', 'shared', 'per-head', 'fully-masked'];

export function makeProblem({ B, H, T, S, D, mask = 'none', dWeights = false, seed = 1 }) {
  const random = seededRandom(seed * 7919 + B * 31 + H * 17 + T * 13 + S * 7 + D);
  const p = {
    B, H, T, S, D,
    q: uniform(B * H * T * D, random),
    k: uniform(B * H * S * D, random),
    v: uniform(B * H * S * D, random),
    dOut: uniform(B * H * T * D, random),
    dWeights: dWeights ? uniform(B * H * T * S, random) : undefined,
  };
  const TS = T * S;
  const blocks = { masked: B * H, shared: 1, 'per-head': H, 'fully-masked': B * H }[mask];
  if (mask !== 'none') {
    assert.ok(blocks, `unknown mask kind ${mask}`);
    const m = new Float32Array(blocks * TS);
    for (let i = 0; i < m.length; i++) m[i] = random() < 0.35 ? -Infinity : 0.5 * (random() - 0.5);
    if (mask === 'fully-masked') {
      for (let block = 0; block < blocks; block++)
        for (let t = 0; t < T; t += 3) m.fill(-Infinity, block * TS + t * S, block * TS + (t + 1) * S);
    }
    p.mask = m;
    p.maskStrideB = { masked: H * TS, shared: 0, 'per-head': 0, 'fully-masked': H * TS }[mask];
    p.maskStrideH = { masked: TS, shared: 0, 'per-head': TS, 'fully-masked': TS }[mask];
  }
  const tags = [mask === 'none' ? null : mask, dWeights ? 'dWeights' : null].filter(Boolean);
  p.name = `attention[B=${B},H=${H},T=${T},S=${S},D=${D}${tags.map((t) => `,${t}`).join('')}]`;
  return p;
}

export function maxAbs(a) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, `lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d; // a NaN anywhere fails the check
  }
  return m;
}

// Forward outputs: absolute, since weights and outputs are O(1).
export function assertForwardClose(actual, expected, tolerance, what) {
  for (const key of ['weights', 'out']) {
    const diff = maxAbsDiff(actual[key], expected[key]);
    assert.ok(diff <= tolerance, `${what} ${key}: max abs diff ${diff} > ${tolerance}`);
  }
}

// Gradients: relative to the largest gradient magnitude (they scale with T, S and D).
export function assertBackwardClose(actual, expected, tolerance, what) {
  for (const key of ['dQ', 'dK', 'dV']) {
    const scale = Math.max(1e-6, maxAbs(expected[key]));
    const diff = maxAbsDiff(actual[key], expected[key]) / scale;
    assert.ok(diff <= tolerance, `${what} ${key}: max abs diff / max |${key}| = ${diff} > ${tolerance}`);
  }
}

// Zero weights and a zero output on every fully blocked row, exactly.
export function assertFullyMaskedRowsAreZero(p, { weights, out }, what) {
  if (!p.mask) return;
  for (let b = 0; b < p.B; b++)
    for (let h = 0; h < p.H; h++)
      for (let t = 0; t < p.T; t++) {
        const m = b * p.maskStrideB + h * p.maskStrideH + t * p.S;
        let blocked = true;
        for (let s = 0; s < p.S && blocked; s++) blocked = p.mask[m + s] === -Infinity;
        if (!blocked) continue;
        const row = ((b * p.H + h) * p.T + t);
        for (let s = 0; s < p.S; s++) assert.ok(Object.is(weights[row * p.S + s], 0) || weights[row * p.S + s] === 0, `${what}: weight (${b},${h},${t},${s}) of a fully masked row is ${weights[row * p.S + s]}`);
        for (let d = 0; d < p.D; d++) assert.equal(out[row * p.D + d], 0, `${what}: out (${b},${h},${t},${d}) of a fully masked row`);
      }
}
