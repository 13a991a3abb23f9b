// PackedLinear (core/layers/packed_linear.h): the pretrained models' Linear. Swept around its tile sizes
// (4 rows, 8-column panels) with sentinels past the output, against a float64 loop; and the same bits
// whether the panels run on one thread or two (shard_runner).
#include <string>

#include "layers/packed_linear.h"
#include "shard_runner.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

TEST_CASE("PackedLinear: y = x W^T + b at every size around its tiles") {
  Rng rng(7);
  for (int out : {1, 3, 7, 8, 9, 16, 17, 33})
    for (int in : {1, 4, 5, 16, 37})
      for (int M : {1, 3, 4, 5, 9}) {
        SUBCASE(("PackedLinear[M=" + std::to_string(M) + ",in=" + std::to_string(in) + ",out=" + std::to_string(out) + "]").c_str()) {
          const std::vector<float> w = random_vector(std::size_t(out) * in, rng), b = random_vector(std::size_t(out), rng);
          const std::vector<float> x = random_vector(std::size_t(M) * in, rng);
          PackedLinear layer(in, out);
          layer.set_weight(w.data());
          std::copy(b.begin(), b.end(), layer.bias_data());
          for (int o = 0; o < out; ++o)
            for (int i = 0; i < in; ++i) REQUIRE(layer.weight(o, i) == w[std::size_t(o) * in + i]);
          // One extra column of sentinels: a strided output must keep them.
          RowMatrix y = RowMatrix::Constant(M, out + 1, 12345.0f);
          layer.forward(ConstMatrixMap(x.data(), M, in), y.leftCols(out));
          for (int r = 0; r < M; ++r) {
            CHECK(y(r, out) == 12345.0f);
            for (int o = 0; o < out; ++o) {
              double want = b[std::size_t(o)];
              for (int i = 0; i < in; ++i) want += double(x[std::size_t(r) * in + i]) * w[std::size_t(o) * in + i];
              CHECK(std::fabs(y(r, o) - want) <= 1e-5 * (1.0 + std::fabs(want)) * std::sqrt(double(in)));
            }
          }
        }
      }
}

TEST_CASE("PackedLinear: the same bits on one thread and on two") {
  Rng rng(3);
  const int M = 13, in = 64, out = 72;
  const std::vector<float> w = random_vector(std::size_t(out) * in, rng), x = random_vector(std::size_t(M) * in, rng);
  PackedLinear layer(in, out);
  layer.set_weight(w.data());
  RowMatrix one(M, out), two(M, out);
  ShardRunner& runner = shard_runner();
  const int active = runner.active_workers();
  runner.set_active_workers(0);
  layer.forward(ConstMatrixMap(x.data(), M, in), one);
  runner.set_active_workers(runner.workers());
  layer.forward(ConstMatrixMap(x.data(), M, in), two);
  runner.set_active_workers(active);
  CHECK(one == two);
}

// Inputs wider than one block of k (768 rows: 1,600 = 768 + 768 + 64) carry each sum from block to
// block, so every output is still the plain float sum over k ascending from zero, plus the bias: the
// same bits as the loop below (and as before the blocks), at every row count and with a ragged panel.
TEST_CASE("PackedLinear: blocks of k give the bits of one float sum over k ascending") {
  Rng rng(11);
  const int in = 1600, out = 19;
  const std::vector<float> w = random_vector(std::size_t(out) * in, rng), b = random_vector(std::size_t(out), rng);
  PackedLinear layer(in, out);
  layer.set_weight(w.data());
  std::copy(b.begin(), b.end(), layer.bias_data());
  for (int o = 0; o < out; ++o)
    for (int i : {0, 767, 768, 1535, 1536, 1599}) REQUIRE(layer.weight(o, i) == w[std::size_t(o) * in + i]);
  for (int M : {1, 2, 5}) {
    const std::vector<float> x = random_vector(std::size_t(M) * in, rng);
    RowMatrix y(M, out);
    layer.forward(ConstMatrixMap(x.data(), M, in), y);
    int differ = 0;
    for (int r = 0; r < M; ++r)
      for (int o = 0; o < out; ++o) {
        float sum = 0.0f;
        for (int i = 0; i < in; ++i) sum += x[std::size_t(r) * in + i] * w[std::size_t(o) * in + i];
        differ += y(r, o) != sum + b[std::size_t(o)];
      }
    INFO("M=" << M);
    CHECK(differ == 0);
  }
}
