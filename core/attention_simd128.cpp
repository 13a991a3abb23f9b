// The SIMD128 kernel: the scalar reference's passes, on register tiles of four rows by eight columns,
// so that no score needs a horizontal sum. Every vector loop finishes with a scalar leftovers loop.
//
//   scores (Q K^T) and dP (dO V^T):  K or V is first transposed to [D, S]; a tile holds four query
//                                    rows by eight keys, each multiply-add a splat of q[t][d] times
//                                    eight consecutive k[s][d] (vectorised along S).
//   P V and dS K:                    four output rows by eight columns of D, each multiply-add a splat
//                                    of one weight times eight consecutive values (vectorised along D).
//   dK = dS^T Q and dV = P^T dO:     computed transposed, dK^T = Q^T dS, with the first kind of tile
//                                    (vectorised along S), so only [T, D] and [S, D] matrices are
//                                    transposed; at small D a [T, S] transpose would cost more than
//                                    the products.
//   softmax rows:                    vectorised along S, with a vector exp (below).
//
// Each output element is still summed in the reference's order (d, s or t ascending, from 0), so the
// products match attention_scalar.cpp bit for bit; only the softmax row sums and the exp differ, by a
// few ulp. The tiles are gemm.cpp's (tiled_product), shared with the layers' products.
//
// In the WASM build this file is compiled with -msimd128 and uses <wasm_simd128.h>; natively the same
// code runs on GCC vector extensions so that its tails are tested by the native suite too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention.h"
#include "gemm.h"
#include "shard_runner.h"
#include "vec4.h"

