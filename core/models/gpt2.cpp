#include "gpt2.h"

namespace attnlab {

DecoderSpec gpt2_spec(const Gpt2Config& c) {
  DecoderSpec s;
  s.vocab_size = c.vocab_size;
  s.n_embd = c.n_embd;
  s.n_layer = c.n_layer;
  s.n_head = s.n_kv_head = c.n_head;
  s.head_dim = c.head_dim();
  s.n_inner = c.n_inner;
  s.n_positions = c.n_positions;
  s.eos_token_id = c.eos_token_id;
  s.norm_eps = c.layer_norm_epsilon;
  s.norm = DecoderNorm::layer_norm;
  s.mlp = DecoderMlp::gelu_new;
  s.positions = DecoderPositions::learned;
  s.layout = WeightLayout::in_out;  // Conv1D
  s.qkv_bias = s.out_bias = s.mlp_bias = true;
  s.tied_unembedding = true;
  return s;
}

}  // namespace attnlab
