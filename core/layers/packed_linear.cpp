#include "packed_linear.h"

#include <cassert>

#include "../shard_runner.h"
#include "../vec4.h"

namespace attnlab {

namespace {

using namespace vec4;
constexpr int kPanel = 8;

// C rows r0..r0+R-1 (R <= 4), columns 8p..8p+7 of panel p: sum over k of x[r][k] * panel[k][j]. One
// instance per row count, so that a decoding step's single row (greedy translation, one beam) does a
// quarter of a full tile's multiplies instead of repeating its row four times; each element's sum is the
// same in every instance (k ascending from zero), so the row count never changes a bit.
template <int R>
void panel_tile(const float* x, int ldx, const float* panel, int K, float* out8[4]) {
  f32x4 c[R][2];
  for (int r = 0; r < R; ++r) c[r][0] = zero4(), c[r][1] = zero4();
  for (int k = 0; k < K; ++k) {
    const f32x4 b0 = load4(panel + k * kPanel), b1 = load4(panel + k * kPanel + 4);
    for (int r = 0; r < R; ++r) {
      const f32x4 s = load_splat4(x + r * ldx + k);
      c[r][0] = add4(c[r][0], mul4(s, b0)), c[r][1] = add4(c[r][1], mul4(s, b1));
    }
  }
  for (int r = 0; r < R; ++r) store4(out8[r], c[r][0]), store4(out8[r] + 4, c[r][1]);
}

void panel_tile(const float* x, int ldx, int rows, const float* panel, int K, float* out8[4]) {
  switch (rows) {
    case 1: return panel_tile<1>(x, ldx, panel, K, out8);
    case 2: return panel_tile<2>(x, ldx, panel, K, out8);
    case 3: return panel_tile<3>(x, ldx, panel, K, out8);
    default: return panel_tile<4>(x, ldx, panel, K, out8);
  }
}

}  // namespace

PackedLinear::PackedLinear(int in_features, int out_features)
    : in_(in_features),
      out_(out_features),
      panels_((out_features + kPanel - 1) / kPanel),
      packed_(std::size_t(panels_) * in_features * kPanel, 0.0f),
      bias_(std::size_t(out_features), 0.0f) {}

void PackedLinear::set_weight(const float* w) {
  for (int o = 0; o < out_; ++o) {
    float* column = packed_.data() + std::size_t(o / kPanel) * in_ * kPanel + o % kPanel;
    const float* row = w + std::size_t(o) * in_;
    for (int i = 0; i < in_; ++i) column[std::size_t(i) * kPanel] = row[i];
  }
}

float PackedLinear::weight(int o, int i) const {
  return packed_[std::size_t(o / kPanel) * in_ * kPanel + std::size_t(i) * kPanel + o % kPanel];
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
    alignas(16) float spill[4][kPanel];
    for (int p = p0; p < p1; ++p) {
      const float* panel = packed_.data() + std::size_t(p) * in_ * kPanel;
      const int j0 = p * kPanel, width = std::min(kPanel, out_ - j0);
      for (int r = 0; r < M; r += 4) {
        const int rows = std::min(4, M - r);
        float* out8[4];
        // Full panels of real rows store straight into y; a ragged edge goes through `spill`.
        const bool direct = width == kPanel;
        for (int i = 0; i < 4; ++i) out8[i] = direct && i < rows ? &y(r + i, j0) : spill[i];
        panel_tile(x.data() + std::size_t(r) * ldx, ldx, rows, panel, in_, out8);
        for (int i = 0; i < rows; ++i) {
          float* dst = &y(r + i, j0);
          for (int j = 0; j < width; ++j) dst[j] = (direct ? dst[j] : spill[i][j]) + bias_[j0 + j];
        }
      }
    }
  });
}

}  // namespace attnlab
