// The one legend of dimensions used everywhere in Attention Lab: C++, WGSL uniforms, JS and the page.
//
//   B  batch size
//   H  number of attention heads
//   T  query length   (target / output positions)
//   S  key length     (source / input positions)
//   D  head dimension (E / H)
//   E  model (embedding) dimension
//
// Tensors are dense, row-major, float32. The attention kernel works on [B, H, T, D] queries,
// [B, H, S, D] keys and values, and produces [B, H, T, S] weights and [B, H, T, D] outputs.
#pragma once

#include <cstddef>

namespace attnlab {

struct AttentionShape {
  int B = 0;
  int H = 0;
  int T = 0;
  int S = 0;
  int D = 0;

  std::size_t problems() const { return std::size_t(B) * std::size_t(H); }
  std::size_t q_size() const { return problems() * std::size_t(T) * std::size_t(D); }
  std::size_t kv_size() const { return problems() * std::size_t(S) * std::size_t(D); }
  std::size_t weights_size() const { return problems() * std::size_t(T) * std::size_t(S); }
  // Two matrix products (Q K^T and P V), 2 FLOPs per multiply-add.
  double forward_flops() const { return 2.0 * 2.0 * double(problems()) * T * S * D; }
  // Backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
  double backward_flops() const { return 4.0 * 2.0 * double(problems()) * T * S * D; }
};

}  // namespace attnlab
