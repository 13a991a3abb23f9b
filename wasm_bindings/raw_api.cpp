#include "raw_api.h"

#include <cstdlib>

#include <malloc.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "attention.h"
#include "backend.h"
#include "layers/activations.h"
#include "losses.h"
#include "shard_runner.h"
#include "validate.h"
#include "version.h"

namespace attnlab::wasm {

namespace {

// Sizes beyond these would take more memory than a browser tab should: refuse them clearly.
constexpr long kMaxLength = 4096;
constexpr long kMaxDim = 4096;
constexpr double kMaxElements = 64.0 * 1024 * 1024;

std::string type_name(const val& v) {
  if (v.isUndefined()) return "undefined";
  if (v.isNull()) return "null";
  const std::string t = v.typeOf().as<std::string>();
  if (t != "object") return t;
  return v["constructor"]["name"].as<std::string>();
}

std::string check_finite_vector(const char* name, const std::vector<float>& v) {
  return check_finite(name, v.data(), v.size());
}


int int_field(const val& args, const char* name) {
  const val v = args[name];
  if (v.typeOf().as<std::string>() != "number") return std::numeric_limits<int>::min();
  const double d = v.as<double>();
  if (d != std::floor(d) || d < -1e9 || d > 1e9) return std::numeric_limits<int>::min();
  return int(d);
}


struct FreeResult {
  RowMatrix values, grad;
  double loss = 0.0;
};
FreeResult& free_result() {
  static FreeResult r;
  return r;
}

}  // namespace

// Additive masks may hold -Infinity (blocked), never NaN or +Infinity.
std::string check_additive_mask(const char* name, const std::vector<float>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isnan(v[i]) || v[i] == std::numeric_limits<float>::infinity())
      return std::string(name) + "[" + std::to_string(i) +
             "] must be a finite number or -Infinity (an additive mask), got " +
             (std::isnan(v[i]) ? "NaN" : "+Infinity");
  return {};
}

std::string read_float_field(const val& args, const char* name, std::size_t n, const std::string& shape,
                             std::vector<float>& out) {
  const val v = args[name];
  std::string error = check_array(name, v);
  if (!error.empty()) return error;
  out = to_floats(v);
  return first_error({check_length(name, out.size(), n, shape), check_finite(name, out.data(), out.size())});
}

std::string check_int_field(const val& args, const char* name, long max_value, int& out) {
  out = int_field(args, name);
  if (out == std::numeric_limits<int>::min()) {
    const val v = args[name];
    if (v.typeOf().as<std::string>() != "number")
      return std::string(name) + " must be an integer, got " + type_name(v);
    std::ostringstream text;
    text << name << " must be an integer, got " << v.as<double>();
    return text.str();
  }
  return first_error({check_positive(name, out), check_at_most(name, out, max_value)});
}

// ---- conversions ----

bool is_typed_array_or_array(const val& v) {
  if (v.isUndefined() || v.isNull()) return false;
  return val::global("Array").call<bool>("isArray", v) ||
         val::global("ArrayBuffer").call<bool>("isView", v);
}

std::string check_array(const char* name, const val& v) {
  if (is_typed_array_or_array(v)) return {};
  return std::string(name) + " must be a Float32Array (or an array of numbers), got " + type_name(v);
}

std::vector<float> to_floats(const val& array) {
  std::vector<float> out(array["length"].as<std::size_t>());
  val view(emscripten::typed_memory_view(out.size(), out.data()));
  view.call<void>("set", array);
  return out;
}

std::string to_int32s(const char* name, const val& array, std::vector<std::int32_t>& out) {
  // Through Float64 first so that 3.5, 1e10 or 2^32 + 5 are named, never truncated or wrapped.
  const std::size_t n = array["length"].as<std::size_t>();
  std::vector<double> wide(n);
  val view(emscripten::typed_memory_view(n, wide.data()));
  view.call<void>("set", array);
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string error = check_int32_element(name, i, wide[i]);
    if (!error.empty()) {
      out.clear();
      return error;
    }
    out[i] = std::int32_t(wide[i]);
  }
  return {};
}

