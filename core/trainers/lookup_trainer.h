// The Lookup lab's trainer: the model of lookup_model.h on the data of lookup_data.h, the squared
// error of the retrieval averaged over B*P pixels, Adam. Parameters carry PyTorch's state_dict names
// ("img_mlp.0.weight", "mha.in_proj_weight", ...), so weights move between this trainer and the
// notebook's AttentionTest unchanged.
//
// A step takes the next batch of the epoch (the 7,900 training queries reshuffled every epoch, the
// last partial batch dropped, like the notebook's DataLoader(shuffle=True, drop_last=True)), embeds the
// database once, and splits the batch into kShards halves, each run on its own copy of the model (on
// two threads where the build has them, see shard_runner.h) with its queries' loss terms
// (lookup_query_terms: D x and |x|^2, computed the first time a query is drawn and kept for the run). Gradients are added in shard order, and
// the database's embedding and its backward are split by rows in a way that gives the same bits, so a
// seed reproduces a run bit for bit on one backend, with or without threads.
//
// A WebGPU step runs in stages on the whole batch, with the attention kernel in JS:
//   begin_step()  -> kernel forward  -> middle_step() -> kernel backward -> end_step()
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lookup_data.h"
#include "lookup_model.h"
#include "sharded_step.h"
#include "trainer.h"

namespace attnlab {

// epoch: 1 for the first pass over the training queries; loss: MSE of the retrieval on the training
// batch; accuracy: share of the batch whose highest-weight database image has the query's label (top-1).
using LookupStepMetrics = StepMetrics;

struct LookupEvaluation {  // on the held-out queries
  int queries = 0;
  double top1 = 0.0;   // label of the highest-weight database image == the query's
  double top10 = 0.0;  // precision: share of the 10 highest-weight images with the query's label
  double mse = 0.0;    // retrieval vs query, mean over queries and pixels
  // Baselines from the data alone (lookup_data.h):
  double mean_image_mse = 0.0;
  double nearest_neighbour_top1 = 0.0;
  double nearest_neighbour_mse = 0.0;
  double chance = 0.0;
};

struct LookupInspection {  // one query
  int H = 0, S = 0, P = 0;
  int label = -1;                   // the query's label for a held-out image, -1 for one of your own
  std::vector<float> weights;       // [H, S] each head's weights over the database
  std::vector<float> weights_mean;  // [S] their mean, which the retrieval uses
  std::vector<float> retrieval;     // [P] normalised pixels
  std::vector<int> top_index;       // [10] database indices, highest head-mean weight first (ties: lower index)
  std::vector<int> top_label;       // [10]
  std::vector<float> top_weight;    // [10]
};

class LookupTrainer : public SingleCallTrainer {
 public:
  static constexpr int kShards = ShardedModels<LookupModel>::kShards;
  static constexpr int kTopK = 10;

  // validate_lookup_data(data) and validate_lookup_config(config, data.training.count()) first.
  LookupTrainer(const LookupConfig& config, LookupData data);

  // ---- configs as records (JS names: seed, heads, embedDim, batch, lr), for the registry
  // "" or the first problem with `config` (a Json object; absent fields take the notebook's values) on
  // these digits: a field of the wrong type, the split, then validate_lookup_config's message in JS names.
  static std::string config_error(const Json& config, const MnistAsset& digits);
  static LookupConfig config_from(const Json& config);  // config_error first
  static Json config_to_record(const LookupConfig& config);
  static Json defaults();  // with the notebook's step count ("steps": 10 epochs of 60,000 at batch 64)

  const LookupConfig& config() const { return config_; }
  const LookupData& data() const { return data_; }
  const LookupDatabase& database() const { return database_; }
  int steps_done() const override { return training_.steps_done(); }
  int epoch() const override { return epoch_; }
  int steps_per_epoch() const { return steps_per_epoch_; }  // training queries / batch, rounded down
  // The last batch: indices into data().training, in the order of the batch's rows.
  const std::vector<int>& batch_index() const { return batch_index_; }
  void set_lr(double lr) override;

