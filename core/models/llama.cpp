#include "llama.h"

namespace attnlab {

DecoderSpec llama_spec(const LlamaConfig& c, WeightFormat weights) {
  DecoderSpec s;
  s.weights = weights;
  s.vocab_size = c.vocab_size;
  s.n_embd = c.hidden_size;
  s.n_layer = c.layers;
  s.n_head = c.heads;
  s.n_kv_head = c.kv_heads;
  s.head_dim = c.head_dim;
  s.n_inner = c.intermediate_size;
  s.n_positions = c.max_positions;
  s.eos_token_id = c.eos_token_id;
  s.norm_eps = c.rms_norm_eps;
  s.rope_theta = c.rope_theta;
  s.rope_scaling = c.rope_scaling;
  s.norm = DecoderNorm::rms_norm;
  s.mlp = DecoderMlp::gated_silu;
  s.positions = DecoderPositions::rotary;
  s.layout = WeightLayout::out_in;  // nn.Linear
  s.qkv_bias = c.attention_bias;
  s.out_bias = c.model_type == "llama" && c.attention_bias;  // Qwen2's o_proj has none
  s.mlp_bias = c.mlp_bias;
  s.tied_unembedding = c.tie_word_embeddings;
  return s;
}

}  // namespace attnlab
