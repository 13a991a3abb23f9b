#include "llama_config.h"

#include <cmath>

#include "../io/json.h"
#include "config_json.h"
#include "llama.h"

namespace attnlab {

WorkShape work_shape(const LlamaConfig& c) {
  return {c.layers, c.heads, c.kv_heads, c.head_dim, c.hidden_size, c.intermediate_size, c.vocab_size, c.max_positions};
}

namespace {

// A positive number below `hi` of rope_scaling's object that may be absent (then `out` is left alone);
// config.json's own fields are rows (llama_config.h).
std::string read_optional_positive(const Json& object, const char* where, const char* field, double hi, double& out) {
  const Json* v = object.find(field);
  if (!v || v->is_null()) return {};
  if (!v->is_number() || !(v->as_number() > 0 && v->as_number() < hi))
    return std::string(where) + "\"" + field + "\" must be a number in (0, " + write_json(Json(hi)) + "), got " + write_json(*v);
  out = v->as_number();
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

// use_sliding_window: true (Qwen2's; MistralConfig's window has no switch: config_json.cpp) is attention
// over the last sliding_window keys only, a mask this decoder does not compute; the window is named.
std::string sliding_window_refusal(const Json& config) {
  const Json* window = config.find("sliding_window");
  if (window && window->is_number())
    return "config.json: \"use_sliding_window\" is true and \"sliding_window\" is " + write_json(*window) +
           "; this decoder attends to every earlier token (no sliding window)";
  return "config.json: \"use_sliding_window\" is true; this decoder attends to every earlier token (no sliding window)";
}

}  // namespace

std::string parse_llama_config(const std::string& text, const std::string& model_type, LlamaConfig& out) {
  out = LlamaConfig{};
  const bool qwen2 = model_type == "qwen2";
  const char* title = qwen2 ? "Qwen2" : "Llama";
  const DecoderNames* names = nullptr;
  std::string error = find_decoder_names(model_type, names);
  if (!error.empty()) return error;
  Json config;
  error = read_config_object(text, model_type.c_str(), title, config);
  if (!error.empty()) return error;
  LlamaConfig c;
  c.model_type = model_type;
  error = read_config_fields(config, title, c, [](auto& f, auto& c) { llama_config_fields(f, c); });
  if (!error.empty()) return error;
  if (c.heads % c.kv_heads != 0)
    return "config.json: num_attention_heads " + std::to_string(c.heads) + " is not a multiple of num_key_value_heads " +
           std::to_string(c.kv_heads);
  if (const Json* v = config.find("head_dim"); (!v || v->is_null()) && c.hidden_size % c.heads != 0)
    return "config.json: hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
           std::to_string(c.heads) + " (and no head_dim is given)";
  if (c.head_dim % 2 != 0) return "config.json: the head width " + std::to_string(c.head_dim) + " is odd; rotary positions turn pairs";
  error = read_rope_scaling(config, c.rope_scaling);
  if (!error.empty()) return error;
  if (c.use_sliding_window) return sliding_window_refusal(config);
  if (qwen2) c.attention_bias = true;  // Qwen2: biases on q, k and v, none on o or the MLP
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
  c.weight_count = decoder_weight_count(llama_spec(c), *names);
  error = check_weight_budget(c.weight_count, c.stored_bytes, work_shape(c));
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