val view_of(const std::vector<float>& v) { return val(emscripten::typed_memory_view(v.size(), v.data())); }
val view_of(const RowMatrix& m) { return val(emscripten::typed_memory_view(std::size_t(m.size()), m.data())); }

// ---- RawLayer ----

Parameter* RawLayer::find(const std::string& name) {
  for (Parameter* p : params())
    if (p->name == name) return p;
  return nullptr;
}

std::vector<std::string> RawLayer::_parameter_names() {
  std::vector<std::string> names;
  for (Parameter* p : params()) names.push_back(p->name);
  return names;
}

val RawLayer::_parameter(const std::string& name) {
  Parameter* p = find(name);
  return p ? view_of(p->value) : val::undefined();
}

val RawLayer::_gradient(const std::string& name) {
  Parameter* p = find(name);
  return p ? view_of(p->grad) : val::undefined();
}

val RawLayer::_parameter_shape(const std::string& name) {
  Parameter* p = find(name);
  if (!p) return val::undefined();
  val shape = val::array();
  for (int d : torch_shape_of(*p)) shape.call<void>("push", d);
  return shape;
}

std::string RawLayer::_set_parameter(const std::string& name, const val& values) {
  Parameter* p = find(name);
  if (!p) {
    std::string known;
    for (Parameter* q : params()) known += (known.empty() ? "" : ", ") + q->name;
    return "unknown parameter '" + name + "': this layer has " + known;
  }
  std::string error = check_array(name.c_str(), values);
  if (!error.empty()) return error;
  const std::vector<float> v = to_floats(values);
  error = first_error({check_length(name.c_str(), v.size(), p->size(),
                                    shape_text({{"rows", long(p->value.rows())}, {"cols", long(p->value.cols())}})),
                       check_finite_vector(name.c_str(), v)});
  if (!error.empty()) return error;
  std::copy(v.begin(), v.end(), p->value.data());
  return {};
}

void RawLayer::_zero_grad() {
  for (Parameter* p : params()) p->zero_grad();
}

// ---- Embedding ----

RawEmbedding::RawEmbedding(int num_embeddings, int embedding_dim, std::uint32_t seed)
    : rng_(seed), layer_(num_embeddings, embedding_dim, rng_) {}

std::string RawEmbedding::_config_error(int num_embeddings, int embedding_dim) {
  return first_error({check_positive("num_embeddings", num_embeddings),
                      check_at_most("num_embeddings", num_embeddings, 1 << 20),
                      check_positive("embedding_dim", embedding_dim),
                      check_at_most("embedding_dim", embedding_dim, kMaxDim)});
}

std::string RawEmbedding::_forward(const val& ids) {
  std::string error = check_array("ids", ids);
  if (!error.empty()) return error;
  std::vector<std::int32_t> v;
  error = to_int32s("ids", ids, v);
  if (!error.empty()) return error;
  error = first_error({check_positive("ids.length", long(v.size())),
                       check_token_ids("ids", v.data(), v.size(), layer_.num_embeddings())});
  if (!error.empty()) return error;
  out_.resize(long(v.size()), layer_.embedding_dim());
  layer_.forward(v.data(), int(v.size()), out_);
  return {};
}

std::string RawEmbedding::_backward(const val& ids, const val& d_out) {
  std::string error = first_error({check_array("ids", ids), check_array("dOutput", d_out)});
  if (!error.empty()) return error;
  std::vector<std::int32_t> v;
  error = to_int32s("ids", ids, v);
  if (!error.empty()) return error;
  const std::vector<float> g = to_floats(d_out);
  const long E = layer_.embedding_dim();
  error = first_error({check_token_ids("ids", v.data(), v.size(), layer_.num_embeddings()),
                       check_length("dOutput", g.size(), v.size() * E,
                                    shape_text({{"N", long(v.size())}, {"E", E}})),
                       check_finite_vector("dOutput", g)});
  if (!error.empty()) return error;
  layer_.backward(v.data(), int(v.size()), ConstMatrixMap(g.data(), long(v.size()), E));
  return {};
}

