// nn.Dropout in training mode: each element is kept with probability 1 - p and then divided by 1 - p,
// or set to 0, so every element keeps its expected value. In evaluation mode dropout is the identity
// (the caller simply does not call it). p = 1 drops everything, as PyTorch does.
#pragma once

#include <cstddef>

#include "../rng.h"

namespace attnlab {

// y[i] = keep ? x[i] / (1 - p) : 0, keep drawn from rng (one uniform per element, in order). x and y
// may be the same array. p must be in [0, 1].
void dropout_forward(const float* x, float* y, std::size_t n, float p, Rng& rng);

}  // namespace attnlab
