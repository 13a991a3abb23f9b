#include "packed_linear.h"

#include <cassert>

#include "../shard_runner.h"
#include "../vec4.h"

namespace attnlab {

namespace {

using namespace vec4;
constexpr int kPanel = 8;

// C rows r0..r0+rows-1 (rows <= 4), columns 8p..8p+7 of panel p: sum over k of x[r][k] * panel[k][j].
void panel_tile(const float* x, int ldx, int rows, const float* panel, int K, float* out8[4]) {
  const float* a[4];
  for (int r = 0; r < 4; ++r) a[r] = x + (r < rows ? r : rows - 1) * ldx;  // extra rows repeat the last
  f32x4 c00 = zero4(), c01 = zero4(), c10 = zero4(), c11 = zero4();
  f32x4 c20 = zero4(), c21 = zero4(), c30 = zero4(), c31 = zero4();
  for (int k = 0; k < K; ++k) {
    const f32x4 b0 = load4(panel + k * kPanel), b1 = load4(panel + k * kPanel + 4);
    f32x4 s = load_splat4(a[0] + k);
    c00 = add4(c00, mul4(s, b0)), c01 = add4(c01, mul4(s, b1));
    s = load_splat4(a[1] + k);
    c10 = add4(c10, mul4(s, b0)), c11 = add4(c11, mul4(s, b1));
    s = load_splat4(a[2] + k);
    c20 = add4(c20, mul4(s, b0)), c21 = add4(c21, mul4(s, b1));
    s = load_splat4(a[3] + k);
    c30 = add4(c30, mul4(s, b0)), c31 = add4(c31, mul4(s, b1));
  }
  store4(out8[0], c00), store4(out8[0] + 4, c01);
  store4(out8[1], c10), store4(out8[1] + 4, c11);
  store4(out8[2], c20), store4(out8[2] + 4, c21);
  store4(out8[3], c30), store4(out8[3] + 4, c31);
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
