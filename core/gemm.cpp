#include "gemm.h"

#include <cassert>
#include <vector>

#include "vec4.h"

namespace attnlab {

namespace {

using namespace vec4;

// c_i[j..] (+)= sum_k a_i[k * a_step] * b[k * ldb + j..] for the four rows i of a tile, every column j
// of b's N. Rows of a tile past the matrix's end repeat its last row: they compute the same values
// from the same inputs, and every load of c happens before any store, so they store the same bits.
void four_rows(const float* const a[4], std::ptrdiff_t a_step, const float* b, std::ptrdiff_t ldb, int K, int N,
               float* const c[4], bool accumulate) {
  int j = 0;
  for (; j + 8 <= N; j += 8) {
    f32x4 c00 = zero4(), c01 = zero4(), c10 = zero4(), c11 = zero4();
    f32x4 c20 = zero4(), c21 = zero4(), c30 = zero4(), c31 = zero4();
    for (int k = 0; k < K; ++k) {
      const float* row = b + k * ldb + j;
      const f32x4 b0 = load4(row), b1 = load4(row + 4);
      const std::ptrdiff_t ak = k * a_step;
      f32x4 x = splat4(a[0][ak]);
      c00 = add4(c00, mul4(x, b0)), c01 = add4(c01, mul4(x, b1));
      x = splat4(a[1][ak]);
      c10 = add4(c10, mul4(x, b0)), c11 = add4(c11, mul4(x, b1));
      x = splat4(a[2][ak]);
      c20 = add4(c20, mul4(x, b0)), c21 = add4(c21, mul4(x, b1));
      x = splat4(a[3][ak]);
      c30 = add4(c30, mul4(x, b0)), c31 = add4(c31, mul4(x, b1));
    }
    if (accumulate) {
      const f32x4 o00 = load4(c[0] + j), o01 = load4(c[0] + j + 4), o10 = load4(c[1] + j), o11 = load4(c[1] + j + 4);
      const f32x4 o20 = load4(c[2] + j), o21 = load4(c[2] + j + 4), o30 = load4(c[3] + j), o31 = load4(c[3] + j + 4);
      c00 = add4(o00, c00), c01 = add4(o01, c01), c10 = add4(o10, c10), c11 = add4(o11, c11);
      c20 = add4(o20, c20), c21 = add4(o21, c21), c30 = add4(o30, c30), c31 = add4(o31, c31);
    }
    store4(c[0] + j, c00), store4(c[0] + j + 4, c01);
    store4(c[1] + j, c10), store4(c[1] + j + 4, c11);
    store4(c[2] + j, c20), store4(c[2] + j + 4, c21);
    store4(c[3] + j, c30), store4(c[3] + j + 4, c31);
  }
  for (; j + 4 <= N; j += 4) {  // one four-wide column tile (e.g. N = 12)
    f32x4 c0 = zero4(), c1 = zero4(), c2 = zero4(), c3 = zero4();
    for (int k = 0; k < K; ++k) {
      const f32x4 r = load4(b + k * ldb + j);
      const std::ptrdiff_t ak = k * a_step;
      c0 = add4(c0, mul4(splat4(a[0][ak]), r));
      c1 = add4(c1, mul4(splat4(a[1][ak]), r));
      c2 = add4(c2, mul4(splat4(a[2][ak]), r));
      c3 = add4(c3, mul4(splat4(a[3][ak]), r));
    }
    if (accumulate) {
      const f32x4 o0 = load4(c[0] + j), o1 = load4(c[1] + j), o2 = load4(c[2] + j), o3 = load4(c[3] + j);
      c0 = add4(o0, c0), c1 = add4(o1, c1), c2 = add4(o2, c2), c3 = add4(o3, c3);
    }
    store4(c[0] + j, c0), store4(c[1] + j, c1), store4(c[2] + j, c2), store4(c[3] + j, c3);
  }
  for (; j < N; ++j) {  // leftovers
    float sums[4];
    for (int i = 0; i < 4; ++i) {
      float sum = 0.0f;
      for (int k = 0; k < K; ++k) sum += a[i][k * a_step] * b[k * ldb + j];
      sums[i] = accumulate ? c[i][j] + sum : sum;
    }
    for (int i = 0; i < 4; ++i) c[i][j] = sums[i];
  }
}

// The blocked double product's tile: c_i[j..j+8) = sum over blocks of (float sum over the block's k
// of a_i[k] b[k, j..j+8)), i over four rows of a. Float tiles as in four_rows, widened into double
// sums (in memory: sixteen two-lane sums would not fit in registers beside the tile) after every block.
void four_rows_blocked_double(const float* const a[4], const float* b, std::ptrdiff_t ldb, int K, double* const c[4]) {
  f64x2 sums[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kFloatBlock) {
    const int k1 = k0 + kFloatBlock < K ? k0 + kFloatBlock : K;
    f32x4 c00 = zero4(), c01 = zero4(), c10 = zero4(), c11 = zero4();
    f32x4 c20 = zero4(), c21 = zero4(), c30 = zero4(), c31 = zero4();
    for (int k = k0; k < k1; ++k) {
      const float* row = b + k * ldb;
      const f32x4 b0 = load4(row), b1 = load4(row + 4);
      f32x4 x = splat4(a[0][k]);
      c00 = add4(c00, mul4(x, b0)), c01 = add4(c01, mul4(x, b1));
      x = splat4(a[1][k]);
      c10 = add4(c10, mul4(x, b0)), c11 = add4(c11, mul4(x, b1));
      x = splat4(a[2][k]);
      c20 = add4(c20, mul4(x, b0)), c21 = add4(c21, mul4(x, b1));
      x = splat4(a[3][k]);
      c30 = add4(c30, mul4(x, b0)), c31 = add4(c31, mul4(x, b1));
    }
    const f32x4 t[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
    for (int i = 0; i < 4; ++i)
      for (int v = 0; v < 2; ++v) {
        sums[i][2 * v] += low2d(t[i][v]);
        sums[i][2 * v + 1] += high2d(t[i][v]);
      }
  }
  for (int i = 0; i < 4; ++i)
    for (int v = 0; v < 4; ++v) store2d(c[i] + 2 * v, sums[i][v]);
}

// The same for four columns (N = 100 is twelve tiles of eight and one of four).
void four_rows_blocked_double4(const float* const a[4], const float* b, std::ptrdiff_t ldb, int K, double* const c[4]) {
  f64x2 sums[4][2] = {};
  for (int k0 = 0; k0 < K; k0 += kFloatBlock) {
    const int k1 = k0 + kFloatBlock < K ? k0 + kFloatBlock : K;
    f32x4 c0 = zero4(), c1 = zero4(), c2 = zero4(), c3 = zero4();
    for (int k = k0; k < k1; ++k) {
      const f32x4 r = load4(b + k * ldb);
      c0 = add4(c0, mul4(splat4(a[0][k]), r));
      c1 = add4(c1, mul4(splat4(a[1][k]), r));
      c2 = add4(c2, mul4(splat4(a[2][k]), r));
      c3 = add4(c3, mul4(splat4(a[3][k]), r));
    }
    const f32x4 t[4] = {c0, c1, c2, c3};
    for (int i = 0; i < 4; ++i) sums[i][0] += low2d(t[i]), sums[i][1] += high2d(t[i]);
  }
  for (int i = 0; i < 4; ++i) store2d(c[i], sums[i][0]), store2d(c[i] + 2, sums[i][1]);
}

// One column of the same sums, for the columns left over after the tiles.
double blocked_double_dot(const float* a, const float* b, std::ptrdiff_t ldb, int K) {
  double sum = 0.0;
  for (int k0 = 0; k0 < K; k0 += kFloatBlock) {
    float block = 0.0f;
    for (int k = k0; k < k0 + kFloatBlock && k < K; ++k) block += a[k] * b[k * ldb];
    sum += double(block);
  }
  return sum;
}

}  // namespace

void gemm_ab_blocked_double(ConstMatrixRef a, ConstMatrixRef b, double* c, std::ptrdiff_t ldc) {
  assert(a.cols() == b.rows());
  const int M = int(a.rows()), K = int(a.cols()), N = int(b.cols());
  const std::ptrdiff_t ldb = b.outerStride();
  for (int i = 0; i < M; i += 4) {
    // rows past the end repeat the last row (the same values, stored twice), as in tiled_product
    const float* ar[4];
    double* cr[4];
    for (int r = 0; r < 4; ++r) {
      const int row = i + r < M ? i + r : M - 1;
      ar[r] = a.data() + row * a.outerStride();
      cr[r] = c + row * ldc;
    }
    int j = 0;
    for (; j + 8 <= N; j += 8) {
      double* cj[4] = {cr[0] + j, cr[1] + j, cr[2] + j, cr[3] + j};
      four_rows_blocked_double(ar, b.data() + j, ldb, K, cj);
    }
    for (; j + 4 <= N; j += 4) {
      double* cj[4] = {cr[0] + j, cr[1] + j, cr[2] + j, cr[3] + j};
      four_rows_blocked_double4(ar, b.data() + j, ldb, K, cj);
    }
    for (; j < N; ++j)  // leftovers
      for (int r = 0; r < 4; ++r) cr[r][j] = blocked_double_dot(ar[r], b.data() + j, ldb, K);
  }
}

void tiled_product(const float* a, std::ptrdiff_t a_row, std::ptrdiff_t a_step, const float* b, std::ptrdiff_t ldb,
                   int rows, int K, int N, float* c, std::ptrdiff_t ldc, bool accumulate) {
  for (int i = 0; i < rows; i += 4) {
    const float* ar[4];
    float* cr[4];
    for (int r = 0; r < 4; ++r) {
      const int row = i + r < rows ? i + r : rows - 1;
      ar[r] = a + row * a_row;
      cr[r] = c + row * ldc;
    }
    four_rows(ar, a_step, b, ldb, K, N, cr, accumulate);
  }
}

void gemm_abt(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c) {
  assert(a.cols() == b.cols() && c.rows() == a.rows() && c.cols() == b.rows());
  const int M = int(a.rows()), K = int(a.cols()), N = int(b.rows());
  if (M == 0 || N == 0) return;
  // B^T [K, N], so that the tile loads eight consecutive columns of it. B is a weight (N, K ~ 32).
  thread_local std::vector<float> bt;
  bt.resize(std::size_t(K) * N);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) bt[std::size_t(k) * N + n] = b(n, k);
  tiled_product(a.data(), a.outerStride(), 1, bt.data(), N, M, K, N, c.data(), c.outerStride(), false);
}

void gemm_ab(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c) {
  assert(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols());
  const int M = int(a.rows()), K = int(a.cols()), N = int(b.cols());
  if (M == 0 || N == 0) return;
  tiled_product(a.data(), a.outerStride(), 1, b.data(), b.outerStride(), M, K, N, c.data(), c.outerStride(), false);
}

void gemm_atb_add(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c) {
  assert(a.rows() == b.rows() && c.rows() == a.cols() && c.cols() == b.cols());
  const int M = int(a.rows()), N = int(a.cols()), K = int(b.cols());
  if (N == 0 || K == 0) return;
  // Row n of A^T is column n of A: element (n, m) at a[n + m * lda].
  tiled_product(a.data(), 1, a.outerStride(), b.data(), b.outerStride(), N, M, K, c.data(), c.outerStride(), true);
}

}  // namespace attnlab
