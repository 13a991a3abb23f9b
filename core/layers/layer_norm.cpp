#include "layer_norm.h"

#include <cmath>

namespace attnlab {

void layer_norm_forward(ConstMatrixRef x, const float* gamma, const float* beta, double eps, MatrixRef y) {
  const Eigen::Index E = x.cols();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    // Mean and variance in double: a row of 768 floats with a large common offset loses digits in float.
    double mean = 0.0;
    for (Eigen::Index j = 0; j < E; ++j) mean += x(i, j);
    mean /= double(E);
    double var = 0.0;
    for (Eigen::Index j = 0; j < E; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= double(E);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (Eigen::Index j = 0; j < E; ++j) y(i, j) = float((x(i, j) - mean) * inv) * gamma[j] + beta[j];
  }
}

}  // namespace attnlab