  LookupStepMetrics step(Backend backend) override;
  // Stages of step(); between them the kernel runs on kernel_forward_args() /
  // kernel_backward_args() (mha()'s buffers). evaluate() and inspect() may not run in between.
  void begin_step() override;
  void middle_step() override;
  LookupStepMetrics end_step() override;
  MultiheadAttention& mha() { return training_.models.primary().mha(); }
  AttentionForward kernel_forward_args() override { return mha().kernel_forward_args(); }
  AttentionBackward kernel_backward_args() override { return mha().kernel_backward_args(); }
  // The retrieval is the attention weights times the database images: the model needs the weights.
  bool kernel_reads_weights() const override { return true; }

  // Every held-out query, against the current parameters.
  LookupEvaluation evaluate(Backend backend);
  // One query: `size` normalised pixels (P of them, in [-1, 1] for images like the data's), or the
  // held-out image `index`. Return "" or what is wrong with the input; `out` is filled only on "".
  std::string inspect(const float* query, std::size_t size, Backend backend, LookupInspection& out);
  std::string inspect_held_out(int index, Backend backend, LookupInspection& out);

  ParameterList parameters() override;  // state_dict order, PyTorch names

  // ---- Trainer's records
  // {seed, heads, embedDim, batch, lr, stepsPerEpoch, pixels, databaseImages, heldOutImages, trainingImages}
  Json config_record() const override;
  // options: none -> {queries, top1, top10, mse, meanImageMse, nearestNeighbourTop1, nearestNeighbourMse, chance}
  std::string evaluate_record(const Json& options, Backend backend, Json& out) override;
  // {heldOut: index} or {pixels: P normalised values} -> {H, S, P, label, weights [H,S], weightsMean [S],
  // retrieval [P], topIndex [10], topLabel [10], topWeight [10]}
  std::string inspect_record(const Json& input, Backend backend, Json& out) override;
  // "database" | "heldOut" | "training" -> {pixels: [N, P] bytes, labels: [N] bytes}
  std::string data_record(const std::string& part, Json& out) const override;

 private:
  LookupModel& model() { return training_.models.primary(); }
  void next_batch();
  void load_batch_rows(int first, int count, int shard);
  void embed_database();
  void database_backward();
  int batch_hits(int shard) const;
  LookupStepMetrics finish_step(double squared_error, int hits);

  LookupConfig config_;
  LookupData data_;
  LookupDatabase database_;
  Rng epoch_rng_;
  ShardedTraining<LookupModel> training_;  // copy 0 owns the parameters; one per shard
  std::vector<int> epoch_order_;  // training indices, reshuffled every epoch
  std::vector<int> batch_index_;  // the batch's training indices
  RowMatrix queries_;             // [B, P] the batch, normalised
  std::vector<double> batch_images_x_;  // [B, S] the batch's D x, from the cache below
  std::vector<double> batch_norm2_;     // [B] the batch's |x|^2
  // lookup_query_terms() of every training query, filled as they are first drawn (the first epoch)
  std::vector<double> training_images_x_;  // [training queries, S]
  std::vector<double> training_norm2_;     // [training queries]
  std::vector<std::uint8_t> has_terms_;    // [training queries] 1 once computed
  // per shard: the batch rows whose queries are new, those queries and their terms (load_batch_rows)
  std::vector<std::vector<int>> fresh_rows_;
  std::vector<RowMatrix> fresh_queries_;
  std::vector<std::vector<double>> fresh_images_x_, fresh_norm2_;
  std::vector<RowMatrix> eval_queries_;  // per shard, a chunk of held-out queries
  std::optional<LookupBaselines> baselines_;
  double last_squared_error_ = 0.0;
  int steps_per_epoch_ = 0, batch_in_epoch_ = 0, epoch_ = 0;
};

}  // namespace attnlab
