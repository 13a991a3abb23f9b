#include "losses.h"

#include <algorithm>
#include <cmath>

#include "vec4.h"

namespace attnlab {

double cross_entropy_sum(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits,
                         double token_count, float* row_losses) {
  using namespace vec4;
  const Eigen::Index N = logits.rows();
  const int C = int(logits.cols());
  const float n = float(token_count);
  if (d_logits) d_logits->resize(N, C);
  double total = 0.0;
  for (Eigen::Index i = 0; i < N; ++i) {
    // The vector exp (vec4.h), four classes at a time: this loop runs B*T times a step.
    const float* x = logits.row(i).data();
    const float row_max = logits.row(i).maxCoeff();
    f32x4 sum4 = zero4();
    int c = 0;
    for (; c + 4 <= C; c += 4) sum4 = add4(sum4, exp4_nonpositive(sub4(load4(x + c), splat4(row_max))));
    float sum = hsum(sum4);
    for (; c < C; ++c) sum += std::exp(x[c] - row_max);  // leftovers
    const float log_sum = std::log(sum) + row_max;
    total += double(log_sum - x[targets[i]]);
    if (row_losses) row_losses[i] = log_sum - x[targets[i]];
    if (d_logits) {
      // softmax = exp(x - log_sum): every exponent is <= 0 since log_sum >= row_max
      float* d = d_logits->row(i).data();
      for (c = 0; c + 4 <= C; c += 4)
        store4(d + c, div4(exp4_nonpositive(sub4(load4(x + c), splat4(log_sum))), splat4(n)));
      for (; c < C; ++c) d[c] = std::exp(x[c] - log_sum) / n;  // leftovers
      d[targets[i]] -= 1.0f / n;
    }
  }
  return total;
}

float cross_entropy(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits) {
  const double N = double(logits.rows());
  return float(cross_entropy_sum(logits, targets, d_logits, N) / N);
}

double binary_cross_entropy_sum(const float* p, const float* y, std::size_t n, float* d_p, double count) {
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const float pi = p[i], yi = y[i];
    const float log_p = std::max(std::log(pi), -100.0f);
    const float log_1mp = std::max(std::log(1.0f - pi), -100.0f);
    total -= double(yi * log_p + (1.0f - yi) * log_1mp);
    if (d_p) d_p[i] = (pi - yi) / std::max((1.0f - pi) * pi, 1e-12f) / float(count);
  }
  return total;
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
