// Batched multi-head scaled dot-product attention: the one kernel interface every backend implements.
//
//   q        [B, H, T, D]      queries
//   k, v     [B, H, S, D]      keys, values (or [B, Hkv, S, D]: grouped-query attention, kv_heads)
//   mask     additive, broadcast: element (b, h, t, s) is at b*stride_b + h*stride_h + t*S + s;
//            -inf means "may not attend". nullptr means no mask.
//   weights  [B, H, T, S]      softmax(scale * q k^T + mask) over s
//   out      [B, H, T, D]      weights v
//
// Numerics that a teacher can trust: the row max starts at -infinity and is subtracted before exp;
// masked positions get exactly zero weight; a row whose every key is masked gets zero weights and a
// zero output. PyTorch returns NaN for such a row instead: we differ on purpose (docs/attention.md).
#pragma once

#include <cstddef>

#include "backend.h"
#include "shape.h"

namespace attnlab {

struct AttentionMask {
  const float* data = nullptr;
  std::size_t stride_b = 0;
  std::size_t stride_h = 0;
};

struct AttentionForward {
  AttentionShape shape;
  float scale = 1.0f;  // usually 1/sqrt(D)
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  AttentionMask mask;
  float* weights = nullptr;
  float* out = nullptr;
  // Floats from one (b, h) problem's keys (and values) to the next's; 0 means S * D, the contiguous
  // [B, H, S, D]. A key/value cache with room to grow passes its capacity times D, so that appending a
  // token moves nothing (gpt2.h).
  std::size_t kv_stride = 0;
  std::size_t kv_problem_stride() const { return kv_stride ? kv_stride : std::size_t(shape.S) * shape.D; }
  // Key/value heads per batch: 0 means H. Fewer (grouped-query attention; H a multiple of them): k and v
  // are [B, kv_heads, S, D], and query head h reads key/value head h / (H / kv_heads) where it lies, so
  // a group shares one head's rows without a copy (decoder.h).
  int kv_heads = 0;
  // Where problem (b, h)'s keys and values start.
  std::size_t kv_offset(int b, int h) const {
    const int Hkv = kv_heads > 0 ? kv_heads : shape.H;
    return (std::size_t(b) * Hkv + std::size_t(h / (shape.H / Hkv))) * kv_problem_stride();
  }
};

// Gradients of a loss L with respect to q, k and v, given dL/d(out) and, optionally, dL/d(weights)
// (for losses that look at the attention map itself). Needs the forward's weights; the mask is
// already folded into them (masked weights are exactly 0, so no gradient flows there).
struct AttentionBackward {
  AttentionShape shape;
  float scale = 1.0f;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const float* weights = nullptr;
  const float* d_out = nullptr;      // [B, H, T, D]
  const float* d_weights = nullptr;  // [B, H, T, S] or nullptr
  float* d_q = nullptr;              // [B, H, T, D], overwritten
  float* d_k = nullptr;              // [B, H, S, D], overwritten
  float* d_v = nullptr;              // [B, H, S, D], overwritten
};

void attention_forward_scalar(const AttentionForward& a);
void attention_backward_scalar(const AttentionBackward& a);
void attention_forward_simd128(const AttentionForward& a);
void attention_backward_simd128(const AttentionBackward& a);

// True when this build compiled the SIMD128 kernel with real WASM SIMD instructions (native builds
// run the same algorithm on GCC vector extensions and report false).
bool simd128_is_native_wasm_simd();

// Runs a CPU backend. WebGPU runs in JS (web/webgpu/) and is driven by the staged trainers; asking this
// function for it runs SIMD128 instead, which is what a lost device falls back to.
void attention_forward(Backend backend, const AttentionForward& a);
void attention_backward(Backend backend, const AttentionBackward& a);

}  // namespace attnlab
