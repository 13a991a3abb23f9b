#include "linear.h"

#include "../gemm.h"
#include "init.h"

namespace attnlab {

Linear::Linear(int in_features, int out_features, Rng& rng, bool with_bias, WeightLayout weight_layout)
    : weight("weight", weight_layout == WeightLayout::out_in ? out_features : in_features,
             weight_layout == WeightLayout::out_in ? in_features : out_features),
      bias("bias", 1, out_features),
      has_bias(with_bias),
      layout(weight_layout) {
  const float bound = linear_init_bound(in_features);
  init_uniform(weight.value, bound, rng);
  if (has_bias) init_uniform(bias.value, bound, rng);
}

void Linear::forward(ConstMatrixRef x, MatrixRef y) const {
  if (layout == WeightLayout::out_in) gemm_abt(x, weight.value, y);
  else gemm_ab(x, weight.value, y);
  if (has_bias) y.rowwise() += bias.value.row(0);
}

void Linear::backward(ConstMatrixRef x, ConstMatrixRef dy, RowMatrix* dx) {
  // out_in: dW [out, in] += dy^T x, dx = dy W;  in_out: dW [in, out] += x^T dy, dx = dy W^T
  if (layout == WeightLayout::out_in) gemm_atb_add(dy, x, weight.grad);
  else gemm_atb_add(x, dy, weight.grad);
  if (has_bias) bias.grad.row(0) += dy.colwise().sum();
  if (dx) {
    dx->resize(dy.rows(), in_features());
    if (layout == WeightLayout::out_in) gemm_ab(dy, weight.value, *dx);
    else gemm_abt(dy, weight.value, *dx);
  }
}

ParameterList Linear::parameters() {
  if (has_bias) return {&weight, &bias};
  return {&weight};
}

}  // namespace attnlab
