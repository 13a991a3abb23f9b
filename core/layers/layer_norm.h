// nn.LayerNorm over the last dimension: y = (x - mean) / sqrt(var + eps) * gamma + beta, row by row,
// with the biased variance (divided by E, as PyTorch does). Forward only (the pretrained labs).
#pragma once

#include "../tensor.h"

namespace attnlab {

// x, y [N, E] (y may be x); gamma, beta [E].
void layer_norm_forward(ConstMatrixRef x, const float* gamma, const float* beta, double eps, MatrixRef y);

}  // namespace attnlab
