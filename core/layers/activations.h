// Elementwise activations, forward beside backward.
#pragma once

#include "../tensor.h"

namespace attnlab {

// relu(x) = max(x, 0);  d/dx = 1 where x > 0 (PyTorch takes 0 at x == 0).
inline void relu_forward(ConstMatrixRef x, MatrixRef y) { y = x.cwiseMax(0.0f); }
inline void relu_backward(ConstMatrixRef x, ConstMatrixRef dy, MatrixRef dx) {
  dx = (x.array() > 0.0f).select(dy, 0.0f);
}

// sigmoid(x) = 1 / (1 + exp(-x));  d/dx = y (1 - y), written with the forward's output y.
void sigmoid_forward(ConstMatrixRef x, MatrixRef y);
inline void sigmoid_backward(ConstMatrixRef y, ConstMatrixRef dy, MatrixRef dx) {
  dx = dy.array() * y.array() * (1.0f - y.array());
}

// gelu(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)): BERT's "gelu", PyTorch's F.gelu default (not the
// tanh approximation), TransformerLens's act_fn "gelu".
//   d/dx = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
void gelu_forward(ConstMatrixRef x, MatrixRef y);
// x: the forward's input; dx may be dy.
void gelu_backward(ConstMatrixRef x, ConstMatrixRef dy, MatrixRef dx);

// gelu_new(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): GPT-2's activation (HF's
// NewGELUActivation, F.gelu(approximate="tanh")), the tanh approximation of the one above. Forward only.
void gelu_tanh_forward(ConstMatrixRef x, MatrixRef y);

// silu(x) = x sigmoid(x) = x / (1 + exp(-x)) (HF's ACT2FN["silu"]; Marian's "swish", marian_config.cpp).
// y may be x. Forward only.
void silu_forward(ConstMatrixRef x, MatrixRef y);

// The gated SiLU of Llama's MLP (Shazeer 2020, "SwiGLU"): gate = silu(gate) * up, elementwise, with the
// silu above. gate, up [N, F]; gate is overwritten. Forward only.
void silu_gate_forward(MatrixRef gate, ConstMatrixRef up);

}  // namespace attnlab
