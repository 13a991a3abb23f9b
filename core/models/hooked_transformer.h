// A TransformerLens HookedTransformer as a row of the one decoder (decoder.h): the model the Induction
// lab trains (core/trainers/induction_model.h) opened in the Writing lab, so that writing, the head
// roles, switching heads off and the circuits (circuits.h) run on the student's own model as on GPT-2.
// Its config.json holds HookedTransformerConfig's fields (n_layers, d_model, n_ctx, d_head, n_heads,
// d_vocab, d_mlp, act_fn, attn_only, normalization_type, positional_embedding_type, eps) and model_type
// "hooked_transformer"; the Induction export is turned into such a folder by
// web/models/hooked_transformer.js, which also lays TransformerLens's [H, E, D] weights out as the
// decoder's [E, H D] projections under decoder_names.cpp's "hooked_transformer" row.
//
//   learned positions, as many key/value heads as query heads, a bias on every projection (b_Q, b_K,
//   b_V, b_O, b_in, b_out), weights stored [in, out] (TransformerLens's W_in, W_out), an unembedding of
//   its own with its bias b_U; LayerNorm ("LN"), RMSNorm ("RMS") or no norm (None); erf's GELU
//   ("gelu"), GPT-2's ("gelu_new") or no MLP (attn_only).
#pragma once

#include <string>

#include "config_json.h"
#include "decoder.h"

namespace attnlab {

struct HookedTransformerConfig {
  int n_layers = 0, d_model = 0, n_ctx = 0, d_head = 0, n_heads = 0, d_vocab = 0;
  int d_mlp = 0;            // 0: attention only
  bool attn_only = false;
  std::string act_fn;       // "gelu" or "gelu_new" with an MLP
  std::string normalization_type = "LN";  // "LN", "RMS" or "" (None)
  double eps = 1e-5;
};

// The fields read by rows (config_json.h); the strings are read by hand (parse_hooked_transformer_config).
template <class Fields, class Config>
void hooked_transformer_config_fields(Fields& f, Config& c) {
  f("layers", c.n_layers, FileInt{"n_layers", 1, 64});
  f("hiddenSize", c.d_model, FileInt{"d_model", 1, 8192});
  f("maxPositions", c.n_ctx, FileInt{"n_ctx", 1, 65536});
  f("headDim", c.d_head, FileInt{"d_head", 1, 1024});
  f("heads", c.n_heads, FileInt{"n_heads", 1, 128});
  f("vocabSize", c.d_vocab, FileInt{"d_vocab", 1, 1000000});
  f("attentionOnly", c.attn_only, FileBoolOr{"attn_only", false});
  f(kNotShown, c.eps, FilePositiveOr{"eps", 1, 1e-5});
}

// "" and `out`, or what is wrong with config.json (a message naming the field).
std::string parse_hooked_transformer_config(const std::string& text, HookedTransformerConfig& out);

// config.json -> the decoder's row.
DecoderSpec hooked_transformer_spec(const HookedTransformerConfig& c);

class HookedTransformerModel : public Decoder {
 public:
  explicit HookedTransformerModel(const HookedTransformerConfig& config)
      : Decoder(hooked_transformer_spec(config), *decoder_names("hooked_transformer")), c_(config) {}
  const HookedTransformerConfig& config() const { return c_; }

 private:
  HookedTransformerConfig c_;
};

// The registry's TransformerLens kind (model_type "hooked_transformer").
std::unique_ptr<ModelKind> make_hooked_transformer_kind();

}  // namespace attnlab
