#include "losses.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

float cross_entropy(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits) {
  const Eigen::Index N = logits.rows(), C = logits.cols();
  if (d_logits) d_logits->resize(N, C);
  double total = 0.0;
  for (Eigen::Index i = 0; i < N; ++i) {
    const float row_max = logits.row(i).maxCoeff();
    float sum = 0.0f;
    for (Eigen::Index c = 0; c < C; ++c) sum += std::exp(logits(i, c) - row_max);
    const float log_sum = std::log(sum) + row_max;
    total += double(log_sum - logits(i, targets[i]));
    if (d_logits) {
      for (Eigen::Index c = 0; c < C; ++c)
        (*d_logits)(i, c) = std::exp(logits(i, c) - log_sum) / float(N);
      (*d_logits)(i, targets[i]) -= 1.0f / float(N);
    }
  }
  return float(total / double(N));
}

float binary_cross_entropy(ConstMatrixRef p, ConstMatrixRef y, RowMatrix* d_p) {
  const Eigen::Index n = p.size();
  if (d_p) d_p->resize(p.rows(), p.cols());
  double total = 0.0;
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
      const float pi = p(i, j), yi = y(i, j);
      const float log_p = std::max(std::log(pi), -100.0f);
      const float log_1mp = std::max(std::log(1.0f - pi), -100.0f);
      total -= double(yi * log_p + (1.0f - yi) * log_1mp);
      if (d_p) (*d_p)(i, j) = (pi - yi) / std::max((1.0f - pi) * pi, 1e-12f) / float(n);
    }
  return float(total / double(n));
}

float mse(ConstMatrixRef pred, ConstMatrixRef target, RowMatrix* d_pred) {
  const RowMatrix diff = pred - target;
  if (d_pred) *d_pred = diff * (2.0f / float(diff.size()));
  return float(double(diff.squaredNorm()) / double(diff.size()));
}

}  // namespace attnlab
