// The SIMD128 kernel: the scalar reference's passes, vectorised four floats at a time along D, with a
// scalar leftovers loop for D % 4. Dot products take four keys at once so that one horizontal sum
// serves four scores. In the WASM build this file is compiled with -msimd128 and uses
// <wasm_simd128.h>; natively the same code runs on GCC vector extensions so that its tails are tested
// by the native suite too.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attnlab {

namespace {

#if defined(__wasm_simd128__)
using f32x4 = v128_t;
inline f32x4 load4(const float* p) { return wasm_v128_load(p); }
inline void store4(float* p, f32x4 x) { wasm_v128_store(p, x); }
inline f32x4 splat4(float x) { return wasm_f32x4_splat(x); }
inline f32x4 add4(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
inline f32x4 mul4(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
inline f32x4 zero4() { return wasm_f32x4_splat(0.0f); }
inline float lane(f32x4 x, int i) {
  switch (i) {
    case 0: return wasm_f32x4_extract_lane(x, 0);
    case 1: return wasm_f32x4_extract_lane(x, 1);
    case 2: return wasm_f32x4_extract_lane(x, 2);
    default: return wasm_f32x4_extract_lane(x, 3);
  }
}
#else
typedef float f32x4 __attribute__((vector_size(16)));
inline f32x4 load4(const float* p) {
  f32x4 x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
inline void store4(float* p, f32x4 x) { std::memcpy(p, &x, sizeof x); }
inline f32x4 splat4(float x) { return f32x4{x, x, x, x}; }
inline f32x4 add4(f32x4 a, f32x4 b) { return a + b; }
inline f32x4 mul4(f32x4 a, f32x4 b) { return a * b; }
inline f32x4 zero4() { return f32x4{0, 0, 0, 0}; }
inline float lane(f32x4 x, int i) { return x[i]; }
#endif

inline float hsum(f32x4 x) { return (lane(x, 0) + lane(x, 1)) + (lane(x, 2) + lane(x, 3)); }

// out[0..3] = a . b0, a . b1, a . b2, a . b3 over D floats.
inline void dot_1x4(const float* a, const float* b0, const float* b1, const float* b2,
                    const float* b3, int D, float* out) {
  f32x4 s0 = zero4(), s1 = zero4(), s2 = zero4(), s3 = zero4();
  int d = 0;
  for (; d + 4 <= D; d += 4) {
    const f32x4 x = load4(a + d);
    s0 = add4(s0, mul4(x, load4(b0 + d)));
    s1 = add4(s1, mul4(x, load4(b1 + d)));
    s2 = add4(s2, mul4(x, load4(b2 + d)));
    s3 = add4(s3, mul4(x, load4(b3 + d)));
  }
  float r0 = hsum(s0), r1 = hsum(s1), r2 = hsum(s2), r3 = hsum(s3);
  for (; d < D; ++d) {  // leftovers
    r0 += a[d] * b0[d];
    r1 += a[d] * b1[d];
    r2 += a[d] * b2[d];
    r3 += a[d] * b3[d];
  }
  out[0] = r0;
  out[1] = r1;
  out[2] = r2;
  out[3] = r3;
}

inline float dot_1x1(const float* a, const float* b, int D) {
  f32x4 s = zero4();
  int d = 0;
  for (; d + 4 <= D; d += 4) s = add4(s, mul4(load4(a + d), load4(b + d)));
  float r = hsum(s);
  for (; d < D; ++d) r += a[d] * b[d];
  return r;
}

// y += alpha * x over D floats.
inline void axpy(float alpha, const float* x, float* y, int D) {
  const f32x4 a = splat4(alpha);
  int d = 0;
  for (; d + 4 <= D; d += 4) store4(y + d, add4(load4(y + d), mul4(a, load4(x + d))));
  for (; d < D; ++d) y[d] += alpha * x[d];
}

// scores[s] = a . rows[s] for s in [0, S), four rows at a time.
inline void dots_against_rows(const float* a, const float* rows, int S, int D, float* scores) {
  int s = 0;
  for (; s + 4 <= S; s += 4) {
    const float* r = rows + std::size_t(s) * D;
    dot_1x4(a, r, r + D, r + 2 * D, r + 3 * D, D, scores + s);
  }
  for (; s < S; ++s) scores[s] = dot_1x1(a, rows + std::size_t(s) * D, D);
}

}  // namespace

bool simd128_is_native_wasm_simd() {
#if defined(__wasm_simd128__)
  return true;
#else
  return false;
#endif
}

void attention_forward_simd128(const AttentionForward& a) {
  const auto [B, H, T, S, D] = a.shape;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const std::size_t bh = std::size_t(b) * H + h;
      const float* q = a.q + bh * T * D;
      const float* k = a.k + bh * S * D;
      const float* v = a.v + bh * S * D;
      const float* mask = a.mask.data
                              ? a.mask.data + std::size_t(b) * a.mask.stride_b +
                                    std::size_t(h) * a.mask.stride_h
                              : nullptr;
      for (int t = 0; t < T; ++t) {
        float* w = a.weights + (bh * T + t) * S;
        float* o = a.out + (bh * T + t) * D;
        // 1. scores and row max
        dots_against_rows(q + std::size_t(t) * D, k, S, D, w);
        float row_max = -std::numeric_limits<float>::infinity();
        for (int s = 0; s < S; ++s) {
          w[s] = a.scale * w[s] + (mask ? mask[std::size_t(t) * S + s] : 0.0f);
          row_max = std::max(row_max, w[s]);
        }
        std::fill(o, o + D, 0.0f);
        // 2. fully masked row: zero weights and output
        if (row_max == -std::numeric_limits<float>::infinity()) {
          std::fill(w, w + S, 0.0f);
          continue;
        }
        // 3. exp and sum, 4. normalise
        float sum = 0.0f;
        for (int s = 0; s < S; ++s) {
          w[s] = std::exp(w[s] - row_max);
          sum += w[s];
        }
        const float inv_sum = 1.0f / sum;
        for (int s = 0; s < S; ++s) w[s] *= inv_sum;
        // 5. weighted sum of values (masked weights are exactly 0: skip their rows)
        for (int s = 0; s < S; ++s)
          if (w[s] != 0.0f) axpy(w[s], v + std::size_t(s) * D, o, D);
      }
    }
  }
}

void attention_backward_simd128(const AttentionBackward& a) {
  const auto [B, H, T, S, D] = a.shape;
  std::memset(a.d_q, 0, sizeof(float) * a.shape.q_size());
  std::memset(a.d_k, 0, sizeof(float) * a.shape.kv_size());
  std::memset(a.d_v, 0, sizeof(float) * a.shape.kv_size());
  std::vector<float> d_scores(std::size_t(std::max(S, 1)));
  for (std::size_t bh = 0; bh < a.shape.problems(); ++bh) {
    const float* q = a.q + bh * T * D;
    const float* k = a.k + bh * S * D;
    const float* v = a.v + bh * S * D;
    float* d_q = a.d_q + bh * T * D;
    float* d_k = a.d_k + bh * S * D;
    float* d_v = a.d_v + bh * S * D;
    for (int t = 0; t < T; ++t) {
      const float* w = a.weights + (bh * T + t) * S;
      const float* g = a.d_out + (bh * T + t) * D;
      const float* d_weights = a.d_weights ? a.d_weights + (bh * T + t) * S : nullptr;
      // from 5.: dw_s = g . v_s (+ dL/dw_s), dv_s += w_s g
      dots_against_rows(g, v, S, D, d_scores.data());
      float dot_w_dw = 0.0f;
      for (int s = 0; s < S; ++s) {
        if (d_weights) d_scores[s] += d_weights[s];
        dot_w_dw += w[s] * d_scores[s];
        if (w[s] != 0.0f) axpy(w[s], g, d_v + std::size_t(s) * D, D);
      }
      // from 3.+4. softmax, then 1. scores: dq_t += scale ds_s k_s, dk_s += scale ds_s q_t
      for (int s = 0; s < S; ++s) {
        const float ds = a.scale * w[s] * (d_scores[s] - dot_w_dw);
        if (ds == 0.0f) continue;
        axpy(ds, k + std::size_t(s) * D, d_q + std::size_t(t) * D, D);
        axpy(ds, q + std::size_t(t) * D, d_k + std::size_t(s) * D, D);
      }
    }
  }
}

}  // namespace attnlab
