// nn.LayerNorm over the last dimension: y = (x - mean) / sqrt(var + eps) * w + b, row by row, with the
// biased variance (divided by E, as PyTorch does). TransformerLens's LayerNorm is the same function, its
// weight and bias named w and b.
//
//   forward    x_hat = (x - mean) * r,  r = 1 / sqrt(var + eps);   y = x_hat * w + b
//   backward   g = dy * w;   dx = r (g - mean(g) - x_hat mean(g x_hat));   dw += sum_rows dy x_hat;
//              db += sum_rows dy
// (the mean and the variance both depend on every element of the row: the two means in dx are their
// gradients).
#pragma once

#include <string>
#include <vector>

#include "../tensor.h"
#include "parameter.h"

namespace attnlab {

// x, y [N, E] (y may be x); gamma, beta [E]. Forward only (the pretrained labs).
void layer_norm_forward(ConstMatrixRef x, const float* gamma, const float* beta, double eps, MatrixRef y);

// A trainable LayerNorm over E features: w = 1, b = 0 at the start, as nn.LayerNorm and TransformerLens.
class LayerNorm {
 public:
  // prefix names the parameters: "blocks.0.ln1" -> "blocks.0.ln1.w", "blocks.0.ln1.b".
  LayerNorm(int features, const std::string& prefix, double eps = 1e-5);

  // x, y [N, E]; keeps x_hat and r for the backward.
  void forward(ConstMatrixRef x, MatrixRef y);
  // dy [N, E] of the last forward -> dx [N, E] (overwritten), and adds to w.grad and b.grad.
  void backward(ConstMatrixRef dy, MatrixRef dx);

  // The last forward's 1 / sqrt(var + eps) per row [N] (TransformerLens's hook_scale is its inverse).
  const std::vector<float>& inverse_scale() const { return r_; }
  ParameterList parameters() { return {&w, &b}; }

  Parameter w, b;

 private:
  double eps_;
  RowMatrix x_hat_;
  std::vector<float> r_;
};

}  // namespace attnlab
