#include "staged_forward.h"

#include <vector>

namespace attnlab {

void run_staged(Backend backend, StagedForward& model) {
  AttentionForward call;
  std::vector<float> weights, out;
  while (model.next_call(call)) {
    const AttentionShape& s = call.shape;
    weights.assign(std::size_t(s.B) * s.H * s.T * s.S, 0.0f);
    out.assign(std::size_t(s.B) * s.H * s.T * s.D, 0.0f);
    call.weights = weights.data();
    call.out = out.data();
    attention_forward(backend, call);
    model.finish_call(weights.data(), out.data());
  }
  AttentionBackward back;
  std::vector<float> recomputed, d_q, d_k, d_v;
  while (model.next_backward(back)) {
    const AttentionShape& s = back.shape;
    if (!back.weights) {  // not kept: the forward's weights again, from its q, k, v
      AttentionForward f;
      f.shape = s;
      f.scale = back.scale;
      f.q = back.q, f.k = back.k, f.v = back.v;
      recomputed.assign(s.weights_size(), 0.0f);
      out.assign(s.q_size(), 0.0f);
      f.weights = recomputed.data();
      f.out = out.data();
      attention_forward(backend, f);
      back.weights = recomputed.data();
    }
    d_q.assign(s.q_size(), 0.0f);
    d_k.assign(s.kv_size(), 0.0f);
    d_v.assign(s.kv_size(), 0.0f);
    back.d_q = d_q.data(), back.d_k = d_k.data(), back.d_v = d_v.data();
    attention_backward(backend, back);
    model.finish_backward(d_q.data(), d_k.data(), d_v.data());
  }
}

}  // namespace attnlab
