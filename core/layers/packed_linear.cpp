#include "packed_linear.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "../shard_runner.h"
#include "../vec4.h"

namespace attnlab {

namespace {

using namespace vec4;
constexpr int kPanel = 8;

// A panel's eight weights at one k, as float32: held so, or widened from 16 bits (vec4.h).
struct F32Weights {
  using T = float;
  static void load8(const float* p, f32x4& b0, f32x4& b1) { b0 = load4(p), b1 = load4(p + 4); }
};
struct Bf16Weights {
  using T = std::uint16_t;
  static void load8(const std::uint16_t* p, f32x4& b0, f32x4& b1) { widen_bf16_8(p, b0, b1); }
};
struct F16Weights {
  using T = std::uint16_t;
  static void load8(const std::uint16_t* p, f32x4& b0, f32x4& b1) { widen_f16_8(p, b0, b1); }
};

// C rows r0..r0+R-1 (R <= 4), columns 8p..8p+7 of panel p: sum over k of x[r][k] * panel[k][j], added
// to what out8 holds when `carry` (the sum so far, from the earlier blocks of k), else from zero. One
// instance per row count, so that a decoding step's single row (greedy translation, one beam) does a
// quarter of a full tile's multiplies instead of repeating its row four times; each element's sum is the
// same in every instance (k ascending from zero), so the row count never changes a bit.
template <int R, class W>
void panel_tile(const float* x, int ldx, const typename W::T* panel, int K, bool carry, float* out8[4]) {
  f32x4 c[R][2];
  for (int r = 0; r < R; ++r) {
    c[r][0] = carry ? load4(out8[r]) : zero4();
    c[r][1] = carry ? load4(out8[r] + 4) : zero4();
  }
  for (int k = 0; k < K; ++k) {
    f32x4 b0, b1;
    W::load8(panel + k * kPanel, b0, b1);
    for (int r = 0; r < R; ++r) {
      const f32x4 s = load_splat4(x + r * ldx + k);
      c[r][0] = add4(c[r][0], mul4(s, b0)), c[r][1] = add4(c[r][1], mul4(s, b1));
    }
  }
  for (int r = 0; r < R; ++r) store4(out8[r], c[r][0]), store4(out8[r] + 4, c[r][1]);
}

template <class W>
void panel_tile(const float* x, int ldx, int rows, const typename W::T* panel, int K, bool carry, float* out8[4]) {
  switch (rows) {
    case 1: return panel_tile<1, W>(x, ldx, panel, K, carry, out8);
    case 2: return panel_tile<2, W>(x, ldx, panel, K, carry, out8);
    case 3: return panel_tile<3, W>(x, ldx, panel, K, carry, out8);
    default: return panel_tile<4, W>(x, ldx, panel, K, carry, out8);
  }
}

// One row of x (a decoding step, M = 1) against P adjacent panels of a block at once. Each panel's sums
// are panel_tile<1>'s chain (k ascending from zero, the same adds in the same order: no bit changes);
// what changes is that 2P chains of adds are in flight instead of two, and x[k] is splat once for P
// panels. For 16-bit panels only, whose step is compute-bound (the widening's instructions per weight):
// with vec4.h's one-shuffle bfloat16 widening, a written token of SmolLM2-135M's shape (BF16) went from
// 54.2 to 36.2 ms of CPU time (benchmarks/ab_decode.mjs --which llama; docs/benchmarks.md). Float32
// panels stay one at a time: their loop waits on memory (issue 26's measurements, docs/benchmarks.md).
constexpr int kRowPanels = 4;
template <int P, class W>
void row_panels(const float* x, const typename W::T* panel, std::size_t panel_stride, int K, bool carry, float* const out8[P]) {
  f32x4 c[P][2];
  for (int p = 0; p < P; ++p) {
    c[p][0] = carry ? load4(out8[p]) : zero4();
    c[p][1] = carry ? load4(out8[p] + 4) : zero4();
  }
  for (int k = 0; k < K; ++k) {
    const f32x4 s = load_splat4(x + k);
    for (int p = 0; p < P; ++p) {
      f32x4 b0, b1;
      W::load8(panel + p * panel_stride + std::size_t(k) * kPanel, b0, b1);
      c[p][0] = add4(c[p][0], mul4(s, b0)), c[p][1] = add4(c[p][1], mul4(s, b1));
    }
  }
  for (int p = 0; p < P; ++p) store4(out8[p], c[p][0]), store4(out8[p] + 4, c[p][1]);
}

float widen(std::uint16_t h, WeightFormat format) {
  f32x4 lo, hi;
  const std::uint16_t eight[8] = {h, 0, 0, 0, 0, 0, 0, 0};
  if (format == WeightFormat::bf16) widen_bf16_8(eight, lo, hi);
  else widen_f16_8(eight, lo, hi);
  return lane(lo, 0);
}

}  // namespace

PackedLinear::PackedLinear(int in_features, int out_features, WeightFormat format)
    : in_(in_features), out_(out_features), panels_((out_features + kPanel - 1) / kPanel), format_(format), bias_(std::size_t(out_features), 0.0f) {
  const std::size_t n = std::size_t(panels_) * in_features * kPanel;
  if (format_ == WeightFormat::f32) packed_.assign(n, 0.0f);
  else packed16_.assign(n, 0);  // +0.0 in both 16-bit formats
}

std::size_t PackedLinear::index(int o, int i) const {
  const int k0 = i - i % kBlock, rows = std::min(kBlock, in_ - k0);
  return std::size_t(k0) * panels_ * kPanel + (std::size_t(o / kPanel) * rows + (i - k0)) * kPanel + o % kPanel;
}

void PackedLinear::set_weight(const float* w) {
  assert(format_ == WeightFormat::f32);
  for (int o = 0; o < out_; ++o)
    for (int i = 0; i < in_; ++i) packed_[index(o, i)] = w[std::size_t(o) * in_ + i];
}

void PackedLinear::set_weight_16(const std::uint16_t* w) {
  assert(format_ != WeightFormat::f32);
  for (int o = 0; o < out_; ++o)
    for (int i = 0; i < in_; ++i) packed16_[index(o, i)] = w[std::size_t(o) * in_ + i];
}

float PackedLinear::weight(int o, int i) const {
  return format_ == WeightFormat::f32 ? packed_[index(o, i)] : widen(packed16_[index(o, i)], format_);
}

void PackedLinear::forward(ConstMatrixRef x, MatrixRef y) const {
  assert(x.cols() == in_ && y.cols() == out_ && y.rows() == x.rows());
  const int M = int(x.rows());
  const int ldx = int(x.outerStride());
  // Panels split in contiguous ranges between the shards; each shard writes its own columns only.
  ShardRunner& runner = shard_runner();
  const int shards = std::max(1, std::min(panels_, 1 + runner.active_workers()));
  runner.run(shards, [&](int shard) {
    const int p0 = panels_ * shard / shards, p1 = panels_ * (shard + 1) / shards;
    // A ragged last panel (out_ not a multiple of 8) sums into its own rows; full ones straight into y.
    std::vector<float> ragged(p1 == panels_ && out_ % kPanel ? std::size_t(M) * kPanel : 0);
    auto sums = [&](int p, int r) { return out_ - p * kPanel >= kPanel ? &y(r, p * kPanel) : ragged.data() + std::size_t(r) * kPanel; };
    for (int k0 = 0; k0 < in_; k0 += kBlock) {
      const int rows = std::min(kBlock, in_ - k0);
      const std::size_t block = std::size_t(k0) * panels_ * kPanel;
      int p = p0;
      if (M == 1 && format_ != WeightFormat::f32) {  // a 16-bit decoding step: kRowPanels panels at a time
        for (; p + kRowPanels <= p1; p += kRowPanels) {
          float* out8[kRowPanels];
          for (int i = 0; i < kRowPanels; ++i) out8[i] = sums(p + i, 0);
          const std::size_t panel = block + std::size_t(p) * rows * kPanel, stride = std::size_t(rows) * kPanel;
          if (format_ == WeightFormat::bf16) row_panels<kRowPanels, Bf16Weights>(x.data() + k0, packed16_.data() + panel, stride, rows, k0 > 0, out8);
          else row_panels<kRowPanels, F16Weights>(x.data() + k0, packed16_.data() + panel, stride, rows, k0 > 0, out8);
        }
      }
      for (; p < p1; ++p) {
        const std::size_t panel = block + std::size_t(p) * rows * kPanel;
        for (int r = 0; r < M; r += 4) {
          const int tile_rows = std::min(4, M - r);
          float* out8[4] = {};
          for (int i = 0; i < tile_rows; ++i) out8[i] = sums(p, r + i);
          const float* xr = x.data() + std::size_t(r) * ldx + k0;
          if (format_ == WeightFormat::f32) panel_tile<F32Weights>(xr, ldx, tile_rows, packed_.data() + panel, rows, k0 > 0, out8);
          else if (format_ == WeightFormat::bf16) panel_tile<Bf16Weights>(xr, ldx, tile_rows, packed16_.data() + panel, rows, k0 > 0, out8);
          else panel_tile<F16Weights>(xr, ldx, tile_rows, packed16_.data() + panel, rows, k0 > 0, out8);
        }
      }
    }
    for (int p = p0; p < p1; ++p) {
      const int j0 = p * kPanel, width = std::min(kPanel, out_ - j0);
      for (int r = 0; r < M; ++r) {
        const float* sum = sums(p, r);
        float* dst = &y(r, j0);
        for (int j = 0; j < width; ++j) dst[j] = sum[j] + bias_[j0 + j];
      }
    }
  });
}

}  // namespace attnlab
