#include "marian_config.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "../io/json.h"
#include "bert_config.h"
#include "config_json.h"

namespace attnlab {

namespace {

std::string field_name(const char* field) { return std::string("config.json: \"") + field + "\""; }

std::string read_int(const Json& config, const char* field, long lo, long hi, int& out, bool required = true) {
  const Json* v = config.find(field);
  if (!v) return required ? field_name(field) + " is missing (is this a Marian config?)" : "";
  if (!v->is_number()) return field_name(field) + " must be a number, got " + Json::js_typeof(v);
  const double x = v->as_number();
  if (!(x == std::floor(x)) || x < double(lo) || x > double(hi))
    return field_name(field) + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + write_json(*v);
  out = int(x);
  return {};
}

}  // namespace

std::uint64_t MarianConfig::weight_floats() const {
  const std::uint64_t E = d_model, V = vocab_size;
  const std::uint64_t attention = 4 * (E * E + E), norm = 2 * E;
  const std::uint64_t encoder = std::uint64_t(encoder_layers) * (attention + 2 * norm + 2 * E * encoder_ffn + encoder_ffn + E);
  const std::uint64_t decoder = std::uint64_t(decoder_layers) * (2 * attention + 3 * norm + 2 * E * decoder_ffn + decoder_ffn + E);
  return V * E + V + encoder + decoder;
}

std::string parse_marian_config(const std::string& text, MarianConfig& out) {
  out = MarianConfig{};
  Json config;
  std::string error = read_config_object(text, "marian", "Marian (opus-mt)", config);
  if (!error.empty()) return error;
  MarianConfig c;
  error = read_config_fields(config, "Marian", c, [](auto& f, auto& c) { marian_size_fields(f, c); });
  if (!error.empty()) return error;
  const long last = c.vocab_size - 1;
  c.decoder_start_id = c.pad_id;  // Marian starts decoding from the pad token
  c.max_length = std::min(c.max_positions, 512);
  error = read_config_fields(config, "Marian", c, [](auto& f, auto& c) { marian_generation_fields(f, c); });
  if (error.empty() && config.find("forced_eos_token_id") && !config.find("forced_eos_token_id")->is_null())
    error = read_int(config, "forced_eos_token_id", 0, last, c.forced_eos_id);
  if (!error.empty()) return error;
  if (c.max_length > c.max_positions) c.max_length = c.max_positions;  // no position embedding past it
  if (const Json* act = config.find("activation_function")) {
    // Marian's "swish" is SiLU, x sigmoid(x); other activations are other models.
    if (!act->is_string() || (act->as_string() != "swish" && act->as_string() != "silu"))
      return "config.json: \"activation_function\" is " + write_json(*act) + "; this lab implements Marian's \"swish\" (SiLU) only";
  }
  if (const Json* s = config.find("scale_embedding")) {
    if (!s->is_bool()) return "config.json: \"scale_embedding\" must be true or false, got " + write_json(*s);
    c.scale_embedding = s->as_bool();
  }
  if (const Json* nb = config.find("normalize_before"); nb && nb->is_bool() && nb->as_bool())
    return "config.json: \"normalize_before\" is true (pre-LayerNorm); Marian's layers normalise after the residual";
  if (const Json* lp = config.find("length_penalty")) {
    if (!lp->is_number() || !std::isfinite(lp->as_number())) return "config.json: \"length_penalty\" must be a number, got " + write_json(*lp);
    c.length_penalty = lp->as_number();
  }
  if (const Json* es = config.find("early_stopping")) {
    if (!es->is_bool()) return "config.json: \"early_stopping\" must be true or false (\"never\" is not read), got " + write_json(*es);
    c.early_stopping = es->as_bool();
  }
  if (const Json* bad = config.find("bad_words_ids"); bad && !bad->is_null()) {
    const std::string what = "config.json: \"bad_words_ids\" must be a list of lists of token ids";
    if (!bad->is_array()) return what;
    for (const Json& words : bad->items()) {
      if (!words.is_array() || words.items().empty()) return what;
      // Only single-token entries are bad words a step can ban alone; Marian's is [[pad]].
      if (words.items().size() != 1) return "config.json: \"bad_words_ids\" with sequences of more than one token are not read";
      const Json& id = words.items()[0];
      if (!id.is_number() || id.as_number() != std::floor(id.as_number()) || id.as_number() < 0 || id.as_number() > double(last))
        return what + " in [0, " + std::to_string(last) + "]";
      c.bad_words.push_back(int(id.as_number()));
    }
  }
  for (auto [layers, heads, name] : {std::tuple<int, int, const char*>{c.d_model, c.encoder_heads, "encoder_attention_heads"},
                                     {c.d_model, c.decoder_heads, "decoder_attention_heads"}}) {
    if (layers % heads != 0)
      return "config.json: d_model " + std::to_string(c.d_model) + " is not a multiple of " + name + " " + std::to_string(heads);
  }
  if (c.d_model % 2 != 0) return "config.json: d_model must be even (sinusoidal positions: a sin half and a cos half)";
  // Both stacks' layers, at the wider of their heads and feed-forwards (beams add keys and values: small beside).
  const int heads = std::max(c.encoder_heads, c.decoder_heads);
  error = check_weight_budget(c.weight_floats(), 4,
                              {c.encoder_layers + c.decoder_layers, heads, heads, c.d_model / heads, c.d_model,
                               std::max(c.encoder_ffn, c.decoder_ffn), c.vocab_size, c.max_positions});
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
