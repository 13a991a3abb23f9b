// GPT-2 (Radford et al. 2019; Hugging Face's GPT2LMHeadModel in eval mode), forward only, with a
// key/value cache for writing. Shapes (shape.h's legend): n new tokens at positions past .. past+n-1,
// S = past + n keys, E = n_embd, H heads of D = E / H, F = n_inner, L layers, V the vocabulary.
//
//   embeddings   x = wte[ids] + wpe[past .. past+n)                                        [n, E]
//   each block   a = LayerNorm_1(x);  q, k, v = a W_attn + b_attn  (Conv1D: W is [in, out]) [H, n, D]
//                k, v appended to the layer's cache                               [H, S, D] of [H, C, D]
//                w = softmax(q k^T / sqrt D + causal mask)  (the attention kernel)        [H, n, S]
//                x = x + (w v, heads merged) W_proj + b_proj
//                x = x + gelu_new(LayerNorm_2(x) W_fc + b_fc) W_proj2 + b_proj2           [n, E]
//   head         logits = LayerNorm_f(x) wte^T   (tied unembedding)                        [n, V]
//
// A pass runs in stages around the attention kernel (staged_forward.h): begin_forward(ids) starts from
// an empty cache (the prompt), begin_step(id) appends one token to it (writing); each layer is then one
// attention call. forward() and step() run the calls on a CPU backend. The last pass's attention,
// residual stream (before LayerNorm_f, for the logit lens) and final states are kept for the views.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../backend.h"
#include "../layers/packed_linear.h"
#include "../tensor.h"
#include "checkpoint_model.h"
#include "gpt2_config.h"
#include "named_tensors.h"

namespace attnlab {

class Gpt2Model : public CheckpointModel {
 public:
  explicit Gpt2Model(const Gpt2Config& config);

  const Gpt2Config& config() const { return c_; }

  // ---- loading (gpt2_checkpoint.h's plan says which tensor goes where)
  float* storage(const std::string& canonical) override;
  // A Conv1D weight [in, out] in the file's layout (GPT-2 stores them transposed from nn.Linear's).
  bool set_linear_weight(const std::string& canonical, const float* w) override;

  // ---- passes
  // "" or what is wrong with the prompt (ids in [0, V), 1 <= T <= n_positions).
  std::string check_prompt(const std::int32_t* ids, int T) const;
  // "" or why the cache cannot take one more token `id` (a pass under way, no prompt yet, n_positions full).
  std::string check_step(std::int32_t id) const;
  void begin_forward(const std::int32_t* ids, int T);  // a checked prompt, from an empty cache
  void begin_step(std::int32_t id);                    // a checked token after the cache
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* context) override;
  std::string check_pending() const override;
  bool computed() const { return n_ > 0 && next_layer_ == c_.n_layer; }  // the pass is finished
  void forward(Backend backend, const std::int32_t* ids, int T);
  void step(Backend backend, std::int32_t id);

  // ---- the last pass's results
  int cached() const { return int(tokens_.size()); }            // S: every token the cache holds
  const std::vector<std::int32_t>& tokens() const { return tokens_; }
  int pass_length() const { return n_; }                         // n
  int pass_start() const { return past_; }                       // its first position
  const std::vector<float>& attention(int layer) const { return attention_[std::size_t(layer)]; }  // [H, n, S]
  const RowMatrix& residual(int l) const { return residual_[std::size_t(l)]; }  // [n, E]: l = 0 embeddings .. L
  // Logits [V] at row t of the last pass (its last row: the next token's).
  std::vector<float> logits(int t) const;
  // Any residual row [E] through LayerNorm_f and the unembedding (the logit lens) -> logits [V].
  std::vector<float> unembed(const float* residual) const;

 private:
  using Norm = LayerNormWeights;
  struct Block {
    Norm ln_1;
    PackedLinear attn, attn_proj;  // c_attn [E -> 3E], c_proj [E -> E]
    Norm ln_2;
    PackedLinear fc, mlp_proj;     // c_fc [E -> F], c_proj [F -> E]
  };
  void index_tensors();
  void embed(const std::int32_t* ids, int n);
  void project(int layer);
  void finish_layer(int layer, const float* weights, const float* context);

  Gpt2Config c_;
  RowMatrix wte_, wpe_;
  std::vector<Block> blocks_;
  Norm ln_f_;
  NamedTensors tensors_;

  // The cache and the last pass.
  std::vector<std::int32_t> tokens_;
  // Per layer [H, C, D]: each head's first S rows are its keys (values); C, the capacity, at least S.
  // A prompt's pass gets C = S (the contiguous layout a WebGPU call copies); a step that outgrows C
  // doubles it (up to n_positions), so writing a token moves the cache only at those steps, not at every
  // one (it moved every head's keys and values each step: a millisecond at 128 tokens).
  std::vector<std::vector<float>> cache_k_, cache_v_;
  int capacity_ = 0;
  int past_ = 0, n_ = 0;
  std::vector<float> q_;     // the layer being computed: [H, n, D]
  std::vector<float> mask_;  // [n, S]: 0 or -inf (none when n = 1: one query sees every key)
  std::vector<std::vector<float>> attention_;
  std::vector<RowMatrix> residual_;
  RowMatrix final_;  // LayerNorm_f of the last residual [n, E]
  int next_layer_ = 0;
  bool projected_ = false;
};

}  // namespace attnlab
