// Llama (LlamaForCausalLM: SmolLM2, TinyLlama, Llama 3.2) and Qwen2 (Qwen2ForCausalLM: Qwen2.5) as rows
// of the one decoder (decoder.h): RMSNorm, the gated SiLU MLP, rotary positions (rope_theta,
// rope_scaling), Hkv key/value heads shared by groups of query heads, nn.Linear weights ([out, in]), the
// unembedding tied to the token embedding or lm_head of its own. Llama's biases are attention_bias (q, k,
// v and o) and mlp_bias; Qwen2's are on q, k and v only. Their tensors' names are decoder_names.cpp's
// "llama" and "qwen2" rows. LlamaModel adds config.json's record to the decoder, as Gpt2Model does.
#pragma once

#include "decoder.h"
#include "llama_config.h"

namespace attnlab {

// config.json -> the decoder's row; `weights`: how its projections and embeddings are held (float32,
// or the checkpoint's own BF16 / F16 when every one of them is stored so).
DecoderSpec llama_spec(const LlamaConfig& c, WeightFormat weights = WeightFormat::f32);

// config.model_type's table of names exists: parse_llama_config has refused the config otherwise
// (find_decoder_names), so the kind never builds a model without one.
class LlamaModel : public Decoder {
 public:
  explicit LlamaModel(const LlamaConfig& config, WeightFormat weights = WeightFormat::f32)
      : Decoder(llama_spec(config, weights), *decoder_names(config.model_type)), c_(config) {}
  const LlamaConfig& config() const { return c_; }

 private:
  LlamaConfig c_;
};

}  // namespace attnlab
