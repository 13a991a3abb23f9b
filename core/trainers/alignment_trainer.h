// The Alignment lab's trainer: the model of alignment_model.h, cross-entropy averaged over the B*T
// tokens, Adam. Parameters carry PyTorch's state_dict names ("tok_emb.weight", ...), so weights move
// between this trainer and the notebook's model unchanged.
//
// A CPU step is data-parallel: the batch is split into kShards halves, each run on its own copy of
// the model (on two threads where the build has them, see shard_runner.h), and the gradients are
// added in shard order. The split is the same whether or not threads ran it, so a seed reproduces a
// run bit for bit on one backend in every build.
//
// A WebGPU step runs in stages on the whole batch, with the attention kernel in JS:
//   begin_step()  -> kernel forward  -> middle_step() -> kernel backward -> end_step()
#pragma once

#include <memory>
#include <vector>

#include "alignment_model.h"
#include "alignment_task.h"
#include "sharded_step.h"
#include "trainer.h"

namespace attnlab {

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

class AlignmentTrainer : public SingleCallTrainer {
 public:
  static constexpr int kShards = ShardedModels<AlignmentModel>::kShards;
  static constexpr int kEvalChunk = 128;  // samples per forward pass of evaluate()
  static constexpr int kMaxEvalSamples = 4096;  // evaluate_record() clamps {samples} to [1, this]

  explicit AlignmentTrainer(const AlignmentConfig& config);  // validate_alignment_config first

  // ---- configs as records (JS names: task, seed, dModel, heads, batch, lr, vocab, length, pairs,
  // keyRange, valueRange, uniqueKeys, positional), for the registry
  // "" or the first problem with `config` (a Json object; absent fields take the notebook's values):
  // a field of the wrong type, then validate_alignment_config's message in JS names.
  static std::string config_error(const Json& config);
  static AlignmentConfig config_from(const Json& config);  // config_error first
  // The config record, with the task's default step count ("steps").
  static Json config_to_record(const AlignmentConfig& config);
  static Json defaults(const std::string& task);  // an unknown task reads as copy

  const AlignmentConfig& config() const { return config_; }
  int steps_done() const override { return training_.steps_done(); }
  void set_lr(double lr) override;

  StepMetrics step(Backend backend) override;
  // Stages of step(); between them the kernel runs on kernel_forward_args() /
  // kernel_backward_args() (mha()'s buffers).
  void begin_step() override;
  void middle_step() override;
  StepMetrics end_step() override;
  MultiheadAttention& mha() { return training_.models.primary().mha(); }
  AttentionForward kernel_forward_args() override { return mha().kernel_forward_args(); }
  AttentionBackward kernel_backward_args() override { return mha().kernel_backward_args(); }
  bool kernel_reads_weights() const override { return false; }

  // A fresh batch of `samples` from the seed's evaluation stream: the same batch at every call, so
  // evaluations during one run compare like with like.
  AlignmentEvaluation evaluate(int samples, Backend backend);
  // Forward pass on one sample (B = 1; lengths up to the trained ones), for heatmaps and
  // "type your own input". Returns "" or what is wrong with the sample.
  std::string inspect(const AlignmentBatch& sample, Backend backend, AlignmentInspection& out);
  std::string validate_sample(const AlignmentBatch& sample) const;
  // The sample every heatmap of a run shows (drawn once from the seed).
  const AlignmentBatch& fixed_sample() const { return fixed_sample_; }

  ParameterList parameters() override;  // state_dict order, PyTorch names

  // ---- Trainer's records
  // {task..., steps, vocabSize, inLength, outLength}
  Json config_record() const override;
  // options {samples}: evaluate(samples) -> {samples, accuracy, loss, bayesCeiling, patternMass,
  // bestHead, bestHeadMass, headMass}
  std::string evaluate_record(const Json& options, Backend backend, Json& out) override;
  // {tokens} (copy, reverse) or {keys, values, query} (pointer) -> {H, T, S, weights [H,T,S],
  // weightsMean [T,S], predictions [T], confidence [T]}
  std::string inspect_record(const Json& input, Backend backend, Json& out) override;
  // "fixedSample" -> {keys, values, targets, query?}
  std::string data_record(const std::string& part, Json& out) const override;

 private:
  StepMetrics finish_step(double loss_sum, int correct);
  AlignmentModel& model() { return training_.models.primary(); }

  AlignmentConfig config_;
  Rng data_rng_;
  ShardedTraining<AlignmentModel> training_;  // copy 0 owns the parameters; one per shard
  AlignmentBatch batch_, fixed_sample_;
  std::vector<AlignmentBatch> shards_;
  double last_loss_sum_ = 0.0;
};

}  // namespace attnlab
