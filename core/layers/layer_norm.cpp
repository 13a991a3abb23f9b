#include "layer_norm.h"

#include <cmath>

namespace attnlab {

namespace {

// Row i of x -> its mean and 1 / sqrt(var + eps), both in double: a row of 768 floats with a large
// common offset loses digits in float.
void row_statistics(ConstMatrixRef x, Eigen::Index i, double eps, double& mean, double& r) {
  const Eigen::Index E = x.cols();
  mean = 0.0;
  for (Eigen::Index j = 0; j < E; ++j) mean += x(i, j);
  mean /= double(E);
  double var = 0.0;
  for (Eigen::Index j = 0; j < E; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
  var /= double(E);
  r = 1.0 / std::sqrt(var + eps);
}

}  // namespace

void layer_norm_forward(ConstMatrixRef x, const float* gamma, const float* beta, double eps, MatrixRef y) {
  const Eigen::Index E = x.cols();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double mean, r;
    row_statistics(x, i, eps, mean, r);
    for (Eigen::Index j = 0; j < E; ++j) y(i, j) = float((x(i, j) - mean) * r) * gamma[j] + beta[j];
  }
}

LayerNorm::LayerNorm(int features, const std::string& prefix, double eps)
    : w(prefix + ".w", 1, features), b(prefix + ".b", 1, features), eps_(eps) {
  w.value.setOnes();
}

void LayerNorm::forward(ConstMatrixRef x, MatrixRef y) {
  const Eigen::Index N = x.rows(), E = x.cols();
  x_hat_.resize(N, E);
  r_.resize(std::size_t(N));
  for (Eigen::Index i = 0; i < N; ++i) {
    double mean, r;
    row_statistics(x, i, eps_, mean, r);
    r_[std::size_t(i)] = float(r);
    for (Eigen::Index j = 0; j < E; ++j) x_hat_(i, j) = float((x(i, j) - mean) * r);
  }
  y = (x_hat_.array().rowwise() * w.value.row(0).array()).rowwise() + b.value.row(0).array();
}

void LayerNorm::backward(ConstMatrixRef dy, MatrixRef dx) {
  const Eigen::Index N = dy.rows(), E = dy.cols();
  // from y = x_hat * w + b
  w.grad.row(0) += (dy.array() * x_hat_.array()).matrix().colwise().sum();
  b.grad.row(0) += dy.colwise().sum();
  // from x_hat = (x - mean) r, through the mean and the variance
  for (Eigen::Index i = 0; i < N; ++i) {
    double mean_g = 0.0, mean_g_xhat = 0.0;
    for (Eigen::Index j = 0; j < E; ++j) {
      const double g = double(dy(i, j)) * w.value(0, j);
      mean_g += g;
      mean_g_xhat += g * x_hat_(i, j);
    }
    mean_g /= double(E);
    mean_g_xhat /= double(E);
    const double r = r_[std::size_t(i)];
    for (Eigen::Index j = 0; j < E; ++j)
      dx(i, j) = float(r * (double(dy(i, j)) * w.value(0, j) - mean_g - x_hat_(i, j) * mean_g_xhat));
  }
}

}  // namespace attnlab
