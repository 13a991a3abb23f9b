// RMSNorm over the last dimension (Zhang & Sennrich 2019; Hugging Face's LlamaRMSNorm):
//   y = x / sqrt(mean(x^2) + eps) * gamma        no mean subtracted, no bias
// row by row. Forward only (the decoders read checkpoints; nothing trains them).
#pragma once

#include "../tensor.h"

namespace attnlab {

// x, y [N, E] (y may be x); gamma [E].
void rms_norm_forward(ConstMatrixRef x, const float* gamma, double eps, MatrixRef y);

}  // namespace attnlab