namespace attnlab {

namespace {

using namespace vec4;

// dst [cols, rows] = src [rows, cols]^T, in 16 x 16 blocks: a plain column walk over a 1024-wide
// matrix strides by 4 KiB, and every write then lands in the same few cache sets.
void transpose(const float* src, int rows, int cols, float* dst) {
  constexpr int kBlock = 16;
  for (int r0 = 0; r0 < rows; r0 += kBlock) {
    const int r1 = std::min(rows, r0 + kBlock);
    for (int c0 = 0; c0 < cols; c0 += kBlock) {
      const int c1 = std::min(cols, c0 + kBlock);
      for (int r = r0; r < r1; ++r)
        for (int c = c0; c < c1; ++c) dst[std::size_t(c) * rows + r] = src[std::size_t(r) * cols + c];
    }
  }
}

// c [rows, N] = a [rows, K] b [K, N] on gemm.cpp's four-row tiles. It serves every product of the
// kernel: scores (a = queries, b = keys transposed), the weighted sum of rows (a = weights,
// b = values), and their backward counterparts.
void matmul(const float* a, const float* b, int rows, int K, int N, float* c) {
  tiled_product(a, K, 1, b, N, rows, K, N, c, N, false);
}

// ---- Rows whose mask blocks a tail of keys (the causal mask: query t sees keys 0 .. t). A row's
// products and softmax run over its first `extent` keys: the last key it can see plus one, rounded up
// to four (or S). Past it every score is -inf and every weight exactly 0, so skipping those keys leaves
// the bits of everything computed as they were: each product is a sum from 0 over k ascending, less
// trailing zero terms, and the softmax's four lanes lose whole groups of zeros (exp4_nonpositive(-inf)
// is exactly 0). The skipped weights are written 0. A causal [T, T] mask halves the attention's work.

// extents[t] for each query row t of a problem's [T, S] rows (S everywhere without them): the forward
// reads its mask (blocked: -inf), the backward the forward's weights (blocked: 0, a masked weight, or
// one that underflowed: either way its score's gradient is w (...) = 0). -> whether any row needs fewer
// than S keys.
bool row_extents(const float* rows, float blocked, int T, int S, std::vector<int>& extents) {
  extents.assign(std::size_t(T), S);
  if (!rows) return false;
  bool shorter = false;
  for (int t = 0; t < T; ++t) {
    const float* m = rows + std::size_t(t) * S;
    int end = S;
    while (end > 0 && m[end - 1] == blocked) --end;
    if (end < S) {
      extents[std::size_t(t)] = std::min(S, (end + 3) / 4 * 4);
      shorter = shorter || extents[std::size_t(t)] < S;
    }
  }
  return shorter;
}

// The keys a four-row tile from row t0 needs: its rows' largest extent.
int tile_extent(const std::vector<int>& extents, int t0, int T) {
  int n = 0;
  for (int t = t0; t < std::min(T, t0 + 4); ++t) n = std::max(n, extents[std::size_t(t)]);
  return n;
}

// c [T, n_tile] (+)= a [T, K] b [K, ...] tile by tile, each four-row tile of c over its extent's columns:
// the scores q k^T and dO v^T of masked rows.
void matmul_row_extents(const float* a, const float* b, int T, int K, int N, float* c, const std::vector<int>& extents) {
  for (int t0 = 0; t0 < T; t0 += 4)
    tiled_product(a + std::size_t(t0) * K, K, 1, b, N, std::min(4, T - t0), K, tile_extent(extents, t0, T),
                  c + std::size_t(t0) * N, N, false);
}

// c [T, N] = w [T, S] b [S, N], each four-row tile summed over its extent's keys only: P V and dS K.
void matmul_key_extents(const float* w, const float* b, int T, int S, int N, float* c, const std::vector<int>& extents) {
  for (int t0 = 0; t0 < T; t0 += 4)
    tiled_product(w + std::size_t(t0) * S, S, 1, b, N, std::min(4, T - t0), tile_extent(extents, t0, T), N,
                  c + std::size_t(t0) * N, N, false);
}

// One row of passes 1-4: w holds the dot products q_t . k_s and becomes the softmax weights.
// n: the row's extent (above; S for every row without a mask): [n, S) is masked and becomes 0.
void softmax_row(float* w, const float* mask_row, float scale, int S, int n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::fill(w + n, w + S, 0.0f);
  S = n;
  // 1. scores = scale * dot + mask, and the row max (from -inf, never a sentinel)
  const f32x4 scale4 = splat4(scale);
  f32x4 max_v = splat4(neg_inf);
  int s = 0;
  for (; s + 4 <= S; s += 4) {
    f32x4 x = mul4(scale4, load4(w + s));
    if (mask_row) x = add4(x, load4(mask_row + s));
    store4(w + s, x);
    max_v = max4(max_v, x);
  }
  float row_max = hmax(max_v);
  for (; s < S; ++s) {  // leftovers
    w[s] = scale * w[s] + (mask_row ? mask_row[s] : 0.0f);
    row_max = std::max(row_max, w[s]);
  }
  // 2. a fully masked row attends to nothing: zero weights (and so a zero output)
  if (row_max == neg_inf) {
    std::fill(w, w + S, 0.0f);
    return;
  }
  // 3. exp(score - max) and the row sum; masked scores are -inf and give exactly 0
  const f32x4 max4v = splat4(row_max);
  f32x4 sum_v = zero4();
  for (s = 0; s + 4 <= S; s += 4) {
    const f32x4 e = exp4_nonpositive(sub4(load4(w + s), max4v));
    store4(w + s, e);
    sum_v = add4(sum_v, e);
  }
  float sum = hsum(sum_v);
  for (; s < S; ++s) {  // leftovers
    w[s] = std::exp(w[s] - row_max);
    sum += w[s];
  }
  // 4. normalise
  const float inv_sum = 1.0f / sum;
  const f32x4 inv4 = splat4(inv_sum);
  for (s = 0; s + 4 <= S; s += 4) store4(w + s, mul4(load4(w + s), inv4));
  for (; s < S; ++s) w[s] *= inv_sum;  // leftovers
}


// Passes 3.+4. and 1. backward for one row: ds holds dL/dw_s (the weighted sum's part) and becomes
// dL/dscore_s = scale * w_s (dw_s - sum_j w_j dw_j), with dw_extra (dL/dw from the loss, or nullptr)
// added to dw first; masked w_s = 0 gives 0.
// n: the row's extent; [n, S) has w = 0 and gets 0.
void softmax_row_backward(float* ds, const float* w, const float* dw_extra, float scale, int S, int n) {
  std::fill(ds + n, ds + S, 0.0f);
  S = n;
  f32x4 dot_v = zero4();
  int s = 0;
  for (; s + 4 <= S; s += 4) {
    f32x4 dw = load4(ds + s);
    if (dw_extra) dw = add4(dw, load4(dw_extra + s));
    store4(ds + s, dw);
    dot_v = add4(dot_v, mul4(load4(w + s), dw));
  }
  float dot_w_dw = hsum(dot_v);
  for (; s < S; ++s) {  // leftovers
    if (dw_extra) ds[s] += dw_extra[s];
    dot_w_dw += w[s] * ds[s];
  }
  const f32x4 dot4 = splat4(dot_w_dw), scale4 = splat4(scale);
  for (s = 0; s + 4 <= S; s += 4) store4(ds + s, mul4(scale4, mul4(load4(w + s), sub4(load4(ds + s), dot4))));
  for (; s < S; ++s) ds[s] = scale * (w[s] * (ds[s] - dot_w_dw));  // leftovers
}

// ---- One query per problem (T = 1; the Count lab runs 100 problems of 1 x 10 a step). The tiles
// work on four query rows, so at T = 1 three of every four rows are copies of the first, and dK, dV
// would go through two transposes each. These loops compute the same sums in the same order (each
// from 0, over k ascending), so they give the tiled path's bits.

// c [N] = sum_k a[k] b[k, :] for b [K, N]: one row of matmul(), vectorised along N.
void one_row_product(const float* a, const float* b, int K, int N, float* c) {
  int j = 0;
  for (; j + 4 <= N; j += 4) {
    f32x4 sum = zero4();
    for (int k = 0; k < K; ++k) sum = add4(sum, mul4(splat4(a[k]), load4(b + std::size_t(k) * N + j)));
    store4(c + j, sum);
  }
  for (; j < N; ++j) {  // leftovers
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += a[k] * b[std::size_t(k) * N + j];
    c[j] = sum;
  }
}

// dots [S] = x . rows_s for rows [S, D]: matmul(x, rows^T) without the transpose (at T = 1 the
// transpose moves as many floats as the product reads). Four rows at a time, so that four sums
// are in flight; each from 0, over d ascending.
void row_dots(const float* x, const float* rows, int S, int D, float* dots) {
  int s = 0;
  for (; s + 4 <= S; s += 4) {
    const float* r = rows + std::size_t(s) * D;
    float sum0 = 0.0f, sum1 = 0.0f, sum2 = 0.0f, sum3 = 0.0f;
    for (int d = 0; d < D; ++d) {
      const float xd = x[d];
      sum0 += xd * r[d], sum1 += xd * r[D + d], sum2 += xd * r[2 * D + d], sum3 += xd * r[3 * D + d];
    }
    dots[s] = sum0, dots[s + 1] = sum1, dots[s + 2] = sum2, dots[s + 3] = sum3;
  }
  for (; s < S; ++s) {  // leftovers
    float sum = 0.0f;
    for (int d = 0; d < D; ++d) sum += x[d] * rows[std::size_t(s) * D + d];
    dots[s] = sum;
  }
}

// c [S, D] = x [S] y [D]^T, each element 0 + x_s y_d: the product of a one-row matmul (the 0 turns a
// -0 product into +0, as the tiled path's sum from 0 does).
void outer_product(const float* x, const float* y, int S, int D, float* c) {
  for (int s = 0; s < S; ++s) {
    const f32x4 xs = splat4(x[s]);
    float* row = c + std::size_t(s) * D;
    int d = 0;
    for (; d + 4 <= D; d += 4) store4(row + d, add4(zero4(), mul4(load4(y + d), xs)));
    for (; d < D; ++d) row[d] = 0.0f + y[d] * x[s];  // leftovers
  }
}

}  // namespace

bool simd128_is_native_wasm_simd() {
#if defined(__wasm_simd128__)
  return true;
#else
  return false;
#endif
}

namespace {

// Problems first .. last - 1 of a forward call (problem bh is batch bh / H, head bh % H). Each problem's
// numbers depend on its own rows alone, so any split of the problems gives the same bits.
void forward_problems(const AttentionForward& a, std::size_t first, std::size_t last) {
  const int H = a.shape.H, T = a.shape.T, S = a.shape.S, D = a.shape.D;
  std::vector<float> k_t(std::size_t(D) * S);  // k transposed to [D, S]
  std::vector<int> extents;                     // [T]: the keys each query row needs
  // ... read from the mask once for every problem that shares it (a causal mask is one [T, S] for all).
  const float* extents_of = nullptr;
  bool have_extents = false, shorter = false;
  for (std::size_t bh = first; bh < last; ++bh) {
    const int b = int(bh / std::size_t(H)), h = int(bh % std::size_t(H));
    const float* q = a.q + bh * T * D;
    const float* k = a.k + a.kv_offset(b, h);
    const float* v = a.v + a.kv_offset(b, h);
    float* weights = a.weights + bh * T * S;
    float* out = a.out + bh * T * D;
    const float* mask = a.mask.data
                            ? a.mask.data + std::size_t(b) * a.mask.stride_b +
                                  std::size_t(h) * a.mask.stride_h
                            : nullptr;
    if (T == 1) {  // one query: the passes below on one row
      row_dots(q, k, S, D, weights);
      softmax_row(weights, mask, a.scale, S, S);
      one_row_product(weights, v, S, D, out);
      continue;
    }
    // 1. dot products q_t . k_s, four queries by eight keys at a time (over each row's extent)
    if (!have_extents || mask != extents_of) {
      shorter = row_extents(mask, -std::numeric_limits<float>::infinity(), T, S, extents);
      extents_of = mask;
      have_extents = true;
    }
    transpose(k, S, D, k_t.data());
    if (shorter) matmul_row_extents(q, k_t.data(), T, D, S, weights, extents);
    else matmul(q, k_t.data(), T, D, S, weights);
    // 1.-4. scale, mask, max, exp, sum, normalise, row by row
    for (int t = 0; t < T; ++t)
      softmax_row(weights + std::size_t(t) * S, mask ? mask + std::size_t(t) * S : nullptr, a.scale, S, extents[std::size_t(t)]);
    // 5. weighted sum of values (a fully masked row has zero weights, so a zero output)
    if (shorter) matmul_key_extents(weights, v, T, S, D, out, extents);
    else matmul(weights, v, T, S, D, out);
  }
}

// Below this many multiply-adds a call runs on one thread: handing a job to a worker costs a few
// microseconds even when it is awake (core/shard_runner.cpp).
constexpr double kShardedMultiplyAdds = 32768;

}  // namespace

// The problems split in contiguous ranges over the shard runner's active workers (the threads builds):
// a written token's attention over its cache (SmolLM2-135M's shape: 9 heads by up to 1,000 keys in each
// of 30 layers) was the largest part of a step left on one thread. Called from inside a trainer's
// shard, every range runs on that shard's thread.
void attention_forward_simd128(const AttentionForward& a) {
  const std::size_t problems = a.shape.problems();
  ShardRunner& runner = shard_runner();
  const double work = a.shape.forward_flops() / 2;
  const int shards = ShardRunner::inside_job() || work < kShardedMultiplyAdds
                         ? 1 : int(std::min<std::size_t>(problems, std::size_t(1 + runner.active_workers())));
  if (shards <= 1) return forward_problems(a, 0, problems);
  runner.run(shards, [&](int shard) { forward_problems(a, problems * shard / shards, problems * (shard + 1) / shards); });
}

void attention_backward_simd128(const AttentionBackward& a) {
  const auto [B, H, T, S, D] = a.shape;
  std::vector<float> v_t(std::size_t(D) * S);          // v transposed to [D, S]
  std::vector<float> d_scores(std::size_t(T) * S);     // [T, S]
  std::vector<float> rows_t(std::size_t(D) * T);       // q or d_out transposed to [D, T]
  std::vector<float> grad_t(std::size_t(D) * S);       // dK or dV transposed, [D, S]
  std::vector<int> extents;                            // [T]: the keys each query row needs
  for (std::size_t bh = 0; bh < a.shape.problems(); ++bh) {
    const float* q = a.q + bh * T * D;
    const float* k = a.k + bh * S * D;
    const float* v = a.v + bh * S * D;
    const float* weights = a.weights + bh * T * S;
    const float* d_out = a.d_out + bh * T * D;
    const float* d_weights = a.d_weights ? a.d_weights + bh * T * S : nullptr;
    if (T == 1) {  // one query: the passes below on one row
      row_dots(d_out, v, S, D, d_scores.data());
      softmax_row_backward(d_scores.data(), weights, d_weights, a.scale, S, S);
      one_row_product(d_scores.data(), k, S, D, a.d_q + bh * D);
      outer_product(d_scores.data(), q, S, D, a.d_k + bh * S * D);
      outer_product(weights, d_out, S, D, a.d_v + bh * S * D);
      continue;
    }
    // from 5. out_t = sum_s w_s v_s:  dw_s = g_t . v_s (+ dL/dw_s)
    const bool shorter = row_extents(weights, 0.0f, T, S, extents);
    transpose(v, S, D, v_t.data());
    if (shorter) matmul_row_extents(d_out, v_t.data(), T, D, S, d_scores.data(), extents);
    else matmul(d_out, v_t.data(), T, D, S, d_scores.data());
    // from 3.+4. softmax: d_score_s = w_s (dw_s - sum_j w_j dw_j); masked w_s = 0 gives 0.
    // from 1.: times scale.
    for (int t = 0; t < T; ++t)
      softmax_row_backward(d_scores.data() + std::size_t(t) * S, weights + std::size_t(t) * S,
                           d_weights ? d_weights + std::size_t(t) * S : nullptr, a.scale, S, extents[std::size_t(t)]);
    // from 1. score_s = scale * q_t . k_s:  dQ = dS K,  dK = dS^T Q, computed as dK^T = Q^T dS so
    // that only [T, D] and [S, D] matrices are transposed, never a [T, S] one
    if (shorter) matmul_key_extents(d_scores.data(), k, T, S, D, a.d_q + bh * T * D, extents);
    else matmul(d_scores.data(), k, T, S, D, a.d_q + bh * T * D);
    transpose(q, T, D, rows_t.data());
    matmul(rows_t.data(), d_scores.data(), D, T, S, grad_t.data());
    transpose(grad_t.data(), D, S, a.d_k + bh * S * D);
    // from 5.: dV = W^T dO, as dV^T = dO^T W
    transpose(d_out, T, D, rows_t.data());
    matmul(rows_t.data(), weights, D, T, S, grad_t.data());
    transpose(grad_t.data(), D, S, a.d_v + bh * S * D);
  }
}

}  // namespace attnlab
