// The Induction lab's trainer (induction_model.h on the data of induction_task.h): the mean next-token
// cross-entropy over every position, torch.optim.Adam. Parameters are a HookedTransformer's state_dict,
// so a trained model loads into TransformerLens unchanged (docs/induction.md).
//
// A CPU step is data-parallel, like every lab's (sharded_step.h): the batch split into two halves, each
// on its own copy of the model, the gradients added in shard order, so a seed reproduces a run bit for
// bit on one backend with or without threads. A staged step (the WebGPU kernel) runs the whole batch on
// copy 0, one attention call a layer forward and one a layer backward.
//
// The data: fresh sequences of the task every step (its own stream of the seed), or the sequences the
// caller gives (set_data_record: --data), step k training on sequences kB .. kB+B-1 in order, from the
// first again after the last (the epochs).
//
// Beside the training it keeps the timeline (induction_timeline.h): every few steps, every head's scores
// on 16 probe sequences of the repeat task, drawn once from the seed.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "induction_model.h"
#include "induction_scores.h"
#include "induction_task.h"
#include "induction_timeline.h"
#include "sharded_step.h"
#include "trainer.h"

namespace attnlab {

// The figures of the model on a batch (evaluate_record): its losses, every head's scores, and the
// in-context learning score (Olsson et al. 2022: the loss late in the sequence less the loss early,
// there at tokens 500 and 50 of 512; here at the last target and at a tenth of the way).
struct InductionEvaluation {
  int samples = 0;
  double loss = 0.0, accuracy = 0.0;
  double repeat_loss = 0.0, rest_loss = 0.0;  // NaN for the text task (no repeat)
  std::vector<float> position_loss;           // [T-1]: the mean loss of each target position
  double icl_score = 0.0;
  int early_position = 1, late_position = 1;  // the targets the score compares
  HeadScores scores;
};

struct InductionInspection {
  int layers = 0, heads = 0, T = 0;
  std::vector<std::int32_t> tokens;     // [T]
  std::vector<float> weights;           // [L, H, T, T]
  std::vector<std::int32_t> predictions;  // [T]: the most likely next token at each position
  std::vector<float> confidence;        // [T]: its probability
  std::vector<float> losses;            // [T-1]: each target's loss
};

class InductionTrainer : public Trainer {
 public:
  static constexpr int kShards = ShardedModels<InductionModel>::kShards;
  static constexpr int kProbeSequences = 16;
  static constexpr int kEvalChunk = 64;
  static constexpr int kMaxEvalSamples = 4096;
  static constexpr int kDefaultEvalSamples = 256;
  static constexpr long kMaxDataTokens = 10000000;  // --data: 40 MB of ids

  explicit InductionTrainer(const InductionConfig& config);  // config_error first

  // ---- configs as records (JS names: task, layers, heads, dModel, dHead, mlp, layerNorm, vocab,
  // context, batch, lr, seed, text)
  static std::string config_error(const Json& config);
  static InductionConfig config_from(const Json& config);  // config_error first
  static Json config_to_record(const InductionConfig& config);  // with the default step count ("steps")
  static Json defaults(const std::string& task);
  static int default_steps(const InductionConfig& config);

  const InductionConfig& config() const { return config_; }
  int vocab() const { return vocab_; }
  int steps_done() const override { return training_.steps_done(); }
  int epoch() const override;
  void set_lr(double lr) override;

  StepMetrics step(Backend backend) override;
  std::unique_ptr<StagedStep> staged_step() override;

  InductionEvaluation evaluate(int samples, const HeadAblation* off, Backend backend);
  std::string inspect(const std::vector<std::int32_t>& tokens, Backend backend, InductionInspection& out);
  const InductionTimeline& timeline() const { return timeline_; }
  // The sequence the page draws every head's attention on: the start token and n random tokens repeated
  // once (n = (context - 1) / 2), so that an induction head's stripe runs along offset n - 1.
  const InductionBatch& fixed_sample() const { return fixed_sample_; }
  // "" or what is wrong with the sequences (each of `context` ids in [0, vocab)); the trainer is
  // unchanged on a refusal. Steps then train on them in order.
  std::string set_sequences(const Json& sequences);

  ParameterList parameters() override { return model().parameters(); }

  // ---- Trainer's records
  Json config_record() const override;
  // options {samples, ablate: ["L.H", ...] or [[L, H], ...]} -> the evaluation in JS names
  std::string evaluate_record(const Json& options, Backend backend, Json& out) override;
  // {tokens} -> {layers, heads, T, tokens, weights [L,H,T,T], predictions, confidence, losses}
  std::string inspect_record(const Json& input, Backend backend, Json& out) override;
  // "fixedSample" -> {tokens, copyStart, segment}; "timeline" -> the points and the phase change;
  // "lastStep" -> the last step's batch losses {step, loss, repeatLoss, restLoss}
  std::string data_record(const std::string& part, Json& out) const override;
  std::string set_data_record(const Json& input) override;

 private:
  friend class InductionStagedStep;
  InductionModel& model() { return training_.models.primary(); }
  const InductionModel& model() const { return training_.models.primary(); }
  void next_batch();
  StepMetrics finish_step(double loss_sum, double correct);
  void record_batch(const std::vector<float>& losses, const InductionBatch& batch);
  void probe(Backend backend);

  InductionConfig config_;
  TextIds text_;
  int vocab_;
  Rng data_rng_;
  ShardedTraining<InductionModel> training_;
  InductionBatch batch_, fixed_sample_, probe_;
  std::vector<InductionBatch> shards_;
  std::vector<std::int32_t> sequences_;  // given data [count, context], or empty
  long sequences_used_ = 0;              // sequences trained on so far
  std::size_t parameter_count_ = 0;
  InductionTimeline timeline_;
  std::array<float, 3> last_step_ = {0.0f, 0.0f, 0.0f};  // the last step's mean loss, on the repeat, on the rest (NaN: none)
};

}  // namespace attnlab
