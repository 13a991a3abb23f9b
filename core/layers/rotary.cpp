#include "rotary.h"

#include <cmath>

namespace attnlab {

Rotary::Rotary(int head_dim, double theta, const RopeScaling& scaling) : D_(head_dim) {
  // HF: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), in float32.
  for (int i = 0; i < D_ / 2; ++i) inv_freq_.push_back(1.0f / std::pow(float(theta), float(2 * i) / float(D_)));
  const float factor = float(scaling.factor);
  if (scaling.type == RopeScaling::Type::linear) {
    for (float& f : inv_freq_) f /= factor;
  } else if (scaling.type == RopeScaling::Type::llama3) {
    // _compute_llama3_parameters, line by line (float32 tensors against Python floats).
    const float old_len = float(scaling.original_max_positions), low = float(scaling.low_freq_factor),
                high = float(scaling.high_freq_factor);
    const float low_freq_wavelen = float(scaling.original_max_positions / scaling.low_freq_factor);
    const float high_freq_wavelen = float(scaling.original_max_positions / scaling.high_freq_factor);
    for (float& f : inv_freq_) {
      const float wavelen = float(2 * 3.14159265358979323846) / f;  // 2 * math.pi / inv_freq
      const float scaled = wavelen > low_freq_wavelen ? f / factor : f;  // inv_freq_llama
      const float smooth = (old_len / wavelen - low) / (high - low);
      const float smoothed = (1 - smooth) * scaled / factor + smooth * scaled;
      const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
      f = medium ? smoothed : scaled;
    }
  }
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
