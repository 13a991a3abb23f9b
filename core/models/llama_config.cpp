#include "llama_config.h"

#include <cmath>

#include "../io/json.h"
#include "config_json.h"

namespace attnlab {

WorkShape work_shape(const LlamaConfig& c) {
  return {c.layers, c.heads, c.kv_heads, c.head_dim, c.hidden_size, c.intermediate_size, c.vocab_size, c.max_positions};
}

std::uint64_t LlamaConfig::weight_count() const {
  const std::uint64_t E = hidden_size, F = intermediate_size, QD = std::uint64_t(heads) * head_dim,
                      KD = std::uint64_t(kv_heads) * head_dim;
  const std::uint64_t layer = 2 * E + E * (QD + 2 * KD) + QD * E + 3 * E * F;
  return std::uint64_t(vocab_size) * E * (tie_word_embeddings ? 1 : 2) + std::uint64_t(layers) * layer + E;
}

namespace {

std::string field_name(const char* field) { return std::string("config.json: \"") + field + "\""; }

// A whole number that may be absent or null (then `out` is left alone): "" or why not.
std::string read_optional_int(const Json& config, const char* field, long lo, long hi, int& out) {
  const Json* v = config.find(field);
  if (!v || v->is_null()) return {};
  if (!v->is_number()) return field_name(field) + " must be a number or null, got " + Json::js_typeof(v);
  const double x = v->as_number();
  if (!(x == std::floor(x)) || x < double(lo) || x > double(hi))
    return field_name(field) + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + write_json(*v);
  out = int(x);
  return {};
}

// A positive number below `hi` that may be absent (then `out` is left alone).
std::string read_optional_positive(const Json& object, const char* where, const char* field, double hi, double& out) {
  const Json* v = object.find(field);
  if (!v || v->is_null()) return {};
  if (!v->is_number() || !(v->as_number() > 0 && v->as_number() < hi))
    return std::string(where) + "\"" + field + "\" must be a number in (0, " + write_json(Json(hi)) + "), got " + write_json(*v);
  out = v->as_number();
  return {};
}

std::string read_optional_bool(const Json& config, const char* field, bool& out) {
  const Json* v = config.find(field);
  if (!v || v->is_null()) return {};
  if (!v->is_bool()) return field_name(field) + " must be true or false, got " + write_json(*v);
  out = v->as_bool();
  return {};
}

// rope_scaling: null, {"rope_type" (or the older "type"): "linear", "factor"}, or Llama 3.1's
// {"rope_type": "llama3", "factor", "low_freq_factor", "high_freq_factor",
// "original_max_position_embeddings"}. Other types (dynamic, yarn, longrope, ...) are refused by name.
std::string read_rope_scaling(const Json& config, RopeScaling& out) {
  out = RopeScaling{};
  const Json* v = config.find("rope_scaling");
  if (!v || v->is_null()) return {};
  if (!v->is_object()) return "config.json: \"rope_scaling\" must be an object or null, got " + write_json(*v);
  const Json* type = v->find("rope_type");
  if (!type) type = v->find("type");
  if (!type || !type->is_string()) return "config.json: \"rope_scaling\" has no \"rope_type\"";
  const std::string name = type->as_string();
  const char* where = "config.json: rope_scaling's ";
  if (name == "default") return {};
  if (name != "linear" && name != "llama3")
    return "config.json: rope_scaling's rope_type is \"" + name.substr(0, 40) +
           "\"; this decoder computes rotary positions unscaled, \"linear\" or \"llama3\" only";
  if (!v->find("factor")) return "config.json: rope_scaling (\"" + name + "\") has no \"factor\"";
  std::string error = read_optional_positive(*v, where, "factor", 1e6, out.factor);
  if (!error.empty()) return error;
  out.type = RopeScaling::Type::linear;
  if (name == "llama3") {
    out.type = RopeScaling::Type::llama3;
    for (const char* f : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!v->find(f)) return "config.json: rope_scaling (\"llama3\") has no \"" + std::string(f) + "\"";
    error = read_optional_positive(*v, where, "low_freq_factor", 1e6, out.low_freq_factor);
    if (error.empty()) error = read_optional_positive(*v, where, "high_freq_factor", 1e6, out.high_freq_factor);
    if (error.empty()) error = read_optional_positive(*v, where, "original_max_position_embeddings", 1e9, out.original_max_positions);
    if (!error.empty()) return error;
    if (!(out.high_freq_factor > out.low_freq_factor))
      return "config.json: rope_scaling's \"high_freq_factor\" must be larger than its \"low_freq_factor\"";
  }
  return {};
}

}  // namespace

std::string parse_llama_config(const std::string& text, const std::string& model_type, LlamaConfig& out) {
  out = LlamaConfig{};
  const bool qwen2 = model_type == "qwen2";
  const char* title = qwen2 ? "Qwen2" : "Llama";
  Json config;
  std::string error = read_config_object(text, model_type.c_str(), title, config);
  if (!error.empty()) return error;
  LlamaConfig c;
  c.model_type = model_type;
  error = read_config_fields(config, title, c, [](auto& f, auto& c) { llama_config_fields(f, c); });
  if (!error.empty()) return error;
  c.kv_heads = c.heads;  // absent: multi-head attention (LlamaConfig's default)
  error = read_optional_int(config, "num_key_value_heads", 1, 256, c.kv_heads);
  if (!error.empty()) return error;
  if (c.heads % c.kv_heads != 0)
    return "config.json: num_attention_heads " + std::to_string(c.heads) + " is not a multiple of num_key_value_heads " +
           std::to_string(c.kv_heads);
  c.head_dim = c.hidden_size / c.heads;
  if (const Json* v = config.find("head_dim"); !v || v->is_null()) {
    if (c.hidden_size % c.heads != 0)
      return "config.json: hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
             std::to_string(c.heads) + " (and no head_dim is given)";
  }
  error = read_optional_int(config, "head_dim", 1, 1024, c.head_dim);
  if (!error.empty()) return error;
  if (c.head_dim % 2 != 0) return "config.json: the head width " + std::to_string(c.head_dim) + " is odd; rotary positions turn pairs";
  c.max_positions = qwen2 ? 32768 : 2048;  // Qwen2Config's and LlamaConfig's defaults
  error = read_optional_int(config, "max_position_embeddings", 1, 1 << 20, c.max_positions);
  if (!error.empty()) return error;
  error = read_optional_positive(config, "config.json: ", "rms_norm_eps", 1, c.rms_norm_eps);
  if (error.empty()) error = read_optional_positive(config, "config.json: ", "rope_theta", 1e12, c.rope_theta);
  if (error.empty()) error = read_rope_scaling(config, c.rope_scaling);
  if (error.empty()) error = read_optional_bool(config, "tie_word_embeddings", c.tie_word_embeddings);
  if (!error.empty()) return error;
  if (qwen2) {
    // Qwen2: biases on q, k and v, none on o or the MLP; sliding-window attention is another mask.
    c.attention_bias = true;
    bool sliding = false;
    error = read_optional_bool(config, "use_sliding_window", sliding);
    if (!error.empty()) return error;
    if (sliding) return "config.json: \"use_sliding_window\" is true; this decoder attends to every earlier token (no sliding window)";
  } else {
    error = read_optional_bool(config, "attention_bias", c.attention_bias);
    if (error.empty()) error = read_optional_bool(config, "mlp_bias", c.mlp_bias);
    if (!error.empty()) return error;
  }
  if (const Json* act = config.find("hidden_act"); act && !(act->is_string() && act->as_string() == "silu"))
    return "config.json: \"hidden_act\" is " + write_json(*act) + "; this decoder's gated MLP computes \"silu\" only";
  // eos_token_id: a number or a list (Llama 3's several ends); the first within the vocabulary stops
  // the writer (tokenizer_config.json and generation_config.json may name more: the page's tokenizer).
  if (const Json* eos = config.find("eos_token_id"); eos && !eos->is_null()) {
    std::vector<Json> ids = eos->is_array() ? eos->items() : std::vector<Json>{*eos};
    for (const Json& id : ids) {
      if (!id.is_number() || id.as_number() != std::floor(id.as_number()))
        return "config.json: \"eos_token_id\" must be a whole number, a list of them or null, got " + write_json(*eos);
      if (c.eos_token_id < 0 && id.as_number() >= 0 && id.as_number() < c.vocab_size) c.eos_token_id = int(id.as_number());
    }
  }
  // torch_dtype: how the weights are stored. A 16-bit checkpoint stays 16-bit in memory (decoder.h), so
  // the budget is on the bytes as stored, the rule the Hub client applies to the download.
  if (const Json* dtype = config.find("torch_dtype"); dtype && dtype->is_string())
    c.stored_bytes = dtype->as_string() == "bfloat16" || dtype->as_string() == "float16" ? 2 : 4;
  error = check_weight_budget(c.weight_count(), c.stored_bytes, work_shape(c));
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
