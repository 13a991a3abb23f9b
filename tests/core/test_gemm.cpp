// The layer products of core/gemm.cpp against Eigen's, on shapes that leave every kind of leftover
// (rows past a four-row tile, columns past an eight- and four-wide tile), on blocks of larger matrices
// (strided rows), and summed in the order the header promises.
#include "gemm.h"
#include "test_support.h"

using namespace attnlab;

namespace {

RowMatrix random_matrix(int rows, int cols, Rng& rng) {
  RowMatrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

double max_diff(const RowMatrix& a, const RowMatrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("gemm: x W^T, dy W and W += dy^T x match Eigen on every leftover shape") {
  Rng rng(11, 1);
  for (int M : {1, 3, 4, 9, 64})
    for (int K : {1, 5, 8, 32})
      for (int N : {1, 3, 7, 12, 32, 33}) {
        CAPTURE(M);
        CAPTURE(K);
        CAPTURE(N);
        const RowMatrix x = random_matrix(M, K, rng), w = random_matrix(N, K, rng), dy = random_matrix(M, N, rng);
        RowMatrix y(M, N);
        gemm_abt(x, w, y);
        CHECK(max_diff(y, x * w.transpose()) <= 1e-5);
        RowMatrix dx(M, K);
        gemm_ab(dy, w, dx);
        CHECK(max_diff(dx, dy * w) <= 1e-5);
        RowMatrix dw = random_matrix(N, K, rng);
        const RowMatrix expected = dw + dy.transpose() * x;
        gemm_atb_add(dy, x, dw);
        CHECK(max_diff(dw, expected) <= 1e-4);
      }
}

TEST_CASE("gemm: blocks of larger matrices (strided rows) in and out, nothing outside them touched") {
  Rng rng(12, 1);
  const RowMatrix big_w = random_matrix(3 * 8, 8, rng);  // like in_proj_weight [3E, E]
  const RowMatrix x = random_matrix(10, 12, rng);
  RowMatrix out = RowMatrix::Constant(10, 20, 7.0f);
  gemm_abt(x.leftCols(8), big_w.middleRows(8, 8), out.middleCols(3, 8));
  CHECK(max_diff(out.middleCols(3, 8), x.leftCols(8) * big_w.middleRows(8, 8).transpose()) <= 1e-5);
  CHECK((out.leftCols(3).array() == 7.0f).all());
  CHECK((out.rightCols(9).array() == 7.0f).all());
  RowMatrix grad = RowMatrix::Zero(24, 8);
  const RowMatrix dy = random_matrix(10, 8, rng);
  gemm_atb_add(dy, x.leftCols(8), grad.middleRows(8, 8));
  CHECK(max_diff(grad.middleRows(8, 8), dy.transpose() * x.leftCols(8)) <= 1e-5);
  CHECK((grad.topRows(8).array() == 0.0f).all());
  CHECK((grad.bottomRows(8).array() == 0.0f).all());
}

TEST_CASE("gemm: each element is summed over k in ascending order from zero") {
  Rng rng(13, 1);
  const int M = 5, K = 37, N = 10;
  const RowMatrix x = random_matrix(M, K, rng), w = random_matrix(N, K, rng);
  RowMatrix y(M, N);
  gemm_abt(x, w, y);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < K; ++k) sum += x(i, k) * w(j, k);
      CHECK(y(i, j) == sum);  // bit for bit: no FMA (-ffp-contract=off), the same order
    }
}

TEST_CASE("gemm: blocked double product = float sums over blocks of 16 k added in double, on every leftover shape") {
  // gemm_ab_blocked_double (the Lookup lab's D x): bit for bit the sums its header names, whatever the
  // tiling (rows past a four-row tile, columns past the eight- and four-wide tiles, K past a block),
  // on a strided block of a larger matrix, and nothing outside the output touched.
  Rng rng(14, 1);
  for (int M : {1, 3, 4, 5, 9})
    for (int K : {1, 15, 16, 17, 33, 784})
      for (int N : {1, 3, 4, 5, 8, 9, 13, 17, 100}) {
        CAPTURE(M);
        CAPTURE(K);
        CAPTURE(N);
        const RowMatrix a = random_matrix(M, K + 2, rng), b = random_matrix(K, N, rng);
        const int ldc = N + 3;  // a guard column after each row of C, and a guard row after C
        std::vector<double> c(std::size_t(M + 1) * ldc, -7.0);
        gemm_ab_blocked_double(a.leftCols(K), b, c.data(), ldc);
        int wrong = 0;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double sum = 0.0;
            for (int k0 = 0; k0 < K; k0 += kFloatBlock) {
              float block = 0.0f;
              for (int k = k0; k < k0 + kFloatBlock && k < K; ++k) block += a(i, k) * b(k, j);
              sum += double(block);
            }
            wrong += c[std::size_t(i) * ldc + j] != sum;
          }
        CHECK(wrong == 0);
        int touched = 0;
        for (int i = 0; i <= M; ++i)
          for (int j = i < M ? N : 0; j < ldc; ++j) touched += c[std::size_t(i) * ldc + j] != -7.0;
        CHECK(touched == 0);
      }
}
