// nn.Linear: y [N, out] = x [N, in] W^T + b, with W [out, in] and b [out].
// TransformerLens stores its weights the other way round (W_in [d_model, d_mlp], W_U [d_model, d_vocab]):
// y = x W + b with W [in, out]. The layout says which; the products are the same gemms (gemm.h).
#pragma once

#include "../rng.h"
#include "parameter.h"
#include "weight_layout.h"

namespace attnlab {

class Linear {
 public:
  Linear(int in_features, int out_features, Rng& rng, bool bias = true, WeightLayout layout = WeightLayout::out_in);

  int in_features() const { return int(layout == WeightLayout::out_in ? weight.value.cols() : weight.value.rows()); }
  int out_features() const { return int(layout == WeightLayout::out_in ? weight.value.rows() : weight.value.cols()); }

  void forward(ConstMatrixRef x, MatrixRef y) const;
  // dW += dy^T x, db += sum_rows dy, dx = dy W (dx may be skipped with an empty Ref-able matrix).
  void backward(ConstMatrixRef x, ConstMatrixRef dy, RowMatrix* dx);

  ParameterList parameters();

  Parameter weight;
  Parameter bias;
  bool has_bias;
  WeightLayout layout;
};

}  // namespace attnlab
