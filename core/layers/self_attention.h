// The course's SelfAttention (notebook 03): Linear projections Q, K, V of the input (input_dim ->
// input_dim, with bias), energy = Q K^T / sqrt(input_dim), an optional mask, softmax over the keys,
// dropout on the weights, output = weights V. Forward only: the lab looks at it, nothing trains it.
//
// Three stages, so that the middle one (the attention kernel) can run on any backend, WebGPU included:
//   project(x)                          Q, K, V   [N*L, E]
//   kernel(Q, K, V, scale(), mask)      weights   [N, L, L]     (attention.h, or WebGPU in JS)
//   finish(weights, ...)                dropout on the weights (train mode), output = weights V
// forward() runs the three on a CPU backend; begin() and the staged-forward calls (staged_forward.h)
// run the middle one wherever the caller's kernel is.
//
// Masks are additive [N, L, L] (0 allows, -inf blocks). A row with every key blocked gets zero weights
// and a zero output where PyTorch gives NaN (attention.h; docs/attention.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "../rng.h"
#include "../staged_forward.h"
#include "linear.h"
#include "parameter.h"

namespace attnlab {

class SelfAttention : public StagedForward {
 public:
  SelfAttention(int input_dim, float dropout, Rng& rng);

  int input_dim() const { return query.in_features(); }
  // 1 / sqrt(input_dim): the notebook divides by sqrt(input_dim) (d_k = input_dim here).
  float scale() const;

  // x [N*L, E] -> queries(), keys(), values().
  void project(ConstMatrixRef x);
  // weights [N, L, L] from the kernel -> weights() (after dropout when train) and output() [N*L, E].
  void finish(const float* weights, int batch, int length, bool train, Rng& rng);
  // project, the kernel on `backend` (scalar or SIMD128), finish. mask: [N, L, L] additive or nullptr.
  void forward(Backend backend, ConstMatrixRef x, int batch, int length, const float* mask, bool train, Rng& rng);

  // The same forward staged around the kernel (staged_forward.h), for a kernel outside C++: begin()
  // projects x [N*L, E] and leaves one call, [B=N, H=1, T=L, S=L, D=E] with the mask [N, L, L] (or none);
  // its weights finish the layer (dropout in train mode, drawn from a generator seeded with `seed`).
  void begin(ConstMatrixRef x, int batch, int length, const float* mask, bool train, std::uint64_t seed);
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* out) override;
  std::string check_pending() const override;

  const RowMatrix& queries() const { return q_; }
  const RowMatrix& keys() const { return k_; }
  const RowMatrix& values() const { return v_; }
  const RowMatrix& weights() const { return weights_; }  // [N*L, L]
  const RowMatrix& output() const { return out_; }

  // query.weight, query.bias, key.weight, key.bias, value.weight, value.bias (PyTorch's names).
  ParameterList parameters();

  Linear query, key, value;
  float dropout;

 private:
  RowMatrix q_, k_, v_, weights_, out_;
  // The staged pass: its shape, mask, mode and dropout seed, and whether its call is still pending.
  int batch_ = 0, length_ = 0;
  std::vector<float> mask_;
  bool train_ = false, pending_ = false;
  std::uint64_t seed_ = 0;
};

}  // namespace attnlab
