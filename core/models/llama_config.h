// The config.json of a Llama-style decoder (Hugging Face's LlamaConfig, model_type "llama": SmolLM2,
// TinyLlama, Llama 3.2; and Qwen2Config, model_type "qwen2": Qwen2.5): the sizes the weights must have,
// the rotary positions (rope_theta, rope_scaling), and the choices each kind allows. Messages start with
// "config.json" and name the field. What this decoder does not compute is refused by name: a rope_scaling
// other than null, "linear" or "llama3"; a sliding window (use_sliding_window: Qwen2's), named with its
// sliding_window; an activation other than SiLU.
#pragma once

#include <cstdint>
#include <string>

#include "../layers/rotary.h"
#include "config_json.h"
#include "model_memory.h"

namespace attnlab {

struct LlamaConfig {
  std::string model_type;   // "llama" or "qwen2"
  int vocab_size = 0;       // V (Qwen2.5's is padded past its tokenizer's: the extra rows are never drawn by the tokenizer)
  int hidden_size = 0;      // E
  int layers = 0;           // L (num_hidden_layers)
  int heads = 0;            // H (num_attention_heads)
  int kv_heads = 0;         // Hkv (num_key_value_heads; absent: H)
  int head_dim = 0;         // D (head_dim when given, else E / H)
  int intermediate_size = 0;  // F
  int max_positions = 0;    // P (max_position_embeddings)
  int eos_token_id = -1;    // the first of eos_token_id (a number or a list); -1: none in the vocabulary
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;     // none, linear or llama3
  bool attention_bias = false;  // llama: q, k, v and o; qwen2: q, k and v always, o never
  bool mlp_bias = false;        // llama only
  bool tie_word_embeddings = false;
  bool use_sliding_window = false;  // read to be refused: this decoder attends to every earlier token
  int stored_bytes = 4;  // per weight, as torch_dtype says they are stored: 2 (bfloat16, float16) or 4
  // Every weight the decoder holds, counted from its tensor table (decoder.h: decoder_weight_count).
  std::uint64_t weight_count = 0;
};

// The sizes its work memory depends on (model_memory.h).
WorkShape work_shape(const LlamaConfig& c);

// config.json's fields, declared once (config_json.h): read with their ranges and defaults (LlamaConfig's
// and Qwen2Config's), and written as the page's summary (the same names as GPT-2's). eos_token_id, a
// number or a list, and rope_scaling, an object, are read by parse_llama_config.
template <class Fields, class Config>
void llama_config_fields(Fields& f, Config& c) {
  f("vocabSize", c.vocab_size, FileInt{"vocab_size", 1, 1000000});
  f("hiddenSize", c.hidden_size, FileInt{"hidden_size", 1, 16384});
  f("layers", c.layers, FileInt{"num_hidden_layers", 1, 256});
  f("heads", c.heads, FileInt{"num_attention_heads", 1, 256});
  f("innerSize", c.intermediate_size, FileInt{"intermediate_size", 1, 65536});
  f("kvHeads", c.kv_heads, FileIntOr{"num_key_value_heads", 1, 256, c.heads});  // absent: multi-head
  // absent: E / H (heads is 0 only when its own row has failed, and nothing more is read)
  f("headDim", c.head_dim, FileIntOr{"head_dim", 1, 1024, c.heads > 0 ? c.hidden_size / c.heads : 0});
  f("maxPositions", c.max_positions, FileIntOr{"max_position_embeddings", 1, 1 << 20, c.model_type == "qwen2" ? 32768 : 2048});
  f("eosId", c.eos_token_id);
  f("ropeTheta", c.rope_theta, FilePositiveOr{"rope_theta", 1e12, 10000.0});
  f("tiedEmbeddings", c.tie_word_embeddings, FileBoolOr{"tie_word_embeddings", false});
  f(kNotShown, c.rms_norm_eps, FilePositiveOr{"rms_norm_eps", 1, 1e-6});
  f(kNotShown, c.use_sliding_window, FileBoolOr{"use_sliding_window", false});
  if (c.model_type != "qwen2") {  // Qwen2's biases are fixed (q, k and v): it has no such fields
    f(kNotShown, c.attention_bias, FileBoolOr{"attention_bias", false});
    f(kNotShown, c.mlp_bias, FileBoolOr{"mlp_bias", false});
  }
}

// config.json's text, for model_type "llama" or "qwen2" -> "" and `out`, or what is wrong.
std::string parse_llama_config(const std::string& text, const std::string& model_type, LlamaConfig& out);

}  // namespace attnlab
