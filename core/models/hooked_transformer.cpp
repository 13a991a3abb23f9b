#include "hooked_transformer.h"

#include "../io/json.h"
#include "decoder_checkpoint.h"

namespace attnlab {

namespace {

// A string field that may be absent (then `absent`) or null (then `null`): "" and the value, or the message.
std::string read_choice(const Json& config, const char* field, const std::vector<std::string>& allowed, const std::string& absent,
                        const std::string& null, std::string& out) {
  const Json* v = config.find(field);
  out = v ? null : absent;
  if (!v || v->is_null()) return {};
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  if (!v->is_string()) return std::string("config.json: \"") + field + "\" must be " + list + " or null, got " + write_json(*v);
  for (const std::string& a : allowed)
    if (v->as_string() == a) {
      out = a;
      return {};
    }
  std::string shown = write_json(*v);
  if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
  return std::string("config.json: \"") + field + "\" is " + shown + "; this HookedTransformer reads " + list + " or null";
}

}  // namespace

std::string parse_hooked_transformer_config(const std::string& text, HookedTransformerConfig& out) {
  out = HookedTransformerConfig{};
  const DecoderNames* names = nullptr;
  std::string error = find_decoder_names("hooked_transformer", names);
  if (!error.empty()) return error;
  Json config;
  error = read_config_object(text, "hooked_transformer", "TransformerLens", config);
  if (!error.empty()) return error;
  HookedTransformerConfig c;
  error = read_config_fields(config, "HookedTransformer", c, [](auto& f, auto& c) { hooked_transformer_config_fields(f, c); });
  if (!error.empty()) return error;
  // normalization_type: absent is HookedTransformerConfig's default "LN"; null is no norm.
  std::string positions;
  error = read_choice(config, "normalization_type", {"LN", "RMS"}, "LN", "", c.normalization_type);
  if (error.empty()) error = read_choice(config, "positional_embedding_type", {"standard"}, "standard", "standard", positions);
  // d_mlp stays 0 for an attention-only model (the spec's no MLP).
  if (error.empty() && !c.attn_only) {
    error = read_choice(config, "act_fn", {"gelu", "gelu_new"}, "", "", c.act_fn);
    if (error.empty() && c.act_fn.empty()) error = "config.json: \"act_fn\" is missing; a HookedTransformer with an MLP needs \"gelu\" or \"gelu_new\"";
    if (error.empty()) {
      // HookedTransformerConfig's default: 4 d_model.
      ConfigJsonReader r(config, "HookedTransformer");
      r("mlpSize", c.d_mlp, FileIntOr{"d_mlp", 1, 65536, 4 * c.d_model});
      error = r.error;
    }
  }
  if (!error.empty()) return error;
  if (const Json* v = config.find("use_attn_scale"); v && v->is_bool() && !v->as_bool())
    return "config.json: \"use_attn_scale\" is false; this HookedTransformer divides the scores by sqrt(d_head) only";
  if (const Json* v = config.find("d_vocab_out"); v && v->is_number() && v->as_number() != double(c.d_vocab) && v->as_number() != -1.0)
    return "config.json: \"d_vocab_out\" differs from \"d_vocab\"; this HookedTransformer writes the tokens it reads";
  error = check_weight_budget(decoder_weight_count(hooked_transformer_spec(c), *names), 4,
                              {c.n_layers, c.n_heads, c.n_heads, c.d_head, c.d_model, c.d_mlp, c.d_vocab, c.n_ctx});
  if (!error.empty()) return error;
  out = c;
  return {};
}

DecoderSpec hooked_transformer_spec(const HookedTransformerConfig& c) {
  DecoderSpec s;
  s.vocab_size = c.d_vocab;
  s.n_embd = c.d_model;
  s.n_layer = c.n_layers;
  s.n_head = s.n_kv_head = c.n_heads;
  s.head_dim = c.d_head;
  s.n_inner = c.d_mlp;
  s.n_positions = c.n_ctx;
  s.norm_eps = c.eps;
  s.norm = c.normalization_type == "LN" ? DecoderNorm::layer_norm : c.normalization_type == "RMS" ? DecoderNorm::rms_norm : DecoderNorm::none;
  s.mlp = c.attn_only ? DecoderMlp::none : c.act_fn == "gelu_new" ? DecoderMlp::gelu_new : DecoderMlp::gelu;
  s.positions = DecoderPositions::learned;
  s.layout = WeightLayout::in_out;  // TransformerLens's W_in [E, F], W_out [F, E]; W_Q as [E, H D]
  s.qkv_bias = s.out_bias = s.mlp_bias = true;
  s.tied_unembedding = false;  // W_U [E, V], laid out [V, E] by the converter
  s.output_bias = true;        // b_U
  return s;
}

namespace {

class HookedTransformerKind : public ModelKind {
 public:
  const char* id() const override { return "hooked_transformer"; }
  std::string read_config(const std::string& json) override { return parse_hooked_transformer_config(json, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    const DecoderNames* names = nullptr;
    LoadPlan plan;
    std::string prefix;
    DecoderCheckpointRules rules;
    rules.model = "HookedTransformer";
    rules.sizes = "d_model " + std::to_string(config_.d_model) + ", " + std::to_string(config_.n_heads) + " heads of " +
                  std::to_string(config_.d_head) + ", d_mlp " + std::to_string(config_.d_mlp) + ", d_vocab " +
                  std::to_string(config_.d_vocab) + ", n_ctx " + std::to_string(config_.n_ctx);
    rules.unnamed_hint = "(attn_only or normalization_type set wrong?)";
    std::string error = find_decoder_names(id(), names);
    if (error.empty()) error = plan_decoder_load(hooked_transformer_spec(config_), *names, rules, tensors, file, plan, prefix);
    if (error.empty()) out = plan;
    return error;
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<HookedTransformerModel>(config_); }
  Json summary() const override {
    Json out = Json::object();
    Json config = config_record(config_, [](auto& f, auto& c) { hooked_transformer_config_fields(f, c); });
    if (config_.d_mlp > 0) config.set("mlpSize", Json(config_.d_mlp));
    config.set("norm", Json(config_.normalization_type.empty() ? "none" : config_.normalization_type));
    out.set("naming", Json("TransformerLens"));
    out.set("config", config);
    return out;
  }

 private:
  HookedTransformerConfig config_;
};

}  // namespace

std::unique_ptr<ModelKind> make_hooked_transformer_kind() { return std::make_unique<HookedTransformerKind>(); }

}  // namespace attnlab
