// Rotary position embeddings (Su et al. 2021, RoFormer), as Hugging Face's Llama applies them
// (apply_rotary_pos_emb with rotate_half): in each head of D dimensions, dimension i < D/2 is paired
// with i + D/2 and the pair turned by the angle p * theta^(-2i/D) at position p:
//   inv_freq[i] = 1 / theta^(2i / D)          i in [0, D/2)    (float32, as HF computes it)
//   angle       = p * inv_freq[i]             (float32)
//   x'[i]       = x[i] cos(angle) - x[i + D/2] sin(angle)
//   x'[i + D/2] = x[i + D/2] cos(angle) + x[i] sin(angle)
// Queries and keys are turned before the dot product, so q_p . k_s depends on p - s only. Applied to a
// key as it enters the key/value cache; values are not turned.
#pragma once

#include <vector>

namespace attnlab {

class Rotary {
 public:
  Rotary() = default;
  Rotary(int head_dim, double theta);
  int head_dim() const { return D_; }
  // One head's vector x [D] at position p, turned in place.
  void apply(float* x, int position) const;

 private:
  int D_ = 0;
  std::vector<float> inv_freq_;  // [D/2]
};

}  // namespace attnlab
