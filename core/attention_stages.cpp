#include "attention_stages.h"

#include <cmath>

namespace attnlab {

ScoreStages score_stages(ConstMatrixRef q, ConstMatrixRef k, float scale, const float* mask) {
  const Eigen::Index T = q.rows(), S = k.rows();
  ScoreStages st;
  st.scores.resize(T, S);
  // A plain loop, in the kernel's order (d = 0, 1, ...): Eigen's product may sum in another order
  // and differ from the kernel in the last bit.
  for (Eigen::Index t = 0; t < T; ++t)
    for (Eigen::Index s = 0; s < S; ++s) {
      float dot = 0.0f;
      for (Eigen::Index d = 0; d < q.cols(); ++d) dot += q(t, d) * k(s, d);
      st.scores(t, s) = dot;
    }
  st.scaled = st.scores * scale;
  st.masked = st.scaled;
  if (mask)
    for (Eigen::Index t = 0; t < T; ++t)
      for (Eigen::Index s = 0; s < S; ++s) st.masked(t, s) += mask[t * S + s];
  return st;
}

std::vector<double> row_entropies(const float* weights, int rows, int cols) {
  std::vector<double> h(std::size_t(rows), 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double w = weights[std::size_t(r) * cols + c];
      if (w > 0.0) h[std::size_t(r)] -= w * std::log(w);
    }
  return h;
}

}  // namespace attnlab
