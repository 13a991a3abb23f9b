#include "induction_scores.h"

namespace attnlab {

HeadScores head_scores(const std::vector<const std::vector<float>*>& patterns, int heads, const InductionBatch& batch) {
  const int L = int(patterns.size()), H = heads, B = batch.B, T = batch.T;
  HeadScores out;
  out.layers = L;
  out.heads = H;
  const std::size_t n = std::size_t(L) * H;
  out.previous.assign(n, 0.0f);
  out.duplicate.assign(n, 0.0f);
  out.induction.assign(n, 0.0f);
  out.first.assign(n, 0.0f);
  int with_segment = 0;
  for (int b = 0; b < B; ++b) with_segment += batch.copy_start[std::size_t(b)] >= 0;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      double previous = 0.0, first = 0.0, duplicate = 0.0, induction = 0.0;
      for (int b = 0; b < B; ++b) {
        const float* a = &(*patterns[std::size_t(l)])[(std::size_t(b) * H + h) * T * T];
        double p = 0.0, f = 0.0;
        for (int t = 1; t < T; ++t) {
          p += a[std::size_t(t) * T + t - 1];
          f += a[std::size_t(t) * T];
        }
        previous += p / (T - 1);
        first += f / (T - 1);
        const int c = batch.copy_start[std::size_t(b)], k = batch.segment[std::size_t(b)];
        if (c < 0) continue;
        double d = 0.0, i = 0.0;
        for (int t = c; t < c + k; ++t) {
          d += a[std::size_t(t) * T + t - k];
          i += a[std::size_t(t) * T + t - k + 1];
        }
        duplicate += d / k;
        induction += i / k;
      }
      const std::size_t at = std::size_t(l) * H + h;
      out.previous[at] = float(previous / B);
      out.first[at] = float(first / B);
      out.duplicate[at] = with_segment ? float(duplicate / with_segment) : 0.0f;
      out.induction[at] = with_segment ? float(induction / with_segment) : 0.0f;
    }
  return out;
}

int best_head(const std::vector<float>& scores, int heads, int min_layer) {
  int best = -1;
  for (int i = min_layer * heads; i < int(scores.size()); ++i)
    if (best < 0 || scores[std::size_t(i)] > scores[std::size_t(best)]) best = i;
  return best;
}

}  // namespace attnlab