// ---- Linear ----

RawLinear::RawLinear(int in_features, int out_features, std::uint32_t seed, bool bias)
    : rng_(seed), layer_(in_features, out_features, rng_, bias) {}

std::string RawLinear::_config_error(int in_features, int out_features) {
  return first_error({check_positive("in_features", in_features), check_at_most("in_features", in_features, kMaxDim),
                      check_positive("out_features", out_features),
                      check_at_most("out_features", out_features, kMaxDim)});
}

std::string RawLinear::_forward(const val& x, int rows) {
  std::string error = first_error({check_array("input", x), check_positive("rows", rows)});
  if (!error.empty()) return error;
  const std::vector<float> v = to_floats(x);
  const long in = layer_.in_features();
  error = first_error({check_length("input", v.size(), std::size_t(rows) * in,
                                    shape_text({{"N", rows}, {"in_features", in}})),
                       check_finite_vector("input", v)});
  if (!error.empty()) return error;
  x_ = ConstMatrixMap(v.data(), rows, in);
  y_.resize(rows, layer_.out_features());
  layer_.forward(x_, y_);
  return {};
}

std::string RawLinear::_backward(const val& d_y) {
  if (x_.size() == 0) return "Linear.backward needs a forward pass first";
  std::string error = check_array("dOutput", d_y);
  if (!error.empty()) return error;
  const std::vector<float> g = to_floats(d_y);
  const long rows = x_.rows(), out = layer_.out_features();
  error = first_error({check_length("dOutput", g.size(), std::size_t(rows) * out,
                                    shape_text({{"N", rows}, {"out_features", out}})),
                       check_finite_vector("dOutput", g)});
  if (!error.empty()) return error;
  layer_.backward(x_, ConstMatrixMap(g.data(), rows, out), &dx_);
  return {};
}

// ---- MultiheadAttention ----

RawMultiheadAttention::RawMultiheadAttention(int embed_dim, int num_heads, std::uint32_t seed)
    : rng_(seed), mha_(embed_dim, num_heads, rng_) {}

std::string RawMultiheadAttention::_config_error(int embed_dim, int num_heads) {
  return first_error({check_positive("embed_dim", embed_dim), check_at_most("embed_dim", embed_dim, kMaxDim),
                      check_positive("num_heads", num_heads),
                      check_divisible("embed_dim", embed_dim, "num_heads", num_heads)});
}

std::string RawMultiheadAttention::read_mask(const val& args, const char* name, std::size_t shared,
                                             std::size_t per_head, std::vector<float>& out,
                                             bool& per_head_out) {
  const val m = args[name];
  out.clear();
  per_head_out = false;
  if (m.isUndefined() || m.isNull()) return {};
  std::string error = check_array(name, m);
  if (!error.empty()) return error;
  out = to_floats(m);
  const std::string type = type_name(m);
  const bool boolean = type == "Uint8Array" || type == "Int8Array" ||
                       (type == "Array" && m["length"].as<int>() > 0 && m[0].typeOf().as<std::string>() == "boolean");
  if (out.size() != shared && out.size() != per_head) {
    const std::string expected = per_head && per_head != shared
                                     ? std::to_string(shared) + " or " + std::to_string(per_head)
                                     : std::to_string(shared);
    return std::string(name) + " must have " + expected + " elements, got " + std::to_string(out.size());
  }
  per_head_out = out.size() == per_head && per_head != shared;
  if (boolean) {  // true / nonzero = may not attend
    for (float& x : out) x = x != 0.0f ? -std::numeric_limits<float>::infinity() : 0.0f;
    return {};
  }
  return check_additive_mask(name, out);
}

