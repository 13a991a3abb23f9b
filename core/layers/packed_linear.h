// nn.Linear for inference on large weights (a pretrained BERT: 768 x 3072):
//   y [M, out] = x [M, in] W^T + b,   W [out, in] as PyTorch stores it.
// The weight is packed once, when it is loaded, into panels of eight output columns: panel p holds
// W^T[k][8p .. 8p+7], contiguous. The product then streams each panel once per four rows of x, in the
// vec4 tiles of gemm.cpp (4 rows x 8 columns), instead of striding through W. Packing replaces the
// file's layout (no second copy of the weight is kept).
//
// k runs in blocks of kBlock (768) rows, block after block in memory: [block][panel][k][8]. A wide
// input (GPT-2's and BERT's 3,072 -> 768) then reuses 3 KB of x for every panel of a block, which stays
// in the L1 cache, where a whole 12 KB row of x was pushed out by each 96 KB panel and read again
// (measured on a decoding step: about 13% off that product's time). The sums carry over from block to
// block in y, so every element is still one sum over k ascending from zero: the blocks change no bit.
//
// Each output element is summed over k in ascending order from zero, so the result does not depend
// on how the panels are split between threads (shard_runner: the threads build splits them in two).
//
// A 16-bit checkpoint's weight (BF16 or F16) stays 16-bit in the panels (set_weight_16) and is widened
// to float32 eight at a time inside the product (vec4.h's widen_*_8): half the bytes streamed per
// token, the same sums as over the widened float32 weight (widening is exact).
#pragma once

#include <cstdint>
#include <vector>

#include "../tensor.h"

namespace attnlab {

// How a weight is held: float32, or the 16 bits of a checkpoint's BF16 or F16.
enum class WeightFormat { f32, bf16, f16 };

class PackedLinear {
 public:
  PackedLinear() = default;
  // The panels are allocated in `format` (a 16-bit one takes set_weight_16's bits only).
  PackedLinear(int in_features, int out_features, WeightFormat format = WeightFormat::f32);

  int in_features() const { return in_; }
  int out_features() const { return out_; }

  WeightFormat format() const { return format_; }
  // W [out, in], row-major (the file's layout): float32 for an f32 PackedLinear, the format's 16-bit
  // values (little-endian, as stored) for a 16-bit one.
  void set_weight(const float* w);
  void set_weight_16(const std::uint16_t* w);
  float* bias_data() { return bias_.data(); }
  const float* bias_data() const { return bias_.data(); }
  // W[o][i] back from the panels (tests, and the MLM head's weight-tied view).
  float weight(int o, int i) const;

  // y = x W^T + b. y must not alias x.
  void forward(ConstMatrixRef x, MatrixRef y) const;

 private:
  static constexpr int kBlock = 768;
  std::size_t index(int o, int i) const;  // W[o][i]'s place in packed_

  int in_ = 0, out_ = 0, panels_ = 0;
  WeightFormat format_ = WeightFormat::f32;
  std::vector<float> packed_;  // [blocks of k][panels][k in the block][8]; columns past out_ are zero
  std::vector<std::uint16_t> packed16_;  // the same layout, for a 16-bit format
  std::vector<float> bias_;
};

}  // namespace attnlab
