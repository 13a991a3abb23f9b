#include "raw_kernel_stages.h"

namespace attnlab::wasm {

using emscripten::val;

val kernel_shape_of(MultiheadAttention& mha, bool read_weights) {
  const AttentionForward a = mha.kernel_forward_args();
  val out = val::object();
  out.set("B", a.shape.B);
  out.set("H", a.shape.H);
  out.set("T", a.shape.T);
  out.set("S", a.shape.S);
  out.set("D", a.shape.D);
  out.set("scale", a.scale);
  out.set("readWeights", read_weights);
  return out;
}

val kernel_view_of(MultiheadAttention& mha, const std::string& which) {
  const AttentionForward f = mha.kernel_forward_args();
  const AttentionShape& s = f.shape;
  auto view = [](std::size_t n, const float* p) {
    return val(emscripten::typed_memory_view(n, const_cast<float*>(p)));
  };
  if (which == "q") return view(s.q_size(), f.q);
  if (which == "k") return view(s.kv_size(), f.k);
  if (which == "v") return view(s.kv_size(), f.v);
  if (which == "weights") return view(s.weights_size(), f.weights);
  if (which == "out") return view(s.q_size(), f.out);
  const AttentionBackward b = mha.kernel_backward_args();
  if (which == "dOut") return view(s.q_size(), b.d_out);
  if (which == "dWeights") return b.d_weights ? view(s.weights_size(), b.d_weights) : val::undefined();
  if (which == "dQ") return view(s.q_size(), b.d_q);
  if (which == "dK") return view(s.kv_size(), b.d_k);
  if (which == "dV") return view(s.kv_size(), b.d_v);
  return val::undefined();
}

}  // namespace attnlab::wasm
