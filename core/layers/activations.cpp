#include "activations.h"

#include <cmath>

#include "../vec4.h"

namespace attnlab {

namespace {

// One expression for silu_forward and silu_gate_forward, so the two give the same bits.
float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

void sigmoid_forward(ConstMatrixRef x, MatrixRef y) {
  // Two branches so that exp never overflows: for x < 0 use exp(x) / (1 + exp(x)).
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      if (v >= 0.0f) {
        y(i, j) = 1.0f / (1.0f + std::exp(-v));
      } else {
        const float e = std::exp(v);
        y(i, j) = e / (1.0f + e);
      }
    }
}

void gelu_forward(ConstMatrixRef x, MatrixRef y) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      y(i, j) = 0.5f * v * (1.0f + std::erf(v * kInvSqrt2));
    }
}

void gelu_backward(ConstMatrixRef x, ConstMatrixRef dy, MatrixRef dx) {
  constexpr float kInvSqrt2 = 0.70710678118654752f, kInvSqrt2Pi = 0.39894228040143268f;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float v = x(i, j);
      const float cdf = 0.5f * (1.0f + std::erf(v * kInvSqrt2));
      const float pdf = kInvSqrt2Pi * std::exp(-0.5f * v * v);
      dx(i, j) = dy(i, j) * (cdf + v * pdf);
    }
}

// gelu_new as x * sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): the same function, since
// 1 + tanh(u) = 2 / (1 + exp(-2u)), but with no 1 + tanh cancellation for large negative u, and with
// the exp of a non-positive argument only (vec4's, four at a time; GPT-2 calls this on 3,072 floats per
// token per layer, where a scalar tanh per float cost about 3% of a written token):
//   u >= 0:  x / (1 + e),     u < 0:  x e / (1 + e),     e = exp(-2|u|) in (0, 1].
void gelu_tanh_forward(ConstMatrixRef x, MatrixRef y) {
  using namespace vec4;
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  const Eigen::Index cols = x.cols(), cols4 = cols - cols % 4;
  const f32x4 c = splat4(kSqrt2OverPi), cubic = splat4(0.044715f), one = splat4(1.0f), minus_two = splat4(-2.0f), zero = zero4();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const float* in = x.data() + i * x.outerStride();
    float* out = y.data() + i * y.outerStride();
    for (Eigen::Index j = 0; j < cols4; j += 4) {
      const f32x4 v = load4(in + j);
      const f32x4 u = mul4(c, add4(v, mul4(cubic, mul4(v, mul4(v, v)))));
      const f32x4 abs_u = max4(u, sub4(zero, u));
      const f32x4 e = exp4_nonpositive(mul4(minus_two, abs_u));
      const f32x4 inv = div4(one, add4(one, e));
      const f32x4 sigmoid = add4(keep_ge4(inv, u, zero), keep_gt4(mul4(e, inv), zero, u));
      store4(out + j, mul4(v, sigmoid));
    }
    for (Eigen::Index j = cols4; j < cols; ++j) {  // leftovers
      const float v = in[j], u = kSqrt2OverPi * (v + 0.044715f * v * v * v);
      const float e = std::exp(-2.0f * std::fabs(u)), inv = 1.0f / (1.0f + e);
      out[j] = v * (u >= 0.0f ? inv : e * inv);
    }
  }
}

void silu_forward(ConstMatrixRef x, MatrixRef y) {
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) y(i, j) = silu(x(i, j));
}

void silu_gate_forward(MatrixRef gate, ConstMatrixRef up) {
  for (Eigen::Index i = 0; i < gate.rows(); ++i)
    for (Eigen::Index j = 0; j < gate.cols(); ++j) gate(i, j) = silu(gate(i, j)) * up(i, j);
}

}  // namespace attnlab
