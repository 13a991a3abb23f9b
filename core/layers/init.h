// PyTorch's default initialisations, drawn from our seeded Rng.
#pragma once

#include <cmath>

#include "../rng.h"
#include "parameter.h"

namespace attnlab {

// torch.nn.init.uniform_(-bound, bound)
inline void init_uniform(RowMatrix& m, float bound, Rng& rng) {
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform(-bound, bound);
}

// torch.nn.init.normal_(0, 1): nn.Embedding's default
inline void init_normal(RowMatrix& m, Rng& rng) {
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
}

// kaiming_uniform_(a=sqrt(5)) as nn.Linear uses it: gain sqrt(2/(1+5)), bound = gain*sqrt(3/fan_in)
// = 1/sqrt(fan_in). The bias uses the same bound.
inline float linear_init_bound(int fan_in) { return 1.0f / std::sqrt(float(fan_in)); }

// xavier_uniform_: bound = sqrt(6 / (fan_in + fan_out)), as MultiheadAttention's in_proj_weight.
inline float xavier_bound(int fan_in, int fan_out) { return std::sqrt(6.0f / float(fan_in + fan_out)); }

}  // namespace attnlab
