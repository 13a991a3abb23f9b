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

}  // namespace

val next_call_record(StagedForward* model) {
  AttentionForward call;
  if (!model || !model->next_call(call)) return val::null();
  const AttentionShape& s = call.shape;
  val out = val::object();
  out.set("B", s.B), out.set("H", s.H), out.set("T", s.T), out.set("S", s.S), out.set("D", s.D);
  out.set("scale", call.scale);
  out.set("q", floats(call.q, s.q_size()));
  out.set("k", floats(call.k, std::size_t(s.B) * s.H * s.S * s.D));
  out.set("v", floats(call.v, std::size_t(s.B) * s.H * s.S * s.D));
  out.set("mask", call.mask.data ? floats(call.mask.data, mask_elements(call)) : val::null());
  out.set("maskStrideB", double(call.mask.stride_b));
  out.set("maskStrideH", double(call.mask.stride_h));
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
  error = read_float_field(holder, "weights", std::size_t(s.B) * s.H * s.T * s.S,
                           shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"S", s.S}}), w);
  if (error.empty())
    error = read_float_field(holder, "out", std::size_t(s.B) * s.H * s.T * s.D, shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"D", s.D}}), o);
  if (error.empty()) error = check_unit_interval("weights", w.data(), w.size());
  if (!error.empty()) return error;
  model->finish_call(w.data(), o.data());
  return {};
}

}  // namespace attnlab::wasm
