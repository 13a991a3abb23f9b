// Head split and merge (core/layers/heads.h): against the index formula heads[h][n][d] = x[n][h D + d]
// at sizes around Eigen's packet widths, with sentinels in the strides' gaps (a column range of a fused
// q|k|v product, a key/value cache's spare rows) that must stay untouched, and merge undoing split.
#include <string>

#include "layers/heads.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {
constexpr float kSentinel = 12345.0f;
}

TEST_CASE("split_heads and merge_heads: heads[h][n][d] = x[n][h D + d], strides kept, each the other's inverse") {
  Rng rng(11);
  for (int H : {1, 2, 3})
    for (int N : {1, 3, 4, 5, 9})
      for (int D : {1, 4, 5, 8, 17}) {
        SUBCASE(("heads[H=" + std::to_string(H) + ",N=" + std::to_string(N) + ",D=" + std::to_string(D) + "]").c_str()) {
          // x: a column range [3, 3 + H D) of rows 2 H D + 5 wide; heads: blocks 2 rows apart from each other.
          const std::size_t x_stride = std::size_t(2 * H * D + 5), head_stride = std::size_t(N + 2) * D, offset = 3;
          std::vector<float> x = random_vector(std::size_t(N) * x_stride, rng);
          std::vector<float> heads(std::size_t(H) * head_stride, kSentinel);
          split_heads(x.data() + offset, x_stride, N, H, D, heads.data(), head_stride);
          for (int h = 0; h < H; ++h)
            for (std::size_t i = 0; i < head_stride; ++i) {
              const float got = heads[std::size_t(h) * head_stride + i];
              if (i >= std::size_t(N) * D) {
                CHECK(got == kSentinel);
                continue;
              }
              const std::size_t n = i / std::size_t(D), d = i % std::size_t(D);
              CHECK(got == x[n * x_stride + offset + std::size_t(h) * D + d]);
            }
          std::vector<float> back(x.size(), kSentinel);
          merge_heads(heads.data(), head_stride, N, H, D, back.data() + offset, x_stride);
          for (std::size_t i = 0; i < back.size(); ++i) {
            const std::size_t column = i % x_stride;
            const bool inside = column >= offset && column < offset + std::size_t(H) * D;
            CHECK(back[i] == (inside ? x[i] : kSentinel));
          }
        }
      }
}

TEST_CASE("split_heads and merge_heads over a batch: x [B*N, H D] <-> heads [B, H, N, D]") {
  Rng rng(5);
  const int B = 3, N = 4, H = 2, D = 5;
  const std::vector<float> values = random_vector(std::size_t(B) * N * H * D, rng);
  const RowMatrix x = ConstMatrixMap(values.data(), B * N, H * D);
  std::vector<float> heads;
  split_heads(x, B, N, H, D, heads);
  REQUIRE(heads.size() == values.size());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int n = 0; n < N; ++n)
        for (int d = 0; d < D; ++d) CHECK(heads[((std::size_t(b) * H + h) * N + n) * D + d] == x(b * N + n, h * D + d));
  RowMatrix back;
  merge_heads(heads.data(), B, N, H, D, back);
  CHECK(back == x);
}