std::string RawMultiheadAttention::_forward(const val& args) {
  if (args.isUndefined() || args.isNull() || args.typeOf().as<std::string>() != "object")
    return "forward takes one object {batch, queryLength, keyLength, query, key, value, ...}";
  int B = 0, T = 0, S = 0;
  std::string error = first_error({check_int_field(args, "batch", 1 << 16, B),
                                   check_int_field(args, "queryLength", kMaxLength, T),
                                   check_int_field(args, "keyLength", kMaxLength, S)});
  if (!error.empty()) return error;
  const long E = mha_.embed_dim(), H = mha_.num_heads();
  if (double(B) * H * T * S > kMaxElements)
    return "batch * num_heads * queryLength * keyLength = " + std::to_string(double(B) * H * T * S) +
           " is too large: at most 67108864 attention weights";
  error = first_error({check_array("query", args["query"]), check_array("key", args["key"]),
                       check_array("value", args["value"])});
  if (!error.empty()) return error;
  const std::vector<float> q = to_floats(args["query"]), k = to_floats(args["key"]), v = to_floats(args["value"]);
  error = first_error({
      check_length("query", q.size(), std::size_t(B) * T * E, shape_text({{"B", B}, {"T", T}, {"E", E}})),
      check_length("key", k.size(), std::size_t(B) * S * E, shape_text({{"B", B}, {"S", S}, {"E", E}})),
      check_length("value", v.size(), std::size_t(B) * S * E, shape_text({{"B", B}, {"S", S}, {"E", E}})),
      check_finite_vector("query", q), check_finite_vector("key", k), check_finite_vector("value", v)});
  if (!error.empty()) return error;
  std::vector<float> kpm, attn;
  bool kpm_per_head = false, attn_per_head = false;
  error = first_error({read_mask(args, "keyPaddingMask", std::size_t(B) * S, std::size_t(B) * S, kpm, kpm_per_head),
                       read_mask(args, "attnMask", std::size_t(T) * S, std::size_t(B) * H * T * S, attn, attn_per_head)});
  if (!error.empty()) return error;
  const int backend = int_field(args, "backend");
  MhaInputs in{B, T, S, q.data(), k.data(), v.data()};
  in.key_padding_mask = kpm.empty() ? nullptr : kpm.data();
  in.attn_mask = attn.empty() ? nullptr : attn.data();
  in.attn_mask_per_head = attn_per_head;
  mha_.forward(in, backend == int(Backend::scalar) ? Backend::scalar : Backend::simd128);
  has_forward_ = true;
  return {};
}

std::string RawMultiheadAttention::_backward(const val& d_output, const val& d_weights, int backend) {
  if (!has_forward_) return "MultiheadAttention.backward needs a forward pass first";
  const AttentionShape& s = mha_.shape();
  const long E = mha_.embed_dim();
  std::string error = check_array("dOutput", d_output);
  if (!error.empty()) return error;
  const std::vector<float> g = to_floats(d_output);
  error = first_error({check_length("dOutput", g.size(), std::size_t(s.B) * s.T * E,
                                    shape_text({{"B", s.B}, {"T", s.T}, {"E", E}})),
                       check_finite_vector("dOutput", g)});
  if (!error.empty()) return error;
  std::vector<float> gw;
  if (!d_weights.isUndefined() && !d_weights.isNull()) {
    error = check_array("dWeights", d_weights);
    if (!error.empty()) return error;
    gw = to_floats(d_weights);
    error = first_error({check_length("dWeights", gw.size(), s.weights_size(),
                                      shape_text({{"B", s.B}, {"H", s.H}, {"T", s.T}, {"S", s.S}})),
                         check_finite_vector("dWeights", gw)});
    if (!error.empty()) return error;
  }
  mha_.backward(g.data(), gw.empty() ? nullptr : gw.data(),
                backend == int(Backend::scalar) ? Backend::scalar : Backend::simd128);
  return {};
}

// ---- Adam ----

