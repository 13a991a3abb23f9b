#include "raw_staged.h"

#include <vector>

#include "raw_api.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

val floats(const float* p, std::size_t n) { return val(emscripten::typed_memory_view(n, p)); }

// Elements the mask must have for its strides: the last problem's [T, S] block ends there.
std::size_t mask_elements(const AttentionForward& call) {
  const AttentionShape& s = call.shape;
  return std::size_t(s.B - 1) * call.mask.stride_b + std::size_t(s.H - 1) * call.mask.stride_h + std::size_t(s.T) * s.S;
}

// Keys or values [B, H, S, D] for JS: a view of the heap when contiguous, else (a cache with room to
// grow: `stride` floats from one problem to the next; key/value heads shared by a group of query heads)
// a packed copy, each query head given its group's rows.
val kv_floats(const float* p, const AttentionForward& call) {
  const AttentionShape& s = call.shape;
  const std::size_t block = std::size_t(s.S) * s.D;
  const bool grouped = call.kv_heads > 0 && call.kv_heads != s.H;
  if (!grouped && (call.kv_stride == 0 || call.kv_stride == block)) return floats(p, s.kv_size());
  val out = val::global("Float32Array").new_(double(s.kv_size()));
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h)
      out.call<void>("set", floats(p + call.kv_offset(b, h), block), double((std::size_t(b) * s.H + h) * block));
  return out;
}

// What a forward and a backward call both carry: the shape, the scale and the forward's q, k, v.
val call_record(const AttentionShape& s, float scale, const float* q, const val& k, const val& v) {
  val out = val::object();
  out.set("B", s.B), out.set("H", s.H), out.set("T", s.T), out.set("S", s.S), out.set("D", s.D);
  out.set("scale", scale);
  out.set("q", floats(q, s.q_size()));
  out.set("k", k);
  out.set("v", v);
  return out;
}

}  // namespace

val next_call_record(StagedForward* model) {
  AttentionForward call;
  if (!model || !model->next_call(call)) return val::null();
  val out = call_record(call.shape, call.scale, call.q, kv_floats(call.k, call), kv_floats(call.v, call));
  out.set("mask", call.mask.data ? floats(call.mask.data, mask_elements(call)) : val::null());
  out.set("maskStrideB", double(call.mask.stride_b));
  out.set("maskStrideH", double(call.mask.stride_h));
  out.set("readWeights", model->needs_weights());
  return out;
}

std::string finish_call_checked(StagedForward* model, const val& weights, const val& out) {
  if (!model) return "no model is loaded";
  std::string error = model->check_pending();
  if (!error.empty()) return error;
  AttentionForward call;
  model->next_call(call);  // the pending call again (not computed twice): its shape sizes the results
  const AttentionShape& s = call.shape;
  std::vector<float> w, o;
  val holder = val::object();
  holder.set("weights", weights);
  holder.set("out", out);
  // Weights the model does not read may be left out (a GPU kernel keeps them for the backward).
  const bool given = !(weights.isNull() || weights.isUndefined()) || model->needs_weights();
  if (given)
    error = read_float_field(holder, "weights", std::size_t(s.B) * s.H * s.T * s.S,
                             shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"S", s.S}}), w);
  if (error.empty())
    error = read_float_field(holder, "out", std::size_t(s.B) * s.H * s.T * s.D, shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"D", s.D}}), o);
  if (error.empty() && given) error = check_unit_interval("weights", w.data(), w.size());
  if (!error.empty()) return error;
  model->finish_call(given ? w.data() : nullptr, o.data());
  return {};
}

val next_backward_record(StagedForward* model) {
  AttentionBackward call;
  if (!model || !model->next_backward(call)) return val::null();
  const AttentionShape& s = call.shape;
  val out = call_record(s, call.scale, call.q, floats(call.k, s.kv_size()), floats(call.v, s.kv_size()));
  out.set("weights", call.weights ? floats(call.weights, s.weights_size()) : val::null());
  out.set("dOut", floats(call.d_out, s.q_size()));
  out.set("dWeights", call.d_weights ? floats(call.d_weights, s.weights_size()) : val::null());
  return out;
}

std::string finish_backward_checked(StagedForward* model, const val& d_q, const val& d_k, const val& d_v) {
  if (!model) return "no model is loaded";
  AttentionBackward call;
  if (!model->next_backward(call)) return "no backward call is pending";
  const AttentionShape& s = call.shape;
  const std::string q_shape = shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"D", s.D}});
  const std::string kv_shape = shape_text({{"B", s.B}, {"H", s.H}, {"S", s.S}, {"D", s.D}});
  val holder = val::object();
  holder.set("dQ", d_q);
  holder.set("dK", d_k);
  holder.set("dV", d_v);
  std::vector<float> q, k, v;
  std::string error = first_error({read_float_field(holder, "dQ", s.q_size(), q_shape, q), read_float_field(holder, "dK", s.kv_size(), kv_shape, k),
                                   read_float_field(holder, "dV", s.kv_size(), kv_shape, v)});
  if (!error.empty()) return error;
  model->finish_backward(q.data(), k.data(), v.data());
  return {};
}

}  // namespace attnlab::wasm
