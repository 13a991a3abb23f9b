// The stages of scaled dot-product attention that the kernel fuses, for a lab that shows each one
// (course notebooks 03 and 04: softmax(Q K^T / sqrt(d_k)) V, step by step):
//
//   scores  = q k^T            [T, S]
//   scaled  = scale * scores   [T, S]
//   masked  = scaled + mask    [T, S]   (mask additive: 0 allows, -inf blocks)
//
// The softmax and the weighted sum of the values stay the kernel's (attention.h): a lab runs it on the
// page's backend, so the weights a student reads are the ones every other lab trains with. These
// stages are computed the way the kernel computes its scores (one float32 dot product per cell, then
// one multiply by the scale), so softmax(masked) is what the kernel's softmax sees.
#pragma once

#include <vector>

#include "tensor.h"

namespace attnlab {

struct ScoreStages {
  RowMatrix scores;
  RowMatrix scaled;
  RowMatrix masked;
};

// q [T, D], k [S, D]; mask [T, S] additive, or nullptr for none.
ScoreStages score_stages(ConstMatrixRef q, ConstMatrixRef k, float scale, const float* mask);

// Shannon entropy (nats) of each row of a [T, S] matrix of weights: log(S) for a uniform row, 0 for a
// one-hot one. 0 * log 0 counts as 0 (masked keys).
std::vector<double> row_entropies(const float* weights, int rows, int cols);

}  // namespace attnlab