std::string RawAdam::_options_error(const val& options) {
  if (options.isUndefined() || options.isNull()) return {};
  const char* names[] = {"lr", "beta1", "beta2", "eps", "weightDecay"};
  for (const char* name : names) {
    const val v = options[name];
    if (v.isUndefined()) continue;
    if (v.typeOf().as<std::string>() != "number" || !std::isfinite(v.as<double>()))
      return std::string("Adam option ") + name + " must be a finite number, got " + type_name(v);
    const double d = v.as<double>();
    if (d < 0) return std::string("Adam option ") + name + " must be >= 0, got " + std::to_string(d);
    if ((std::string(name) == "beta1" || std::string(name) == "beta2") && d >= 1.0)
      return std::string("Adam option ") + name + " must be in [0, 1), got " + std::to_string(d);
  }
  return {};
}

RawAdam::RawAdam(const val& options) {
  if (options.isUndefined() || options.isNull()) return;
  auto read = [&](const char* name, double& field) {
    if (!options[name].isUndefined()) field = options[name].as<double>();
  };
  read("lr", options_.lr);
  read("beta1", options_.beta1);
  read("beta2", options_.beta2);
  read("eps", options_.eps);
  read("weightDecay", options_.weight_decay);
}

void RawAdam::_add(RawLayer& layer) {
  for (Parameter* p : layer.params()) params_.push_back(p);
  adam_.reset();  // parameters changed: start fresh moments
}

void RawAdam::_step() {
  if (!adam_) adam_ = std::make_unique<Adam>(params_, options_);
  adam_->step();
}

void RawAdam::_zero_grad() {
  for (Parameter* p : params_) p->zero_grad();
}

// ---- free functions ----

namespace {

std::string read_matrix_pair(const char* a_name, const val& a, const char* b_name, const val& b,
                             std::vector<float>& av, std::vector<float>& bv) {
  std::string error = first_error({check_array(a_name, a), check_array(b_name, b)});
  if (!error.empty()) return error;
  av = to_floats(a);
  bv = to_floats(b);
  return first_error({check_positive((std::string(a_name) + ".length").c_str(), long(av.size())),
                      check_length(b_name, bv.size(), av.size(), std::string("(same as ") + a_name + ")"),
                      check_finite_vector(a_name, av), check_finite_vector(b_name, bv)});
}

std::string read_one(const char* name, const val& a, std::vector<float>& v) {
  std::string error = check_array(name, a);
  if (!error.empty()) return error;
  v = to_floats(a);
  return first_error({check_positive((std::string(name) + ".length").c_str(), long(v.size())),
                      check_finite_vector(name, v)});
}

}  // namespace

std::string _relu(const val& x) {
  std::vector<float> v;
  std::string error = read_one("input", x, v);
  if (!error.empty()) return error;
  auto& r = free_result();
  r.values.resize(1, long(v.size()));
  relu_forward(ConstMatrixMap(v.data(), 1, long(v.size())), r.values);
  return {};
}

std::string _relu_backward(const val& x, const val& d_y) {
  std::vector<float> xv, gv;
  std::string error = read_matrix_pair("input", x, "dOutput", d_y, xv, gv);
  if (!error.empty()) return error;
  auto& r = free_result();
  r.grad.resize(1, long(xv.size()));
  relu_backward(ConstMatrixMap(xv.data(), 1, long(xv.size())), ConstMatrixMap(gv.data(), 1, long(gv.size())), r.grad);
  return {};
}

std::string _sigmoid(const val& x) {
  std::vector<float> v;
  std::string error = read_one("input", x, v);
  if (!error.empty()) return error;
  auto& r = free_result();
  r.values.resize(1, long(v.size()));
  sigmoid_forward(ConstMatrixMap(v.data(), 1, long(v.size())), r.values);
  return {};
}

std::string _sigmoid_backward(const val& y, const val& d_y) {
  std::vector<float> yv, gv;
  std::string error = read_matrix_pair("output", y, "dOutput", d_y, yv, gv);
  if (!error.empty()) return error;
  auto& r = free_result();
  r.grad.resize(1, long(yv.size()));
  sigmoid_backward(ConstMatrixMap(yv.data(), 1, long(yv.size())), ConstMatrixMap(gv.data(), 1, long(gv.size())), r.grad);
  return {};
}

