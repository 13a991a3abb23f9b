#include "rotary.h"

#include <cmath>

namespace attnlab {

Rotary::Rotary(int head_dim, double theta) : D_(head_dim) {
  // HF: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), in float32.
  for (int i = 0; i < D_ / 2; ++i) inv_freq_.push_back(1.0f / std::pow(float(theta), float(2 * i) / float(D_)));
}

void Rotary::apply(float* x, int position) const {
  const int half = D_ / 2;
  for (int i = 0; i < half; ++i) {
    const float angle = float(position) * inv_freq_[std::size_t(i)];  // HF's t.float() outer inv_freq
    const float c = std::cos(angle), s = std::sin(angle);
    const float a = x[i], b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
}

}  // namespace attnlab
