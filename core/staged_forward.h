// One protocol for every model whose forward pass runs in stages around the attention kernel, so that
// the kernel can run outside C++ (the page's WebGPU kernel, in JS) as well as on a CPU backend here.
// A pass is begun by the model's own call (BertModel::begin_forward, MarianModel::begin_encode, ...),
// then, whoever runs the kernel:
//
//   AttentionForward call;                       its shape, scale, q, k, v and mask: the inputs
//   while (model.next_call(call)) {              (valid until finish_call; weights and out are null)
//     the kernel on call -> weights [B, H, T, S], out [B, H, T, D]
//     model.finish_call(weights, out);
//   }
//
// A training pass (a trainer's step, core/trainers/staged_step.h) then leaves its backward calls, the
// same way, after the forward ones:
//
//   AttentionBackward back;                      d_out [, d_weights] and the forward's q, k, v, scale
//   while (model.next_backward(back)) {          (weights: the forward's, or null when finish_call
//     the kernel's backward -> d_q, d_k, d_v      was not given them: recompute them from q, k, v)
//     model.finish_backward(d_q, d_k, d_v);
//   }
//
// run_staged() is that loop with a CPU kernel; the models' own forward() is begin + run_staged. The
// bindings expose the same calls once for every model (wasm_bindings/raw_staged.h), and one JS
// driver runs them on the page's kernel (wasm_bindings/js/staged_calls.js).
#pragma once

#include <string>

#include "attention.h"
#include "backend.h"

namespace attnlab {

class StagedForward {
 public:
  virtual ~StagedForward() = default;
  // The pass's next attention call (its inputs in `call`, weights and out left null), or false when no
  // pass is under way or the last call has been finished. Calling it again before finish_call gives the
  // same call.
  virtual bool next_call(AttentionForward& call) = 0;
  // The pending call's results: weights [B, H, T, S] and out [B, H, T, D] (the sizes of next_call's
  // shape; the caller checks them). The model takes the pass on to its next call.
  virtual void finish_call(const float* weights, const float* out) = 0;
  // "" when a call is pending (next_call has given it), else what to do first.
  virtual std::string check_pending() const = 0;
  // False when the model never reads the attention weights after a forward call: finish_call may then
  // be given none (a GPU kernel keeps them for the backward and reads back only the output).
  virtual bool needs_weights() const { return true; }

  // ---- backward calls (training passes; a forward-only model has none)
  virtual bool next_backward(AttentionBackward& call) {
    (void)call;
    return false;
  }
  // The pending backward call's results: d_q [B, H, T, D], d_k and d_v [B, H, S, D].
  virtual void finish_backward(const float* d_q, const float* d_k, const float* d_v) {
    (void)d_q, (void)d_k, (void)d_v;
  }
};

// Runs every remaining call of the pass, forward then backward, on a CPU backend (scalar or simd128).
void run_staged(Backend backend, StagedForward& model);

}  // namespace attnlab
