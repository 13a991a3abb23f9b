// Rotary position embeddings (Su et al. 2021, RoFormer), as Hugging Face's Llama applies them
// (apply_rotary_pos_emb with rotate_half): in each head of D dimensions, dimension i < D/2 is paired
// with i + D/2 and the pair turned by the angle p * theta^(-2i/D) at position p:
//   inv_freq[i] = 1 / theta^(2i / D)          i in [0, D/2)    (float32, as HF computes it)
//   angle       = p * inv_freq[i]             (float32)
//   x'[i]       = x[i] cos(angle) - x[i + D/2] sin(angle)
//   x'[i + D/2] = x[i + D/2] cos(angle) + x[i] sin(angle)
// Queries and keys are turned before the dot product, so q_p . k_s depends on p - s only. Applied to a
// key as it enters the key/value cache; values are not turned.
//
// A config's rope_scaling changes inv_freq once (HF's modeling_rope_utils.py, in float32 as there):
//   linear  inv_freq / factor (_compute_linear_scaling_rope_parameters)
//   llama3  Llama 3.1's: wavelengths 2 pi / inv_freq longer than original_max_position_embeddings /
//           low_freq_factor divided by factor, shorter than ... / high_freq_factor kept, those between
//           blended (_compute_llama3_parameters)
#pragma once

#include <vector>

namespace attnlab {

struct RopeScaling {
  enum class Type { none, linear, llama3 };
  Type type = Type::none;
  double factor = 1.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3 only
  double original_max_positions = 8192;                  // llama3 only
};

class Rotary {
 public:
  Rotary() = default;
  Rotary(int head_dim, double theta, const RopeScaling& scaling = {});
  int head_dim() const { return D_; }
  const std::vector<float>& inv_freq() const { return inv_freq_; }  // [D/2], after rope_scaling
  // One head's vector x [D] at position p, turned in place.
  void apply(float* x, int position) const;

 private:
  int D_ = 0;
  std::vector<float> inv_freq_;  // [D/2]
};

}  // namespace attnlab
