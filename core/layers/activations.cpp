#include "activations.h"

#include <cmath>

namespace attnlab {

void sigmoid_forward(ConstMatrixRef x, MatrixRef y) {
  // Two branches so that exp never overflows: for x < 0 use exp(x) / (1 + exp(x)).
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      if (v >= 0.0f) {
        y(i, j) = 1.0f / (1.0f + std::exp(-v));
      } else {
        const float e = std::exp(v);
        y(i, j) = e / (1.0f + e);
      }
    }
}

void gelu_forward(ConstMatrixRef x, MatrixRef y) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      y(i, j) = 0.5f * v * (1.0f + std::erf(v * kInvSqrt2));
    }
}

void gelu_tanh_forward(ConstMatrixRef x, MatrixRef y) {
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      y(i, j) = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
    }
}

}  // namespace attnlab
