#include "linear.h"

#include "../gemm.h"
#include "init.h"

namespace attnlab {

Linear::Linear(int in_features, int out_features, Rng& rng, bool with_bias)
    : weight("weight", out_features, in_features), bias("bias", 1, out_features), has_bias(with_bias) {
  const float bound = linear_init_bound(in_features);
  init_uniform(weight.value, bound, rng);
  if (has_bias) init_uniform(bias.value, bound, rng);
}

void Linear::forward(ConstMatrixRef x, MatrixRef y) const {
  gemm_abt(x, weight.value, y);
  if (has_bias) y.rowwise() += bias.value.row(0);
}

void Linear::backward(ConstMatrixRef x, ConstMatrixRef dy, RowMatrix* dx) {
  gemm_atb_add(dy, x, weight.grad);
  if (has_bias) bias.grad.row(0) += dy.colwise().sum();
  if (dx) {
    dx->resize(dy.rows(), weight.value.cols());
    gemm_ab(dy, weight.value, *dx);
  }
}

ParameterList Linear::parameters() {
  if (has_bias) return {&weight, &bias};
  return {&weight};
}

}  // namespace attnlab
