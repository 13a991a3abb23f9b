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
}

}  // namespace attnlab
