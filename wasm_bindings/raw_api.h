// The raw API that bindings.cpp exposes. Each method checks its inputs with core/validate.h before it
// touches any state and returns "" or an error message; the JS wrapper (attnlab.js) turns a message
// into an exception. Nothing here throws: a C++ throw would abort the whole WASM instance, while a
// returned message leaves the instance and every model in it as they were.
//
// Typed arrays cross the boundary in one copy each way (TypedArray.set on a heap view), never in a
// per-element loop. Results are returned as views of C++ buffers; the wrapper copies them out with
// slice() at once, because heap growth detaches old views.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "optim/adam.h"
#include "rng.h"

namespace attnlab::wasm {

using emscripten::val;

// Copies a JS typed array (or array) into a vector, with one TypedArray.set.
std::vector<float> to_floats(const val& array);
// Whole numbers in int32's range into `out`; "" or "<name>[i] must be a whole number in [...], got x".
std::string to_int32s(const char* name, const val& array, std::vector<std::int32_t>& out);
val view_of(const std::vector<float>& v);
val view_of(const RowMatrix& m);
bool is_typed_array_or_array(const val& v);
// "" or "<name> must be an integer, got ..." / "... must be a positive integer" / "... at most N";
// the value lands in `out`.
std::string check_int_field(const val& args, const char* name, long max_value, int& out);
// args[name] as floats into `out`: a typed array (or array) of n finite numbers, or a message naming
// the field and its expected shape.
std::string read_float_field(const val& args, const char* name, std::size_t n, const std::string& shape,
                             std::vector<float>& out);
// "" or "<name>[i] must be a finite number or -Infinity (an additive mask), got NaN|+Infinity".
std::string check_additive_mask(const char* name, const std::vector<float>& v);
// "" or "<name> must be a Float32Array (or an array of numbers), got <type>"
std::string check_array(const char* name, const val& v);

// Likeliest tokens ({id, probability, logit} each: BERT's predictions, GPT-2's chances) -> JS records.
template <class Chances>
val chance_records(const Chances& chances) {
  val out = val::array();
  for (const auto& c : chances) {
    val item = val::object();
    item.set("id", c.id);
    item.set("probability", c.probability);
    item.set("logit", c.logit);
    out.call<void>("push", item);
  }
  return out;
}

// Layers with parameters share this face so Adam can take any of them.
class RawLayer {
 public:
  virtual ~RawLayer() = default;
  virtual ParameterList params() = 0;

  std::vector<std::string> _parameter_names();
  val _parameter(const std::string& name);  // view, or undefined for an unknown name
  val _gradient(const std::string& name);
  val _parameter_shape(const std::string& name);
  std::string _set_parameter(const std::string& name, const val& values);
  void _zero_grad();

 private:
  Parameter* find(const std::string& name);
};

class RawEmbedding : public RawLayer {
 public:
  RawEmbedding(int num_embeddings, int embedding_dim, std::uint32_t seed);
  static std::string _config_error(int num_embeddings, int embedding_dim);
  std::string _forward(const val& ids);
  std::string _backward(const val& ids, const val& d_out);
  val _output() const { return view_of(out_); }
  ParameterList params() override { return layer_.parameters(); }

 private:
  Rng rng_;
  Embedding layer_;
  RowMatrix out_;
};

class RawLinear : public RawLayer {
 public:
  RawLinear(int in_features, int out_features, std::uint32_t seed, bool bias);
  static std::string _config_error(int in_features, int out_features);
  std::string _forward(const val& x, int rows);
  std::string _backward(const val& d_y);  // uses the last forward's input
  val _output() const { return view_of(y_); }
  val _d_input() const { return view_of(dx_); }
  ParameterList params() override { return layer_.parameters(); }

 private:
  Rng rng_;
  Linear layer_;
  RowMatrix x_, y_, dx_;
};

class RawMultiheadAttention : public RawLayer {
 public:
  RawMultiheadAttention(int embed_dim, int num_heads, std::uint32_t seed);
  static std::string _config_error(int embed_dim, int num_heads);
  // args: {batch, queryLength, keyLength, query, key, value, keyPaddingMask?, attnMask?, backend}
  std::string _forward(const val& args);
  std::string _backward(const val& d_output, const val& d_weights, int backend);
  val _output() const { return view_of(mha_.output()); }
  val _weights() const { return view_of(mha_.weights()); }
  val _weights_mean() const { return view_of(mha_.weights_mean()); }
  val _d_query() const { return view_of(mha_.d_query()); }
  val _d_key() const { return view_of(mha_.d_key()); }
  val _d_value() const { return view_of(mha_.d_value()); }
  ParameterList params() override { return mha_.parameters(); }

 private:
  std::string read_mask(const val& args, const char* name, std::size_t shared, std::size_t per_head,
                        std::vector<float>& out, bool& per_head_out);
  Rng rng_;
  MultiheadAttention mha_;
  bool has_forward_ = false;
};

class RawAdam {
 public:
  explicit RawAdam(const val& options);
  static std::string _options_error(const val& options);
  void _add(RawLayer& layer);
  void _step();
  void _zero_grad();
  int _steps_taken() const { return adam_ ? adam_->steps_taken() : 0; }
  void _set_lr(double lr) { options_.lr = lr; if (adam_) adam_->options.lr = lr; }

 private:
  AdamOptions options_;
  ParameterList params_;
  std::unique_ptr<Adam> adam_;  // made at the first step, once every layer is added
};

class RawRng {
 public:
  explicit RawRng(double seed) : rng_(std::uint64_t(seed)) {}
  double _next_u32() { return double(rng_.next_u32()); }
  int _below(int n) { return int(rng_.below(std::uint32_t(n))); }
  float _uniform() { return rng_.uniform(); }
  float _normal() { return rng_.normal(); }

 private:
  Rng rng_;
};

// Free functions. Results land in a module-level buffer read by _result() / _result_grad().
std::string _relu(const val& x);
std::string _relu_backward(const val& x, const val& d_y);
std::string _sigmoid(const val& x);
std::string _sigmoid_backward(const val& y, const val& d_y);
std::string _cross_entropy(const val& logits, const val& targets, int classes);
std::string _binary_cross_entropy(const val& p, const val& y);
std::string _mse(const val& pred, const val& target);
val _result();
val _result_grad();
double _result_loss();

std::string _version();
val _backends();  // CPU backends this build offers: ["scalar", "simd128"] or ["scalar"]
val _select_backend(const std::string& requested, const val& env, const val& shape);
double _heap_bytes_in_use();
// Training steps run their second shard on a worker thread in the Node threads build: how many such
// threads exist, and how many a step uses (0 runs both shards on the calling thread; same bits).
val _worker_threads();
std::string _set_active_worker_threads(int n);

}  // namespace attnlab::wasm
