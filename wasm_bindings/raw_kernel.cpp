#include "raw_kernel.h"

#include <cmath>
#include <limits>
#include <vector>

#include "attention.h"
#include "raw_api.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

struct KernelBuffers {
  std::vector<float> q, k, v, mask, weights, out, d_out, d_weights, d_q, d_k, d_v;
};
KernelBuffers& buffers() {
  static KernelBuffers b;
  return b;
}

std::string read_shape(const val& args, AttentionShape& s) {
  const char* names[] = {"B", "H", "T", "S", "D"};
  int* fields[] = {&s.B, &s.H, &s.T, &s.S, &s.D};
  for (int i = 0; i < 5; ++i) {
    std::string error = check_int_field(args, names[i], 1 << 16, *fields[i]);
    if (!error.empty()) return error;
  }
  if (double(s.B) * s.H * s.T * s.S > 256.0 * 1024 * 1024)
    return "B * H * T * S is too large: at most 268435456 attention weights";
  return {};
}

std::string q_shape(const AttentionShape& s) {
  return shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"D", s.D}});
}

// q [B,H,T,D], k and v [B,H,S,D] into the kernel buffers.
std::string read_qkv(const val& args, const AttentionShape& s, KernelBuffers& b) {
  const std::string kvs = shape_text({{"B", s.B}, {"H", s.H}, {"S", s.S}, {"D", s.D}});
  return first_error({read_float_field(args, "q", s.q_size(), q_shape(s), b.q),
                      read_float_field(args, "k", s.kv_size(), kvs, b.k),
                      read_float_field(args, "v", s.kv_size(), kvs, b.v)});
}

float read_scale(const val& args, const AttentionShape& s) {
  const val v = args["scale"];
  if (v.typeOf().as<std::string>() == "number" && std::isfinite(v.as<double>())) return v.as<float>();
  return 1.0f / std::sqrt(float(s.D));
}

Backend read_backend(const val& args) {
  const val v = args["backend"];
  if (v.typeOf().as<std::string>() == "string" && v.as<std::string>() == "scalar") return Backend::scalar;
  return Backend::simd128;
}

}  // namespace

std::string _attention_forward(const val& args) {
  AttentionShape s;
  std::string error = read_shape(args, s);
  if (!error.empty()) return error;
  auto& b = buffers();
  error = read_qkv(args, s, b);
  if (!error.empty()) return error;
  AttentionForward a;
  a.shape = s;
  a.scale = read_scale(args, s);
  const val mask = args["mask"];
  if (!mask.isUndefined() && !mask.isNull()) {
    error = check_array("mask", mask);
    if (!error.empty()) return error;
    b.mask = to_floats(mask);
    const std::size_t sb = args["maskStrideB"].isUndefined() ? 0 : args["maskStrideB"].as<std::size_t>();
    const std::size_t sh = args["maskStrideH"].isUndefined() ? 0 : args["maskStrideH"].as<std::size_t>();
    const std::size_t needed = (s.B - 1) * sb + (s.H - 1) * sh + std::size_t(s.T) * s.S;
    if (b.mask.size() < needed)
      return "mask must have at least " + std::to_string(needed) + " elements for its strides, got " +
             std::to_string(b.mask.size());
    error = check_additive_mask("mask", b.mask);
    if (!error.empty()) return error;
    a.mask = {b.mask.data(), sb, sh};
  }
  b.weights.resize(s.weights_size());
  b.out.resize(s.q_size());
  a.q = b.q.data();
  a.k = b.k.data();
  a.v = b.v.data();
  a.weights = b.weights.data();
  a.out = b.out.data();
  attention_forward(read_backend(args), a);
  return {};
}

std::string _attention_backward(const val& args) {
  AttentionShape s;
  std::string error = read_shape(args, s);
  if (!error.empty()) return error;
  auto& b = buffers();
  const std::string ws = shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"S", s.S}});
  error = first_error({read_qkv(args, s, b), read_float_field(args, "weights", s.weights_size(), ws, b.weights),
                       read_float_field(args, "dOut", s.q_size(), q_shape(s), b.d_out)});
  if (!error.empty()) return error;
  const bool has_dw = !args["dWeights"].isUndefined() && !args["dWeights"].isNull();
  if (has_dw) {
    error = read_float_field(args, "dWeights", s.weights_size(), ws, b.d_weights);
    if (!error.empty()) return error;
  }
  b.d_q.resize(s.q_size());
  b.d_k.resize(s.kv_size());
  b.d_v.resize(s.kv_size());
  AttentionBackward a;
  a.shape = s;
  a.scale = read_scale(args, s);
  a.q = b.q.data();
  a.k = b.k.data();
  a.v = b.v.data();
  a.weights = b.weights.data();
  a.d_out = b.d_out.data();
  a.d_weights = has_dw ? b.d_weights.data() : nullptr;
  a.d_q = b.d_q.data();
  a.d_k = b.d_k.data();
  a.d_v = b.d_v.data();
  attention_backward(read_backend(args), a);
  return {};
}

val _kernel_weights() { return view_of(buffers().weights); }
val _kernel_out() { return view_of(buffers().out); }
val _kernel_d_q() { return view_of(buffers().d_q); }
val _kernel_d_k() { return view_of(buffers().d_k); }
val _kernel_d_v() { return view_of(buffers().d_v); }

}  // namespace attnlab::wasm
