#include "gpt2_config.h"

#include <cmath>

#include "../io/json.h"
#include "config_json.h"

namespace attnlab {

std::uint64_t Gpt2Config::weight_floats() const {
  const std::uint64_t E = n_embd, F = n_inner;
  const std::uint64_t layer = 4 * E + (E * 3 * E + 3 * E) + (E * E + E) + (E * F + F) + (F * E + E);
  return (std::uint64_t(vocab_size) + n_positions) * E + std::uint64_t(n_layer) * layer + 2 * E;
}

namespace {

// A whole number field that may be null or absent: "" and `out` (left alone when null or absent), or why not.
std::string read_optional_int(const Json& config, const char* field, long lo, long hi, int& out) {
  const Json* v = config.find(field);
  if (!v || v->is_null()) return {};
  const std::string name = std::string("config.json: \"") + field + "\"";
  if (!v->is_number()) return name + " must be a number or null, got " + Json::js_typeof(v);
  const double x = v->as_number();
  if (!(x == std::floor(x)) || x < double(lo) || x > double(hi))
    return name + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + write_json(*v);
  out = int(x);
  return {};
}

}  // namespace

std::string parse_gpt2_config(const std::string& text, Gpt2Config& out) {
  out = Gpt2Config{};
  Json config;
  std::string error = read_config_object(text, "gpt2", "GPT-2", config);
  if (!error.empty()) return error;
  Gpt2Config c;
  error = read_config_fields(config, "GPT-2", c, [](auto& f, auto& c) { gpt2_config_fields(f, c); });
  if (!error.empty()) return error;
  // n_positions, or n_ctx in older configs (GPT2Config's default 1024 when both are absent).
  c.n_positions = 1024;
  for (const char* field : {"n_ctx", "n_positions"}) {
    error = read_optional_int(config, field, 1, 65536, c.n_positions);
    if (!error.empty()) return error;
  }
  c.n_inner = 4 * c.n_embd;  // null: GPT2MLP's 4 x n_embd
  error = read_optional_int(config, "n_inner", 1, 65536, c.n_inner);
  if (!error.empty()) return error;
  int eos = 50256;  // GPT2Config's default
  error = read_optional_int(config, "eos_token_id", 0, 1000000, eos);
  if (!error.empty()) return error;
  c.eos_token_id = eos < c.vocab_size ? eos : -1;
  if (const Json* eps = config.find("layer_norm_epsilon")) {
    if (!eps->is_number() || !(eps->as_number() > 0 && eps->as_number() < 1))
      return "config.json: \"layer_norm_epsilon\" must be a number in (0, 1), got " + write_json(*eps);
    c.layer_norm_epsilon = eps->as_number();
  }
  if (const Json* act = config.find("activation_function")) {
    // GPT-2's "gelu_new" is the tanh approximation ("gelu_pytorch_tanh" computes the same); other
    // activations are other models.
    if (!act->is_string() || (act->as_string() != "gelu_new" && act->as_string() != "gelu_pytorch_tanh"))
      return "config.json: \"activation_function\" is " + write_json(*act) + "; GPT-2 here computes \"gelu_new\" (tanh) only";
  }
  // Settings that change the maths this model does not do.
  for (const char* flag : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"}) {
    const Json* v = config.find(flag);
    if (v && v->is_bool() && v->as_bool()) return std::string("config.json: \"") + flag + "\" is true; this GPT-2 does not compute it";
  }
  if (const Json* v = config.find("tie_word_embeddings"); v && v->is_bool() && !v->as_bool())
    return "config.json: \"tie_word_embeddings\" is false; GPT-2 here unembeds with wte (tied) only";
  if (const Json* v = config.find("scale_attn_weights"); v && v->is_bool() && !v->as_bool())
    return "config.json: \"scale_attn_weights\" is false; this GPT-2 scales attention by 1/sqrt(D) only";
  if (c.n_embd % c.n_head != 0)
    return "config.json: n_embd " + std::to_string(c.n_embd) + " is not a multiple of n_head " + std::to_string(c.n_head);
  error = check_weight_budget(c.weight_floats(), 4,
                              {c.n_layer, c.n_head, c.n_head, c.n_embd / c.n_head, c.n_embd, c.n_inner ? c.n_inner : 4 * c.n_embd, c.vocab_size, c.n_positions});
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
