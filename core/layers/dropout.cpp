#include "dropout.h"

namespace attnlab {

void dropout_forward(const float* x, float* y, std::size_t n, float p, Rng& rng) {
  const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    // One draw per element whatever p is, so a seed gives the same pattern for every p (raising p
    // only drops more of the same elements).
    const bool keep = rng.uniform() >= p;
    y[i] = keep ? x[i] * keep_scale : 0.0f;
  }
}

}  // namespace attnlab
