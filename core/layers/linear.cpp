#include "linear.h"

#include "init.h"

namespace attnlab {

Linear::Linear(int in_features, int out_features, Rng& rng, bool with_bias)
    : weight("weight", out_features, in_features), bias("bias", 1, out_features), has_bias(with_bias) {
  const float bound = linear_init_bound(in_features);
  init_uniform(weight.value, bound, rng);
  if (has_bias) init_uniform(bias.value, bound, rng);
}

void Linear::forward(ConstMatrixRef x, MatrixRef y) const {
  y.noalias() = x * weight.value.transpose();
  if (has_bias) y.rowwise() += bias.value.row(0);
}

void Linear::backward(ConstMatrixRef x, ConstMatrixRef dy, RowMatrix* dx) {
  weight.grad.noalias() += dy.transpose() * x;
  if (has_bias) bias.grad.row(0) += dy.colwise().sum();
  if (dx) dx->noalias() = dy * weight.value;
}

ParameterList Linear::parameters() {
  if (has_bias) return {&weight, &bias};
  return {&weight};
}

}  // namespace attnlab