std::string _cross_entropy(const val& logits, const val& targets, int classes) {
  std::string error = first_error({check_array("logits", logits), check_array("targets", targets),
                                   check_positive("classes", classes)});
  if (!error.empty()) return error;
  const std::vector<float> l = to_floats(logits);
  std::vector<std::int32_t> t;
  error = to_int32s("targets", targets, t);
  if (!error.empty()) return error;
  error = first_error({check_positive("targets.length", long(t.size())),
                       check_length("logits", l.size(), t.size() * std::size_t(classes),
                                    shape_text({{"N", long(t.size())}, {"C", classes}})),
                       check_finite_vector("logits", l),
                       check_token_ids("targets", t.data(), t.size(), classes)});
  if (!error.empty()) return error;
  auto& r = free_result();
  r.loss = cross_entropy(ConstMatrixMap(l.data(), long(t.size()), classes), t.data(), &r.grad);
  return {};
}

std::string _binary_cross_entropy(const val& p, const val& y) {
  std::vector<float> pv, yv;
  std::string error = read_matrix_pair("probabilities", p, "targets", y, pv, yv);
  if (!error.empty()) return error;
  error = first_error({check_unit_interval("probabilities", pv.data(), pv.size()),
                       check_unit_interval("targets", yv.data(), yv.size())});
  if (!error.empty()) return error;
  auto& r = free_result();
  r.loss = binary_cross_entropy(ConstMatrixMap(pv.data(), 1, long(pv.size())),
                                ConstMatrixMap(yv.data(), 1, long(yv.size())), &r.grad);
  return {};
}

std::string _mse(const val& pred, const val& target) {
  std::vector<float> pv, tv;
  std::string error = read_matrix_pair("prediction", pred, "target", target, pv, tv);
  if (!error.empty()) return error;
  auto& r = free_result();
  r.loss = mse(ConstMatrixMap(pv.data(), 1, long(pv.size())), ConstMatrixMap(tv.data(), 1, long(tv.size())), &r.grad);
  return {};
}

val _result() { return view_of(free_result().values); }
val _result_grad() { return view_of(free_result().grad); }
double _result_loss() { return free_result().loss; }

std::string _version() { return kVersion; }

val _backends() {
  val list = val::array();
  list.call<void>("push", std::string("scalar"));
  if (simd128_is_native_wasm_simd()) list.call<void>("push", std::string("simd128"));
  return list;
}


val _select_backend(const std::string& requested, const val& env, const val& shape) {
  BackendEnvironment e;
  e.simd128_available = env["simd128"].as<bool>();
  e.webgpu_available = env["webgpu"].as<bool>();
  if (!env["webgpuReason"].isUndefined()) e.webgpu_unavailable_reason = env["webgpuReason"].as<std::string>();
  AttentionShape s{shape["B"].as<int>(), shape["H"].as<int>(), shape["T"].as<int>(), shape["S"].as<int>(),
                   shape["D"].as<int>()};
  const BackendChoice choice = select_backend(requested, e, s);
  val out = val::object();
  out.set("backend", std::string(backend_name(choice.backend)));
  out.set("reason", choice.reason);
  return out;
}

double _heap_bytes_in_use() { return double(mallinfo().uordblks); }

val _worker_threads() {
  val out = val::object();
  out.set("available", shard_runner().workers());
  out.set("active", shard_runner().active_workers());
  return out;
}

std::string _set_active_worker_threads(int n) {
  const int available = shard_runner().workers();
  if (n < 0 || n > available)
    return "worker threads must be an integer in [0, " + std::to_string(available) + "] in this build, got " +
           std::to_string(n);
  shard_runner().set_active_workers(n);
  return {};
}

}  // namespace attnlab::wasm
