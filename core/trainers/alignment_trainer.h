// The Alignment lab's model and trainer, as the course notebook defines them
// (CrossAttnSeqClassifier):
//   K = tok(keys) + in_pos,  V = tok(values) + in_pos       [B, S, E]
//   Q = out_pos (+ tok(query key) for pointer)              [B, T, E]
//   ctx, weights = MultiheadAttention(Q, K, V)              cross-attention, E = d_model
//   logits = Linear(ctx)                                    [B, T, vocab]
//   loss = cross-entropy averaged over the B*T tokens; Adam.
// Parameters carry PyTorch's state_dict names ("tok_emb.weight", "attn.in_proj_weight", ...), so
// weights move between this trainer and the notebook's model unchanged.
//
// A step runs in stages so the attention kernel can run on any backend (WebGPU runs in JS):
//   begin_step()  -> kernel forward  -> middle_step() -> kernel backward -> end_step()
// step(backend) chains them with a CPU kernel. A seed reproduces a run bit for bit per backend.
#pragma once

#include <memory>
#include <vector>

#include "../layers/embedding.h"
#include "../layers/linear.h"
#include "../layers/multihead_attention.h"
#include "../optim/adam.h"
#include "alignment_task.h"

namespace attnlab {

struct StepMetrics {
  int step = 0;
  float loss = 0.0f;
  float accuracy = 0.0f;  // token accuracy on the training batch
};

struct AlignmentEvaluation {
  int samples = 0;
  double accuracy = 0.0;
  double loss = 0.0;
  double bayes_ceiling = 1.0;   // pointer: the best any model can do on this batch
  double pattern_mass = 0.0;    // head-mean weight on the diagonal / anti-diagonal / matching keys
  int best_head = 0;            // the head with the most weight on the pattern
  double best_head_mass = 0.0;
  std::vector<double> head_mass;  // per head
};

struct AlignmentInspection {
  int H = 0, T = 0, S = 0;
  std::vector<float> weights;       // [H, T, S]
  std::vector<float> weights_mean;  // [T, S]
  std::vector<std::int32_t> predictions;  // [T]
  std::vector<float> confidence;          // [T] softmax probability of the prediction
};

class AlignmentTrainer {
 public:
  explicit AlignmentTrainer(const AlignmentConfig& config);  // validate_alignment_config first

  const AlignmentConfig& config() const { return config_; }
  int steps_done() const { return steps_done_; }
  void set_lr(double lr);

  StepMetrics step(Backend backend);
  // Stages of step(); between them the kernel runs on mha().kernel_forward_args() /
  // kernel_backward_args() buffers.
  void begin_step();
  void middle_step();
  StepMetrics end_step();
  MultiheadAttention& mha() { return attn_; }

  // A fresh batch of `samples` from the seed's evaluation stream: the same batch at every call, so
  // evaluations during one run compare like with like.
  AlignmentEvaluation evaluate(int samples, Backend backend);
  // Forward pass on one sample (B = 1; lengths up to the trained ones), for heatmaps and
  // "type your own input". Returns "" or what is wrong with the sample.
  std::string inspect(const AlignmentBatch& sample, Backend backend, AlignmentInspection& out);
  std::string validate_sample(const AlignmentBatch& sample) const;
  // The sample every heatmap of a run shows (drawn once from the seed).
  const AlignmentBatch& fixed_sample() const { return fixed_sample_; }

  ParameterList parameters();  // state_dict order, PyTorch names

 private:
  void embed(const AlignmentBatch& batch);
  void head_forward(const AlignmentBatch& batch);
  void backward_embeddings(const AlignmentBatch& batch);

  AlignmentConfig config_;
  Rng init_rng_, data_rng_;
  Embedding tok_emb_, in_pos_emb_, out_pos_emb_;
  MultiheadAttention attn_;
  Linear out_;
  std::unique_ptr<Adam> adam_;
  AlignmentBatch batch_, fixed_sample_;
  RowMatrix query_in_, key_in_, value_in_, logits_, d_logits_, d_ctx_;
  float last_loss_ = 0.0f;
  int steps_done_ = 0;
};

}  // namespace attnlab
