#include "bert_config.h"

#include <cmath>

#include "../io/json.h"
#include "config_json.h"

namespace attnlab {

std::uint64_t BertConfig::encoder_floats() const {
  const std::uint64_t E = hidden_size, F = intermediate_size;
  const std::uint64_t embeddings = (std::uint64_t(vocab_size) + max_position_embeddings + type_vocab_size + 2) * E;
  const std::uint64_t layer = 4 * (E * E + E) + 2 * E * F + F + E + 4 * E;
  return embeddings + std::uint64_t(num_hidden_layers) * layer;
}

std::string parse_bert_config(const std::string& text, BertConfig& out) {
  out = BertConfig{};
  Json config;
  std::string error = read_config_object(text, "bert", "BERT", config);
  if (!error.empty()) return error;
  BertConfig c;
  error = read_config_fields(config, "BERT", c, [](auto& f, auto& c) { bert_config_fields(f, c); });
  if (!error.empty()) return error;
  // Older configs omit layer_norm_eps: BertConfig's default is 1e-12.
  if (const Json* eps = config.find("layer_norm_eps")) {
    if (!eps->is_number() || !(eps->as_number() > 0 && eps->as_number() < 1))
      return "config.json: \"layer_norm_eps\" must be a number in (0, 1), got " + write_json(*eps);
    c.layer_norm_eps = eps->as_number();
  }
  if (const Json* act = config.find("hidden_act")) {
    if (!act->is_string()) return "config.json: \"hidden_act\" must be a string, got " + write_json(*act);
    // BERT's "gelu" is the exact one, 0.5 x (1 + erf(x / sqrt 2)); other activations are other models.
    if (act->as_string() != "gelu")
      return "config.json: \"hidden_act\" is \"" + act->as_string() + "\"; this lab implements BERT's \"gelu\" (erf) only";
  }
  if (c.hidden_size % c.num_attention_heads != 0)
    return "config.json: hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
           std::to_string(c.num_attention_heads);
  error = check_weight_budget(c.encoder_floats() + std::uint64_t(c.vocab_size) + std::uint64_t(c.hidden_size) * c.hidden_size, 4,
                              {c.num_hidden_layers, c.num_attention_heads, c.num_attention_heads, c.hidden_size / c.num_attention_heads,
                               c.hidden_size, c.intermediate_size, c.vocab_size, c.max_position_embeddings});
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
