// nn.Linear: y [N, out] = x [N, in] W^T + b, with W [out, in] and b [out].
#pragma once

#include "../rng.h"
#include "parameter.h"

namespace attnlab {

class Linear {
 public:
  Linear(int in_features, int out_features, Rng& rng, bool bias = true);

  int in_features() const { return int(weight.value.cols()); }
  int out_features() const { return int(weight.value.rows()); }

  void forward(ConstMatrixRef x, MatrixRef y) const;
  // dW += dy^T x, db += sum_rows dy, dx = dy W (dx may be skipped with an empty Ref-able matrix).
  void backward(ConstMatrixRef x, ConstMatrixRef dy, RowMatrix* dx);

  ParameterList parameters();

  Parameter weight;
  Parameter bias;
  bool has_bias;
};

}  // namespace attnlab
