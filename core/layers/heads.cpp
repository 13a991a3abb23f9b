#include "heads.h"

namespace attnlab {

namespace {

using StridedMap = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;
using ConstStridedMap = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

}  // namespace

// Block copies through Eigen (vectorised) rather than one memcpy call per row of D floats.
void split_heads(const float* x, std::size_t x_stride, int N, int H, int D, float* heads, std::size_t head_stride) {
  if (N == 0 || D == 0) return;
  const Eigen::OuterStride<> x_rows{Eigen::Index(x_stride)};
  for (int h = 0; h < H; ++h)
    MatrixMap(heads + std::size_t(h) * head_stride, N, D) = ConstStridedMap(x + std::size_t(h) * D, N, D, x_rows);
}

void merge_heads(const float* heads, std::size_t head_stride, int N, int H, int D, float* x, std::size_t x_stride) {
  if (N == 0 || D == 0) return;
  const Eigen::OuterStride<> x_rows{Eigen::Index(x_stride)};
  for (int h = 0; h < H; ++h)
    StridedMap(x + std::size_t(h) * D, N, D, x_rows) = ConstMatrixMap(heads + std::size_t(h) * head_stride, N, D);
}

void split_heads(const RowMatrix& x, int B, int N, int H, int D, std::vector<float>& heads) {
  heads.resize(std::size_t(B) * H * N * D);
  const std::size_t x_stride = std::size_t(x.cols()), block = std::size_t(N) * D;
  for (int b = 0; b < B; ++b)
    split_heads(x.data() + std::size_t(b) * N * x_stride, x_stride, N, H, D, heads.data() + std::size_t(b) * H * block, block);
}

void merge_heads(const float* heads, int B, int N, int H, int D, RowMatrix& x) {
  x.resize(std::size_t(B) * N, std::size_t(H) * D);
  const std::size_t x_stride = std::size_t(H) * D, block = std::size_t(N) * D;
  for (int b = 0; b < B; ++b)
    merge_heads(heads + std::size_t(b) * H * block, block, N, H, D, x.data() + std::size_t(b) * N * x_stride, x_stride);
}

}  // namespace attnlab
