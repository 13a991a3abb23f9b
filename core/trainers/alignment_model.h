// One copy of the Alignment lab's model (the course notebook's CrossAttnSeqClassifier) with the
// activations of the last batch it saw:
//   K = tok(keys) + in_pos,  V = tok(values) + in_pos       [B, S, E]
//   Q = out_pos (+ tok(query key) for pointer)              [B, T, E]
//   ctx, weights = MultiheadAttention(Q, K, V)              cross-attention, E = d_model
//   logits = Linear(ctx)                                    [B, T, vocab]
// The trainer keeps one copy per shard of a batch: copy 0 owns the parameters that Adam updates, the
// others take their values before each step and hand back their gradients.
//
// Passes run in stages so that the attention kernel in the middle can run anywhere (WebGPU runs in JS):
//   embed() -> kernel forward -> head_forward() [-> loss_backward() -> kernel backward -> finish_backward()]
#pragma once

#include "../layers/embedding.h"
#include "../layers/linear.h"
#include "../layers/multihead_attention.h"
#include "alignment_task.h"

namespace attnlab {

class AlignmentModel {
 public:
  AlignmentModel(const AlignmentConfig& config, Rng& init_rng);

  ParameterList parameters();  // state_dict order, PyTorch names
  void zero_grad();

  void embed(const AlignmentBatch& batch);  // through the attention's projections
  void head_forward(const AlignmentBatch& batch);
  // Cross-entropy of the logits, normalised by `token_count` (the whole batch's, when this is a shard
  // of it), and the backward pass down to the attention kernel. Returns the shard's summed loss.
  double loss_backward(const AlignmentBatch& batch, double token_count);
  void finish_backward(const AlignmentBatch& batch);
  // The whole training pass on a CPU kernel.
  double train_pass(const AlignmentBatch& batch, Backend backend, double token_count);

  int correct_predictions(const AlignmentBatch& batch) const;  // argmax of the logits == target
  MultiheadAttention& mha() { return attn_; }
  const RowMatrix& logits() const { return logits_; }

 private:
  void backward_embeddings(const AlignmentBatch& batch);

  AlignmentConfig config_;
  Embedding tok_emb_, in_pos_emb_, out_pos_emb_;
  MultiheadAttention attn_;
  Linear out_;
  RowMatrix query_in_, key_in_, value_in_, logits_, d_logits_, d_ctx_;
};

}  // namespace attnlab
