#include "distilbert_checkpoint.h"

#include <utility>
#include <vector>

#include "../io/json.h"
#include "bert_checkpoint.h"
#include "config_json.h"

namespace attnlab {

namespace {

// BertModel's name -> DistilBERT's (the table in the header): the layer's prefix, then the one part of
// the name after it that differs, in an order where no entry matches another's name.
std::string distilbert_name(const std::string& canonical) {
  static const std::vector<std::pair<std::string, std::string>> kParts = {
      {".attention.self.query.", ".attention.q_lin."},     {".attention.self.key.", ".attention.k_lin."},
      {".attention.self.value.", ".attention.v_lin."},     {".attention.output.dense.", ".attention.out_lin."},
      {".attention.output.LayerNorm.", ".sa_layer_norm."}, {".intermediate.dense.", ".ffn.lin1."},
      {".output.dense.", ".ffn.lin2."},                    {".output.LayerNorm.", ".output_layer_norm."},
      {"cls.predictions.transform.dense.", "vocab_transform."},
      {"cls.predictions.transform.LayerNorm.", "vocab_layer_norm."},
      {"cls.predictions.bias", "vocab_projector.bias"},   {"cls.predictions.decoder.weight", "vocab_projector.weight"},
  };
  std::string name = canonical;
  const std::string layer = "encoder.layer.";
  if (name.rfind(layer, 0) == 0) name = "transformer.layer." + name.substr(layer.size());
  for (const auto& [from, to] : kParts) {
    const std::size_t at = name.find(from);
    if (at != std::string::npos) return name.replace(at, from.size(), to);
  }
  return name;
}

std::vector<std::string> distilbert_spellings(const std::string& canonical, bool encoder) {
  const std::string name = distilbert_name(canonical);
  if (!encoder) return {name};
  return {"distilbert." + name, name};
}

const BertNaming kDistilBertNaming{"DistilBERT", distilbert_spellings, false, "distilbert."};

}  // namespace

std::string parse_distilbert_config(const std::string& text, BertConfig& out) {
  out = BertConfig{};
  Json config;
  std::string error = read_config_object(text, "distilbert", "DistilBERT", config);
  if (!error.empty()) return error;
  BertConfig c;
  error = read_config_fields(config, "DistilBERT", c, [](auto& f, auto& c) { distilbert_config_fields(f, c); });
  if (!error.empty()) return error;
  if (const Json* act = config.find("activation")) {
    // DistilBERT's "gelu" is the exact one, as BERT's; other activations are other models.
    if (!act->is_string() || act->as_string() != "gelu")
      return "config.json: \"activation\" is " + write_json(*act) + "; DistilBERT here computes \"gelu\" (erf) only";
  }
  c.type_vocab_size = 2;  // no token type embeddings: BertModel's stay zero, so a sentence pair adds nothing
  c.layer_norm_eps = 1e-12;  // DistilBERT's, fixed in its code
  if (c.hidden_size % c.num_attention_heads != 0)
    return "config.json: dim " + std::to_string(c.hidden_size) + " is not a multiple of n_heads " + std::to_string(c.num_attention_heads);
  error = check_weight_budget(c.encoder_floats() + std::uint64_t(c.vocab_size) + std::uint64_t(c.hidden_size) * c.hidden_size, 4,
                              {c.num_hidden_layers, c.num_attention_heads, c.num_attention_heads, c.hidden_size / c.num_attention_heads,
                               c.hidden_size, c.intermediate_size, c.vocab_size, c.max_position_embeddings});
  if (!error.empty()) return error;
  out = c;
  return {};
}

std::unique_ptr<ModelKind> make_distilbert_kind() {
  return make_bert_family_kind("distilbert", parse_distilbert_config, kDistilBertNaming);
}

}  // namespace attnlab
