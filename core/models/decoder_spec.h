// A causal decoder as a row of options (docs/style.md, point 6; llama.cpp's llm_build_* option enums):
// the sizes a config.json gives and the choice of each shared piece. decoder.h builds any row; a kind
// (gpt2.h, ...) is a function from its config.json to a DecoderSpec plus a table of tensor names
// (decoder_names.h). Shapes (shape.h's legend): V vocabulary, E model width, L layers, H query heads,
// Hkv key/value heads (H a multiple of Hkv: grouped-query attention; Hkv = H is multi-head), D head
// width, F the MLP's inner width, P the longest text.
#pragma once

#include <string>

#include "../layers/packed_linear.h"
#include "../layers/weight_layout.h"
#include "../layers/rotary.h"

namespace attnlab {

// LayerNorm: (x - mean) / sqrt(var + eps) * w + b.  RMSNorm: x / sqrt(mean(x^2) + eps) * w.  none: x
// (a TransformerLens model with normalization_type None, such as the Induction lab's default).
enum class DecoderNorm { layer_norm, rms_norm, none };
// gelu_new: down(gelu_tanh(up(x))).  gelu: down(gelu(up(x))), erf's GELU (TransformerLens's act_fn
// "gelu").  gated_silu: down(silu(gate(x)) * up(x)) (SwiGLU).  none: no MLP (attention only).
enum class DecoderMlp { gelu_new, gelu, gated_silu, none };
// learned: x = tok[id] + pos[p].  rotary: x = tok[id]; q and k turned by their position (rotary.h).
enum class DecoderPositions { learned, rotary };

struct DecoderSpec {
  int vocab_size = 0;   // V
  int n_embd = 0;       // E
  int n_layer = 0;      // L
  int n_head = 0;       // H
  int n_kv_head = 0;    // Hkv
  int head_dim = 0;     // D (usually E / H)
  int n_inner = 0;      // F
  int n_positions = 0;  // P
  int eos_token_id = -1;  // where writing stops; -1: none
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;  // rotary only: config.json's rope_scaling (rotary.h)

  DecoderNorm norm = DecoderNorm::layer_norm;
  DecoderMlp mlp = DecoderMlp::gelu_new;
  DecoderPositions positions = DecoderPositions::learned;
  WeightLayout layout = WeightLayout::out_in;
  // A bias on each projection: q, k and v (one flag: the fused c_attn's, or Qwen2's three), the
  // attention's output, the MLP's.
  bool qkv_bias = false, out_bias = false, mlp_bias = false;
  // The unembedding is the token embedding (GPT-2) or a tensor of its own (lm_head), with a bias of
  // its own or none (TransformerLens's b_U).
  bool tied_unembedding = true;
  bool output_bias = false;
  // How the projections and the token embedding / unembedding are held: float32, or a BF16 or F16
  // checkpoint's own 16 bits, widened to float32 inside the products (packed_linear.h). Norms and
  // biases are float32 always (a few thousand numbers).
  WeightFormat weights = WeightFormat::f32;

  int q_width() const { return n_head * head_dim; }     // H D
  int kv_width() const { return n_kv_head * head_dim; }  // Hkv D
  int group() const { return n_head / n_kv_head; }       // query heads per key/value head
  bool has_mlp() const { return mlp != DecoderMlp::none; }
  bool has_norm() const { return norm != DecoderNorm::none; }
};

// "" or what makes a spec unbuildable (a kind's config reader has named its fields already; this is the
// last check before the storage is allocated).
std::string check_decoder_spec(const DecoderSpec& s);

}  // namespace attnlab
