// The Count model's loops over its rows (count_model.h), on four lanes (count_model_simd128.cpp).
//
// The head, nn = Linear(1, H) -> ReLU -> Linear(H, 1), for a batch of scalars a, forward beside
// backward (H = kHidden = 200 there):
//   h_bj = relu(a_b w1_j + b1_j)       nn.0 and ReLU        w1, b1 [H]
//   z_b  = sum_j w2_j h_bj + b2        nn.2                 w2 [H]
// A step runs this for 100 rows of one number each, so the work is the rows times H, and the loops
// run with the hidden units in the vector lanes and the rows inside, which
// keeps the parameters' gradients in registers across the rows.
//
// Every sum is taken in the order of the plain per-row loops that these replace: a row's sum over j
// in four lanes (j mod 4, j ascending) and then their sum, then the leftovers; a gradient's sum over
// the rows in row order. So the results do not depend on how the loops are arranged.
#pragma once

#include <cstdint>
#include <vector>

namespace attnlab {

struct CountHead {
  const float* w1;  // nn.0.weight [H, 1]
  const float* b1;  // nn.0.bias [H]
  const float* w2;  // nn.2.weight [1, H]
  float b2;         // nn.2.bias
  int H;
};

// z [count] = nn(a [count]). `lanes` is scratch (4 floats a row).
void count_head_forward(const CountHead& nn, const float* a, int count, float* z, std::vector<float>& lanes);

// Given dz [count] = dL/dz: adds dL/dw1, dL/db1, dL/dw2 [H] (summed over the rows in row order) and
// writes da [count] = dL/da. nn.2's bias gradient, the sum of dz, is the caller's.
void count_head_backward(const CountHead& nn, const float* a, const float* dz, int count, float* dw1, float* db1,
                         float* dw2, float* da, std::vector<float>& lanes);

// The gathered rows' gradients back to the table they came from: for every position i in order,
// table [index[i], :width] += rows [i, :width] (row i at rows + i * stride). Each table element sums
// its positions in position order.
void scatter_add_rows(const std::int32_t* index, int positions, const float* rows, int stride, int width,
                      float* table);

}  // namespace attnlab
