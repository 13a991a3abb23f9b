// The scalar reference: plain loops in numbered passes, forward beside backward.
// Every other backend is tested against this file.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention.h"

namespace attnlab {

namespace {

float mask_at(const AttentionMask& mask, int b, int h, std::size_t ts_offset) {
  if (!mask.data) return 0.0f;
  return mask.data[std::size_t(b) * mask.stride_b + std::size_t(h) * mask.stride_h + ts_offset];
}

}  // namespace

void attention_forward_scalar(const AttentionForward& a) {
  const auto [B, H, T, S, D] = a.shape;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const std::size_t bh = std::size_t(b) * H + h;
      const float* q = a.q + bh * T * D;
      const float* k = a.k + a.kv_offset(b, h);
      const float* v = a.v + a.kv_offset(b, h);
      float* weights = a.weights + bh * T * S;
      float* out = a.out + bh * T * D;
      for (int t = 0; t < T; ++t) {
        float* w = weights + std::size_t(t) * S;
        float* o = out + std::size_t(t) * D;
        // 1. scores = scale * q_t . k_s + mask, and the row max (from -inf, never a sentinel)
        float row_max = -std::numeric_limits<float>::infinity();
        for (int s = 0; s < S; ++s) {
          float dot = 0.0f;
          for (int d = 0; d < D; ++d) dot += q[std::size_t(t) * D + d] * k[std::size_t(s) * D + d];
          w[s] = a.scale * dot + mask_at(a.mask, b, h, std::size_t(t) * S + s);
          row_max = std::max(row_max, w[s]);
        }
        // 2. a fully masked row attends to nothing: zero weights, zero output (PyTorch: NaN)
        if (row_max == -std::numeric_limits<float>::infinity()) {
          std::fill(w, w + S, 0.0f);
          std::fill(o, o + D, 0.0f);
          continue;
        }
        // 3. exp(score - max) and the row sum; masked scores are -inf and give exactly 0
        float sum = 0.0f;
        for (int s = 0; s < S; ++s) {
          w[s] = std::exp(w[s] - row_max);
          sum += w[s];
        }
        // 4. normalise
        const float inv_sum = 1.0f / sum;
        for (int s = 0; s < S; ++s) w[s] *= inv_sum;
        // 5. weighted sum of values
        for (int d = 0; d < D; ++d) o[d] = 0.0f;
        for (int s = 0; s < S; ++s)
          for (int d = 0; d < D; ++d) o[d] += w[s] * v[std::size_t(s) * D + d];
      }
    }
  }
}

void attention_backward_scalar(const AttentionBackward& a) {
  const auto [B, H, T, S, D] = a.shape;
  std::memset(a.d_q, 0, sizeof(float) * a.shape.q_size());
  std::memset(a.d_k, 0, sizeof(float) * a.shape.kv_size());
  std::memset(a.d_v, 0, sizeof(float) * a.shape.kv_size());
  std::vector<float> d_scores(std::size_t(std::max(S, 1)));
  for (std::size_t bh = 0; bh < a.shape.problems(); ++bh) {
    const float* q = a.q + bh * T * D;
    const float* k = a.k + bh * S * D;
    const float* v = a.v + bh * S * D;
    const float* weights = a.weights + bh * T * S;
    const float* d_out = a.d_out + bh * T * D;
    const float* d_weights = a.d_weights ? a.d_weights + bh * T * S : nullptr;
    float* d_q = a.d_q + bh * T * D;
    float* d_k = a.d_k + bh * S * D;
    float* d_v = a.d_v + bh * S * D;
    for (int t = 0; t < T; ++t) {
      const float* w = weights + std::size_t(t) * S;
      const float* g = d_out + std::size_t(t) * D;
      // from 5. out_t = sum_s w_s v_s:  dw_s = g . v_s,  dv_s += w_s g
      float dot_w_dw = 0.0f;
      for (int s = 0; s < S; ++s) {
        float dw = d_weights ? d_weights[std::size_t(t) * S + s] : 0.0f;
        for (int d = 0; d < D; ++d) {
          dw += g[d] * v[std::size_t(s) * D + d];
          d_v[std::size_t(s) * D + d] += w[s] * g[d];
        }
        d_scores[s] = dw;
        dot_w_dw += w[s] * dw;
      }
      // from 3.+4. softmax: d_score_s = w_s (dw_s - sum_j w_j dw_j); masked w_s = 0 gives 0
      for (int s = 0; s < S; ++s) d_scores[s] = w[s] * (d_scores[s] - dot_w_dw);
      // from 1. score_s = scale * q_t . k_s
      for (int s = 0; s < S; ++s) {
        const float ds = a.scale * d_scores[s];
        for (int d = 0; d < D; ++d) {
          d_q[std::size_t(t) * D + d] += ds * k[std::size_t(s) * D + d];
          d_k[std::size_t(s) * D + d] += ds * q[std::size_t(t) * D + d];
        }
      }
    }
  }
}

}  // namespace attnlab
