// The Count lab's trainer ("One query", course notebook 05): the model of count_model.h on batches of
// fresh random sequences of S = 10 digits, binary cross-entropy averaged over the batch, Adam. Parameters
// carry PyTorch's state_dict names ("query", "embed.weight", ...), so weights move between this trainer
// and the notebook's AttentionModel unchanged.
//
// A CPU step is data-parallel (sharded_step.h): the batch is split into kShards halves, each run on its
// own copy of the model, and the gradients are added in shard order. The staged step (WebGPU) runs the
// same copies on the same rows around one kernel call over the whole batch, so it gives step()'s bits:
//   begin_step()  -> kernel forward  -> middle_step() -> kernel backward -> end_step()
#pragma once

#include <cstdint>
#include <vector>

#include "count_model.h"
#include "sharded_step.h"
#include "trainer.h"

namespace attnlab {

struct CountConfig {
  // Seed 0 is one of the 5 in 100 that get stuck at the notebook's lr (docs/count.md): a student's
  // first run should show the lesson, not the exception, so the lab starts from seed 2, which learns.
  std::uint32_t seed = 2;
  double lr = 1e-4;  // the notebook's
  int batch = 100;   // the notebook's make_batch(100)
  // The notebook's torch.nn.Embedding(10, 5), or its alternative, one-hot + torch.nn.Linear(10, 5)
  // (records: "embedding": "embedding" or "one-hot"; count_model.h says what differs).
  CountEmbedding embedding = CountEmbedding::lookup;
  // The notebook's embed_dim, att_dim and the head's hidden width (records: embedDim, attDim, hidden).
  CountSizes sizes;
};

// The sizes' ranges, and the memory a step's tensors may take (checked together with the batch: each
// setting may be in range while their product is not).
constexpr int kCountMaxEmbedDim = 64, kCountMaxAttDim = 64, kCountMaxHidden = 1024;
constexpr double kCountMemoryBudget = 64.0 * 1024 * 1024;
// About what training with these settings allocates: the kernel's tensors, the head's rows, the evaluation's
// chunks and the parameters with their gradients and Adam's moments.
double count_training_bytes(const CountConfig& c);

// "" or the first problem with the config's values.
std::string validate_count_config(const CountConfig& c);

// N sequences of S digits drawn uniformly from 0..9 and their labels (count_label).
void sample_count_batch(Rng& rng, int n, std::vector<std::int32_t>& tokens, std::vector<float>& labels);

struct CountEvaluation {
  int samples = 0;
  double accuracy = 0.0;
  double tie_accuracy = 0.0;  // on the sequences with as many 2s as 4s (label 0); 0 when there are none
  int ties = 0;
  double loss = 0.0;
  double mass_on_24 = 0.0;          // mean attention weight on the positions that hold a 2 or a 4
  double uniform_mass_on_24 = 0.0;  // the same for uniform attention: mean (count(2) + count(4)) / S
  double majority = 0.0;            // accuracy of always answering 0
};

// N sequences' forward pass: N = 1 for {tokens}, N = 5 for the fixed sample.
struct CountInspection {
  int N = 0;
  std::vector<float> weights;     // [N, S]
  std::vector<float> values;      // [N, S] each position's value WV(embed(x))
  std::vector<float> weighted;    // [N] the attention-weighted value a
  std::vector<float> probability; // [N] the sigmoid output
  std::vector<std::int32_t> label;  // [N] the true answer, 0 or 1
  double loss = 0.0;              // binary cross-entropy averaged over the N
};

class CountTrainer : public SingleCallTrainer {
 public:
  static constexpr int S = CountShape::S;
  static constexpr int kShards = ShardedModels<CountModel>::kShards;
  static constexpr int kFixedSamples = 5;           // data_record("fixedSample")
  static constexpr int kDefaultEvalSamples = 10000;
  static constexpr int kMaxEvalSamples = 100000;    // evaluate_record() clamps {samples} to [1, this]
  static constexpr int kMaxInspectSequences = 10000;  // inspect_record({batch})
  static constexpr int kEvalChunk = 1000;           // sequences per forward pass of evaluate()

  explicit CountTrainer(const CountConfig& config);  // validate_count_config first

  // ---- configs as records (JS names: seed, lr, batch), for the registry
  static std::string config_error(const Json& config);
  static CountConfig config_from(const Json& config);  // config_error first
  static Json config_to_record(const CountConfig& config);
  static Json defaults(const std::string& variant);  // with steps: 5001, the notebook's

  const CountConfig& config() const { return config_; }
  int steps_done() const override { return training_.steps_done(); }
  void set_lr(double lr) override;

  StepMetrics step(Backend backend) override;
  // One step on a batch the caller gives (tokens [batch, S] in [0, 10)), instead of the next fresh one:
  // the tests' way to train on PyTorch's batch.
  StepMetrics step_on(const std::vector<std::int32_t>& tokens, Backend backend);
  void begin_step() override;
  void middle_step() override;
  StepMetrics end_step() override;
  AttentionForward kernel_forward_args() override { return step_tensors_.forward_args(0, config_.batch); }
  AttentionBackward kernel_backward_args() override { return step_tensors_.backward_args(0, config_.batch); }
  bool kernel_reads_weights() const override { return false; }

  // On `samples` fresh sequences from the seed's evaluation stream: the same sequences at every call.
  CountEvaluation evaluate(int samples, Backend backend);
  // The forward pass on N sequences (tokens [N, S]); "" or what is wrong with them.
  std::string inspect(const std::vector<std::int32_t>& tokens, Backend backend, CountInspection& out);
  // The loss's gradient on N sequences, left in the parameters' gradients (the values unchanged; the
  // next step zeroes them): the tests' way to compare gradients with PyTorch through the binding.
  std::string gradients_on(const std::vector<std::int32_t>& tokens, Backend backend, double& loss);
  // The 5 sequences every attention panel of a run shows (drawn once from the seed).
  const std::vector<std::int32_t>& fixed_sample() const { return fixed_sample_; }

  ParameterList parameters() override { return model().parameters(); }
  CountModel& model() { return training_.models.primary(); }

  // ---- Trainer's records (docs/api.md)
  // {seed, lr, batch, length: 10, digits: 10}
  Json config_record() const override;
  // {samples}: -> {samples, accuracy, tieAccuracy, ties, loss, massOn24, uniformMassOn24, majority}
  std::string evaluate_record(const Json& options, Backend backend, Json& out) override;
  // {tokens: [S]} or {batch: [N*S]} [, gradients: true] -> {N, weights, values, weighted, probability,
  // label, loss} (weights, values [N, S], the rest [N]; for {tokens} N = 1)
  std::string inspect_record(const Json& input, Backend backend, Json& out) override;
  // "fixedSample" -> {tokens: Int32Array [5 * S]}
  std::string data_record(const std::string& part, Json& out) const override;

 private:
  StepMetrics finish_step(double loss_sum, int correct);
  void run_shards(const std::vector<std::int32_t>& tokens, Backend backend);

  CountConfig config_;
  Rng data_rng_;
  ShardedTraining<CountModel> training_;  // copy 0 owns the parameters; one per shard
  CountKernelTensors step_tensors_;       // the training batch's kernel tensors, shared by the shards
  std::vector<CountKernelTensors> eval_tensors_;  // per shard, for evaluate() and inspect()
  std::vector<std::int32_t> tokens_, fixed_sample_;
  std::vector<float> labels_;
  double last_loss_sum_ = 0.0;
};

}  // namespace attnlab
