// One copy of the Induction lab's model: a decoder-only transformer laid out as TransformerLens's
// HookedTransformer, so its parameters are a HookedTransformer's state_dict (names, shapes, order).
// Shapes (shape.h's legend): B sequences of T tokens, N = B T rows, E = d_model, H heads of D = d_head,
// F = d_mlp = 4 E, V the vocabulary, L layers.
//
//   resid_pre[0] = W_E[tokens] + W_pos[0 .. T)                                           [N, E]
//   each block l:
//     a = ln1(resid_pre[l])              (LayerNorm, or a itself without)                 [N, E]
//     q, k, v = a W_Q[h] + b_Q[h], ...   per head                                         [B, H, T, D]
//     pattern = softmax(q k^T / sqrt(D) + causal mask): the kernel, one call a layer       [B, H, T, T]
//     z = pattern v;  attn_out = sum_h z[h] W_O[h] + b_O                                   [N, E]
//     resid_mid = resid_pre[l] + attn_out
//     with the MLP: resid_post = resid_mid + gelu(ln2(resid_mid) W_in + b_in) W_out + b_out
//   logits = ln_final(resid_pre[L]) W_U + b_U                                            [N, V]
//   loss = mean over every position t < T-1 of cross_entropy(logits[t], tokens[t + 1])
//
// It is built from the core's layers, not a copy of them: the attention is nn.MultiheadAttention's
// layer (multihead_attention.h) with head_dim D, the MLP and the unembedding are Linear layers in
// TransformerLens's [in, out] layout, the norms are LayerNorm, the embeddings Embedding. The attention
// layer keeps nn.MultiheadAttention's packed projections (in_proj_weight [3HD, E], out_proj.weight
// [E, HD]); TransformerLens's per-head W_Q [H, E, D], W_O [H, D, E] and b_Q [H, D] are this model's
// parameters (what Adam updates, what a file holds), packed into the layer before each pass and the
// layer's gradients copied back into theirs after it (pack_attention, unpack_attention_grads). b_O is
// the layer's own out_proj.bias, renamed.
//
// A pass runs in stages around the kernel, one attention call a layer (staged_forward.h): forward calls
// in layer order, then, for a training pass, backward calls in reverse order. run() does them on a CPU
// backend in the layers' own buffers; the staged calls let the kernel run outside C++ (WebGPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../layers/embedding.h"
#include "../layers/head_ablation.h"
#include "../layers/layer_norm.h"
#include "../layers/linear.h"
#include "../layers/multihead_attention.h"
#include "../rng.h"
#include "../staged_forward.h"
#include "induction_task.h"

namespace attnlab {

class InductionModel : public StagedForward {
 public:
  // vocab: induction_vocab_size(config). Draws the initial weights from init_rng as TransformerLens's
  // init_mode "gpt2" does: every W_ ~ N(0, initializer_range = 0.8 / sqrt(d_model)), biases 0,
  // LayerNorm weights 1.
  InductionModel(const InductionConfig& config, int vocab, Rng& init_rng);

  int layers() const { return int(blocks_.size()); }
  int heads() const { return config_.heads; }
  int vocab() const { return vocab_; }
  int context() const { return config_.context; }
  // In TransformerLens's state_dict order and names.
  ParameterList parameters();

  // ---- a pass over a batch (T <= context)
  // Training: forward, the loss of every target, backward. token_count scales the gradient (the whole
  // batch's targets, when this copy has one shard of it: the shards' gradients add up to the batch's).
  // This copy's gradients are set, not added to.
  void begin_training(const InductionBatch& batch, double token_count);
  // Looking: forward only, with the heads of `off` switched off (their z zeroed) for this pass alone.
  void begin_looking(const InductionBatch& batch, const HeadAblation* off = nullptr);
  // Every remaining call of the pass on a CPU backend, in the layers' own buffers.
  void run(Backend backend);
  bool done() const { return stage_ == Stage::done; }

  // The staged calls (staged_forward.h).
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* out) override;
  std::string check_pending() const override;
  bool needs_weights() const override { return !training_; }
  bool next_backward(AttentionBackward& call) override;
  void finish_backward(const float* d_q, const float* d_k, const float* d_v) override;

  // ---- the last pass's results
  double loss_sum() const { return loss_sum_; }
  // Each target's loss [B, T-1]: row b, column t is the loss of predicting tokens[b][t + 1].
  const std::vector<float>& target_losses() const { return target_losses_; }
  const std::vector<float>& pattern(int layer) const { return blocks_[std::size_t(layer)]->attn.weights(); }  // [B, H, T, T]
  const RowMatrix& logits() const { return logits_; }  // [N, V]

 private:
  struct Block {
    Block(const InductionConfig& c, int layer, Rng& rng);
    std::unique_ptr<LayerNorm> ln1, ln2;  // null without LayerNorm (ln2: and without the MLP)
    MultiheadAttention attn;
    Parameter W_Q, W_K, W_V, W_O, b_Q, b_K, b_V;  // TransformerLens's; b_O is attn.out_proj_bias
    std::unique_ptr<Linear> mlp_in, mlp_out;    // null without the MLP
    // The pass's activations (TransformerLens's hook names in the comments)
    RowMatrix normalized;        // ln1.hook_normalized, the attention's input [N, E] (with LayerNorm)
    RowMatrix resid_mid;         // hook_resid_mid [N, E] (with the MLP)
    RowMatrix mlp_normalized;    // ln2.hook_normalized [N, E]
    RowMatrix mlp_pre, mlp_post; // mlp.hook_pre, mlp.hook_post [N, F]
    bool weights_kept = false;   // the kernel's weights of this pass are in attn's buffer
  };
  enum class Stage { idle, forward, backward, done };

  void begin(const InductionBatch& batch, bool training, const HeadAblation* off);
  void prepare_layer(int l);
  void after_forward(int l);
  void after_backward(int l);
  void head_and_loss();
  void backward_mlp(int l);
  void pack_attention(Block& b);
  void unpack_attention_grads(Block& b);

  InductionConfig config_;
  int vocab_;
  Embedding embed_, pos_embed_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::unique_ptr<LayerNorm> ln_final_;
  Linear unembed_;
  std::vector<float> causal_mask_;  // [T, T] of the pass: 0 on and below the diagonal, -inf above

  // The pass
  Stage stage_ = Stage::idle;
  int layer_ = 0;  // the layer whose call is pending
  bool training_ = false;
  double token_count_ = 1.0;
  HeadAblation off_;
  const std::int32_t* tokens_ = nullptr;
  int B_ = 0, T_ = 0;
  std::vector<RowMatrix> resid_pre_;  // blocks.l.hook_resid_pre, l = 0 .. L (L: the last resid_post)
  RowMatrix final_, logits_, d_logits_, d_resid_, d_tmp_, d_mlp_;
  std::vector<float> target_losses_;
  double loss_sum_ = 0.0;
};

}  // namespace attnlab
