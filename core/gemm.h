// The three matrix products of a layer's forward and backward passes, on row-major matrices whose rows
// may be strided (blocks of a larger matrix):
//   forward           C  = A B^T    x [M, K] times W [N, K] transposed
//   input gradient    C  = A B      dy [M, N] times W [N, K]
//   weight gradient   C += A^T B    dy [M, N] transposed times x [M, K]
// On the vec4 register tiles of the attention kernel (four rows by eight columns, vectorised along the
// output's rows): Eigen 3.4 has no WASM SIMD, and for these thin shapes (K and N around 32, M in the
// thousands) its packing costs more than the products. Each output element is summed over k in
// ascending order from zero, so results do not depend on the tiling.
#pragma once

#include <cstddef>

#include "tensor.h"

namespace attnlab {

void gemm_abt(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c);
void gemm_ab(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c);
void gemm_atb_add(ConstMatrixRef a, ConstMatrixRef b, MatrixRef c);

// C [M, N] = A B in double, for sums whose size float would round too coarsely (the Lookup lab's
// D x, lookup_model.cpp): each element is summed in float over blocks of 16 consecutive k (ascending,
// from zero) and the block sums are added in double (ascending), so a product's float rounding is that
// of a 16-term sum, at float's SIMD width. A [M, K] and B [K, N] float; C's element (i, j) at
// c[i * ldc + j]. The bits of an element depend on its row of A and column of B only, not the tiling.
constexpr int kFloatBlock = 16;
void gemm_ab_blocked_double(ConstMatrixRef a, ConstMatrixRef b, double* c, std::ptrdiff_t ldc);

// The tiled product under all three, on raw pointers (the attention kernel calls it on its per-head
// blocks): C [rows, N] (+)= A B, with A's element (i, k) at a[i * a_row + k * a_step], B's element
// (k, j) at b[k * ldb + j] and C's (i, j) at c[i * ldc + j].
void tiled_product(const float* a, std::ptrdiff_t a_row, std::ptrdiff_t a_step, const float* b, std::ptrdiff_t ldb,
                   int rows, int K, int N, float* c, std::ptrdiff_t ldc, bool accumulate);

}  // namespace attnlab
