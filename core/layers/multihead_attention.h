// nn.MultiheadAttention(E, H, dropout=0, batch_first=True) with PyTorch's parameter layout:
//   in_proj_weight [3E, E]  (rows 0..E-1 project queries, E..2E-1 keys, 2E..3E-1 values)
//   in_proj_bias   [3E]
//   out_proj.weight [E, E], out_proj.bias [E]
// With a head_dim D other than E / H (TransformerLens's d_head, which need not divide d_model), each
// E above that counts the heads' columns is H D: in_proj_weight [3HD, E], out_proj.weight [E, HD].
// query [B, T, E], key and value [B, S, E] (separate inputs: self- and cross-attention alike).
//
// kv_shared: one key/value sequence [S, E] for every batch element (the Lookup lab's database). K and
// V are projected once, and the kernel sees one problem of B*T queries per head, [1, H, B*T, S, D]:
// the same scores, and the keys' and values' gradients come out summed over the batch. shape() is
// the kernel's problem; weights() is still [B, H, T, S].
//
// The work runs in stages so that the attention kernel in the middle can run on any backend,
// including WebGPU in JS, which cannot be awaited from C++:
//   forward:  prepare() -> kernel (attention_forward or JS) -> finish_forward()
//   backward: begin_backward() -> kernel (attention_backward or JS) -> finish_backward()
// forward() and backward() chain the stages for the CPU backends.
#pragma once

#include <vector>

#include "../attention.h"
#include "../rng.h"
#include "parameter.h"

namespace attnlab {

struct MhaInputs {
  int B = 0, T = 0, S = 0;
  const float* query = nullptr;             // [B, T, E], or [T, E] if query_shared
  const float* key = nullptr;               // [B, S, E], or [S, E] if kv_shared
  const float* value = nullptr;             // [B, S, E], or [S, E] if kv_shared
  const float* key_padding_mask = nullptr;  // additive [B, S], or nullptr
  const float* attn_mask = nullptr;         // additive [T, S], or [B*H, T, S] if per_head
  bool attn_mask_per_head = false;
  // One query sequence for every batch element (e.g. output-position embeddings): projected once
  // instead of B times, and its gradients are summed over the batch. d_query() is then [T, E].
  bool query_shared = false;
  // One key/value sequence for every batch element (see the header comment). No masks, and not
  // together with query_shared. d_key() and d_value() are then [S, E].
  bool kv_shared = false;
};

class MultiheadAttention {
 public:
  // head_dim 0: E / H, as nn.MultiheadAttention.
  MultiheadAttention(int embed_dim, int num_heads, Rng& rng, int head_dim = 0);

  int embed_dim() const { return E_; }
  int num_heads() const { return H_; }
  int head_dim() const { return D_; }
  const AttentionShape& shape() const { return shape_; }

  void forward(const MhaInputs& in, Backend backend);
  // d_out [B, T, E], or nullptr when the loss does not use the output (the Lookup lab uses only the
  // weights): out_proj then gets no gradient, as PyTorch leaves its .grad None. d_weights
  // [B, H, T, S] or nullptr. Accumulates parameter gradients and writes d_query(), d_key(), d_value().
  void backward(const float* d_out, const float* d_weights, Backend backend);

  // Stages (see the header comment).
  void prepare(const MhaInputs& in);
  AttentionForward kernel_forward_args();
  void finish_forward();
  void begin_backward(const float* d_out, const float* d_weights);
  AttentionBackward kernel_backward_args();
  void finish_backward();

  // Results of the last forward/backward.
  const RowMatrix& output() const { return out_; }              // [B*T, E]
  const RowMatrix& merged_heads() const { return merged_; }     // [B*T, H D]: z, the heads side by side
  const std::vector<float>& weights() const { return weights_; }  // [B, H, T, S]
  const std::vector<float>& weights_mean() const { return weights_mean_; }  // [B, T, S]
  const RowMatrix& d_query() const { return d_query_; }         // [B*T, E] ([T, E] if shared)
  const RowMatrix& d_key() const { return d_key_; }             // [B*S, E] ([S, E] if kv_shared)
  const RowMatrix& d_value() const { return d_value_; }         // [B*S, E] ([S, E] if kv_shared)

  ParameterList parameters();  // in PyTorch's state_dict order

  Parameter in_proj_weight;
  Parameter in_proj_bias;
  Parameter out_proj_weight;  // "out_proj.weight"
  Parameter out_proj_bias;    // "out_proj.bias"

 private:
  void build_mask(const MhaInputs& in);

  int E_, H_, D_;
  AttentionShape shape_;                       // the kernel's problem
  int B_ = 0, T_ = 0;                          // the caller's batch and query length
  // Forward caches.
  RowMatrix x_query_, x_key_, x_value_;        // inputs, for the weight gradients
  std::vector<float> q_, k_, v_;               // heads [B, H, T|S, D]
  std::vector<float> mask_;                    // combined additive mask, see mask_view_
  AttentionMask mask_view_;
  std::vector<float> heads_out_, weights_, weights_mean_;
  std::vector<float> kernel_weights_;          // kv_shared: the kernel's [H, B*T, S] weights
  RowMatrix merged_, out_;
  // Backward buffers.
  RowMatrix d_merged_;
  std::vector<float> d_heads_out_, d_weights_, d_q_, d_k_, d_v_;
  bool has_d_weights_ = false;
  bool query_shared_ = false;
  bool kv_shared_ = false;
  RowMatrix d_query_, d_key_, d_value_;
};

}  // namespace attnlab
