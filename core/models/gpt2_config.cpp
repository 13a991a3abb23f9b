#include "gpt2_config.h"

#include "../io/json.h"
#include "gpt2.h"

namespace attnlab {

std::string parse_gpt2_config(const std::string& text, Gpt2Config& out) {
  out = Gpt2Config{};
  const DecoderNames* names = nullptr;
  std::string error = find_decoder_names("gpt2", names);
  if (!error.empty()) return error;
  Json config;
  error = read_config_object(text, "gpt2", "GPT-2", config);
  if (!error.empty()) return error;
  Gpt2Config c;
  error = read_config_fields(config, "GPT-2", c, [](auto& f, auto& c) { gpt2_config_fields(f, c); });
  if (!error.empty()) return error;
  if (c.eos_token_id >= c.vocab_size) c.eos_token_id = -1;
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
  // The weights counted from the tensor table the plan walks (decoder.h).
  error = check_weight_budget(decoder_weight_count(gpt2_spec(c), *names), 4,
                              {c.n_layer, c.n_head, c.n_head, c.head_dim(), c.n_embd, c.n_inner, c.vocab_size, c.n_positions});
  if (!error.empty()) return error;
  out = c;
  return {};
}

}  // namespace attnlab
