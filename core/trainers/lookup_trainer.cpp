#include "lookup_trainer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "../io/record.h"
#include "../shard_runner.h"
#include "../validate.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters (kInitStream, sharded_step.h), the epochs' shuffles
// (lookup_data.cpp draws the split on stream 3).
constexpr std::uint64_t kEpochStream = 2;
// Held-out queries per forward pass in evaluate(): bounds the activations at any held-out size.
constexpr int kEvalChunk = 250;

// Database indices of the k highest weights, highest first; equal weights by index.
void top_k(const float* w, int S, int k, std::vector<int>& out) {
  out.resize(S);
  std::iota(out.begin(), out.end(), 0);
  k = std::min(k, S);
  std::partial_sort(out.begin(), out.begin() + k, out.end(),
                    [w](int a, int b) { return w[a] > w[b] || (w[a] == w[b] && a < b); });
  out.resize(k);
}

}  // namespace

LookupTrainer::LookupTrainer(const LookupConfig& config, LookupData data)
    : config_(config),
      data_(std::move(data)),
      epoch_rng_(config.seed, kEpochStream),
      training_(config.seed, config.batch, config.lr, [this](Rng& init_rng) {
        return std::make_unique<LookupModel>(config_, data_.pixels, init_rng);
      }) {
  eval_queries_.resize(training_.models.shards());
  fresh_rows_.resize(training_.models.shards());
  fresh_queries_.resize(training_.models.shards());
  fresh_images_x_.resize(training_.models.shards());
  fresh_norm2_.resize(training_.models.shards());

  const int S = data_.database.count(), P = data_.pixels;
  database_.images.resize(S, P);
  normalise_pixels(data_.database.pixels.data(), data_.database.pixels.size(), database_.images.data());
  lookup_gram(database_);
  database_.labels = data_.database.labels;
  database_.embedded.resize(S, config.embed_dim);
  database_.d_embedded.resize(S, config.embed_dim);
  queries_.resize(config.batch, P);
  batch_images_x_.resize(std::size_t(config.batch) * S);
  batch_norm2_.resize(config.batch);
  training_images_x_.resize(std::size_t(data_.training.count()) * S);
  training_norm2_.resize(data_.training.count());
  has_terms_.assign(data_.training.count(), 0);
  batch_index_.resize(config.batch);
  epoch_order_.resize(data_.training.count());
  steps_per_epoch_ = data_.training.count() / config.batch;
  batch_in_epoch_ = steps_per_epoch_;  // the first step starts epoch 1
}

ParameterList LookupTrainer::parameters() { return model().parameters(); }

void LookupTrainer::set_lr(double lr) {
  config_.lr = lr;
  training_.set_lr(lr);
}

void LookupTrainer::next_batch() {
  if (batch_in_epoch_ == steps_per_epoch_) {  // a fresh permutation of the training queries (Fisher-Yates)
    std::iota(epoch_order_.begin(), epoch_order_.end(), 0);
    for (int i = int(epoch_order_.size()) - 1; i > 0; --i)
      std::swap(epoch_order_[i], epoch_order_[epoch_rng_.below(std::uint32_t(i + 1))]);
    batch_in_epoch_ = 0;
    ++epoch_;
  }
  const int B = config_.batch;
  for (int b = 0; b < B; ++b) batch_index_[b] = epoch_order_[std::size_t(batch_in_epoch_) * B + b];
  ++batch_in_epoch_;
}

void LookupTrainer::load_batch_rows(int first, int count, int shard) {
  // Rows [first, first + count) of the batch, by the shard that trains on them (so that two threads
  // share the work): the queries normalised, and the loss's terms, computed the first time a query is
  // drawn (those of the rows seen for the first time in one product), then copied from the cache. A
  // query appears once in a batch, so two shards never write the same cache entry.
  const int S = int(database_.images.rows()), P = data_.pixels;
  for (int b = first; b < first + count; ++b)
    normalise_pixels(&data_.training.pixels[std::size_t(batch_index_[b]) * P], P, queries_.row(b).data());
  std::vector<int>& fresh = fresh_rows_[shard];
  fresh.clear();
  for (int b = first; b < first + count; ++b)
    if (!has_terms_[batch_index_[b]]) fresh.push_back(b);
  if (!fresh.empty()) {
    const int n = int(fresh.size());
    RowMatrix& x = fresh_queries_[shard];
    std::vector<double>& images_x = fresh_images_x_[shard];
    std::vector<double>& norm2 = fresh_norm2_[shard];
    x.resize(n, P);
    images_x.resize(std::size_t(n) * S);
    norm2.resize(n);
    for (int i = 0; i < n; ++i) x.row(i) = queries_.row(fresh[i]);
    lookup_query_terms(x, database_, images_x.data(), norm2.data());
    for (int i = 0; i < n; ++i) {
      const int q = batch_index_[fresh[i]];
      std::copy_n(&images_x[std::size_t(i) * S], S, &training_images_x_[std::size_t(q) * S]);
      training_norm2_[q] = norm2[i];
      has_terms_[q] = 1;
    }
  }
  for (int b = first; b < first + count; ++b) {
    const int q = batch_index_[b];
    std::copy_n(&training_images_x_[std::size_t(q) * S], S, &batch_images_x_[std::size_t(b) * S]);
    batch_norm2_[b] = training_norm2_[q];
  }
}

void LookupTrainer::embed_database() {
  const int S = int(database_.images.rows());
  model().transpose_weight(database_);
  shard_runner().run(kShards, [&](int part) {
    const auto [first, count] = part_range(S, kShards, part);
    model().embed_database_rows(database_, first, count);
  });
}

void LookupTrainer::database_backward() {
  const int E = config_.embed_dim;
  shard_runner().run(kShards, [&](int part) {
    const auto [first, count] = part_range(E, kShards, part);
    model().database_backward_rows(database_, first, count);
  });
}

int LookupTrainer::batch_hits(int shard) const {
  const LookupModel& m = training_.models.shard(shard);
  const int first = training_.models.first(shard);
  int hits = 0;
  for (int b = 0; b < training_.models.count(shard); ++b)
    hits += database_.labels[m.best_match(b)] == data_.training.labels[batch_index_[first + b]];
  return hits;
}

LookupStepMetrics LookupTrainer::step(Backend backend) {
  next_batch();
  embed_database();
  const int shards = training_.models.shards(), S = int(database_.images.rows());
  const double pixel_count = double(config_.batch) * data_.pixels;
  double squared_errors[kShards] = {};
  training_.models.run([&](int s) {
    const int first = training_.models.first(s), count = training_.models.count(s);
    load_batch_rows(first, count, s);
    squared_errors[s] = training_.models.shard(s).train_pass(queries_.middleRows(first, count),
                                                    &batch_images_x_[std::size_t(first) * S], &batch_norm2_[first],
                                                    database_, backend, pixel_count);
  });
  double squared_error = 0.0;
  int hits = 0;
  for (int s = 0; s < shards; ++s) {  // in shard order, so the sums are the same bits every run
    if (s == 0) database_.d_embedded = training_.models.shard(s).d_database();
    else database_.d_embedded += training_.models.shard(s).d_database();
    squared_error += squared_errors[s];
    hits += batch_hits(s);
  }
  database_backward();
  return finish_step(squared_error, hits);
}

void LookupTrainer::begin_step() {
  next_batch();
  load_batch_rows(0, config_.batch, 0);
  model().zero_grad();
  embed_database();
  model().prepare(queries_, database_);
}

void LookupTrainer::middle_step() {
  model().finish_forward();
  last_squared_error_ =
      model().loss_backward(batch_images_x_.data(), batch_norm2_.data(), database_, double(config_.batch) * data_.pixels);
}

LookupStepMetrics LookupTrainer::end_step() {
  model().finish_backward(queries_);
  database_.d_embedded = model().d_database();
  database_backward();
  // the whole batch is "shard" 0 here
  int hits = 0;
  for (int b = 0; b < config_.batch; ++b)
    hits += database_.labels[model().best_match(b)] == data_.training.labels[batch_index_[b]];
  return finish_step(last_squared_error_, hits);
}

LookupStepMetrics LookupTrainer::finish_step(double squared_error, int hits) {
  const int steps_done = training_.finish_step();
  return {steps_done, epoch_, float(squared_error / (double(config_.batch) * data_.pixels)),
          float(double(hits) / config_.batch)};
}

LookupEvaluation LookupTrainer::evaluate(Backend backend) {
  if (!baselines_) baselines_ = lookup_baselines(data_);
  const int shards = training_.models.shards(), N = data_.held_out.count(), P = data_.pixels;
  const int S = int(database_.images.rows());
  training_.models.share_values();
  embed_database();
  struct Sums {
    double squared_error = 0.0;
    int top1 = 0, top10 = 0;
  };
  std::vector<Sums> sums(shards);
  shard_runner().run(shards, [&](int s) {
    LookupModel& m = training_.models.shard(s);
    RowMatrix& queries = eval_queries_[s];
    std::vector<int> top;
    const auto [first, count] = part_range(N, shards, s);
    for (int chunk = first; chunk < first + count; chunk += kEvalChunk) {
      const int B = std::min(kEvalChunk, first + count - chunk);
      queries.resize(B, P);
      normalise_pixels(&data_.held_out.pixels[std::size_t(chunk) * P], std::size_t(B) * P, queries.data());
      m.prepare(queries, database_);
      attention_forward(backend, m.mha().kernel_forward_args());
      m.finish_forward();
      m.retrieve(database_);
      sums[s].squared_error += squared_error_rows(m.retrieval(), queries, 0.0f, nullptr);
      for (int b = 0; b < B; ++b) {
        const int label = data_.held_out.labels[chunk + b];
        sums[s].top1 += database_.labels[m.best_match(b)] == label;
        top_k(&m.mha().weights_mean()[std::size_t(b) * S], S, kTopK, top);
        for (int i : top) sums[s].top10 += database_.labels[i] == label;
      }
    }
  });
  Sums total;
  for (const Sums& s : sums) {  // in shard order
    total.squared_error += s.squared_error;
    total.top1 += s.top1;
    total.top10 += s.top10;
  }
  LookupEvaluation e;
  e.queries = N;
  e.top1 = double(total.top1) / N;
  e.top10 = double(total.top10) / (double(N) * std::min(kTopK, S));
  e.mse = total.squared_error / (double(N) * P);
  e.mean_image_mse = baselines_->mean_image_mse;
  e.nearest_neighbour_top1 = baselines_->nearest_neighbour_top1;
  e.nearest_neighbour_mse = baselines_->nearest_neighbour_mse;
  e.chance = baselines_->chance;
  return e;
}

std::string LookupTrainer::inspect(const float* query, std::size_t size, Backend backend, LookupInspection& out) {
  const int P = data_.pixels, H = config_.heads, S = int(database_.images.rows());
  std::string error = first_error({check_length("query", size, std::size_t(P), shape_text({{"P", P}})),
                                   query ? check_finite("query", query, size) : "query is missing"});
  if (!error.empty()) return error;
  LookupModel& m = model();
  embed_database();
  m.prepare(ConstMatrixMap(query, 1, P), database_);
  attention_forward(backend, m.mha().kernel_forward_args());
  m.finish_forward();
  m.retrieve(database_);
  out = LookupInspection{};
  out.H = H;
  out.S = S;
  out.P = P;
  out.weights = m.mha().weights();  // [1, H, 1, S]
  out.weights_mean = m.mha().weights_mean();
  out.retrieval.assign(m.retrieval().data(), m.retrieval().data() + P);
  top_k(out.weights_mean.data(), S, kTopK, out.top_index);
  for (int i : out.top_index) {
    out.top_label.push_back(database_.labels[i]);
    out.top_weight.push_back(out.weights_mean[i]);
  }
  return {};
}

std::string LookupTrainer::inspect_held_out(int index, Backend backend, LookupInspection& out) {
  const int N = data_.held_out.count(), P = data_.pixels;
  if (index < 0 || index >= N)
    return "held-out index must be in [0, " + std::to_string(N) + "), got " + std::to_string(index);
  std::vector<float> query(P);
  normalise_pixels(&data_.held_out.pixels[std::size_t(index) * P], P, query.data());
  std::string error = inspect(query.data(), query.size(), backend, out);
  if (error.empty()) out.label = data_.held_out.labels[index];
  return error;
}

// ---- records: the config and results as JS sees them (docs/api.md)

namespace {

template <class Fields, class Config>
void config_fields(Fields& f, Config& c) {
  f("seed", c.seed);
  f("heads", c.heads);
  f("embedDim", c.embed_dim);
  f("batch", c.batch);
  f("lr", c.lr);
  f("databaseSize", c.database);
}
const auto declare_config = [](auto& f, auto& c) { config_fields(f, c); };

template <class Fields, class Evaluation>
void evaluation_fields(Fields& f, Evaluation& e) {
  f("queries", e.queries);
  f("top1", e.top1);
  f("top10", e.top10);
  f("mse", e.mse);
  f("meanImageMse", e.mean_image_mse);
  f("nearestNeighbourTop1", e.nearest_neighbour_top1);
  f("nearestNeighbourMse", e.nearest_neighbour_mse);
  f("chance", e.chance);
}

template <class Fields, class Inspection>
void inspection_fields(Fields& f, Inspection& i) {
  f("H", i.H);
  f("S", i.S);
  f("P", i.P);
  f("label", i.label);
  f("weights", i.weights);
  f("weightsMean", i.weights_mean);
  f("retrieval", i.retrieval);
  f("topIndex", i.top_index);
  f("topLabel", i.top_label);
  f("topWeight", i.top_weight);
}

// The notebook trains 10 epochs of its 60,000 digits at batch 64: 9,370 steps.
constexpr int kNotebookSteps = 9370;

}  // namespace

std::string LookupTrainer::config_error(const Json& config, const MnistAsset& digits) {
  LookupConfig c;
  std::string error = from_record(config, c, declare_config);
  if (!error.empty()) return error;
  LookupData data;
  // The database's range first: the split below takes it as given.
  error = validate_lookup_config(c, kLookupTrainingImages);
  if (error.rfind("database", 0) != 0) error = make_lookup_data(digits, c.seed, data, c.database);
  if (error.empty()) error = validate_lookup_config(c, data.training.count());
  // validate_lookup_config names the C++ fields; the records name them as JS does.
  for (const auto& [cpp, js] : {std::pair<std::string, std::string>{"embed_dim", "embedDim"}, {"database must", "databaseSize must"},
                                {"database (", "databaseSize ("}})
    for (std::size_t at = error.find(cpp); at != std::string::npos; at = error.find(cpp, at + js.size()))
      error.replace(at, cpp.size(), js);
  return error;
}

LookupConfig LookupTrainer::config_from(const Json& config) {
  LookupConfig c;
  from_record(config, c, declare_config);
  return c;
}

Json LookupTrainer::config_to_record(const LookupConfig& c) { return to_record(c, declare_config); }

Json LookupTrainer::defaults() {
  Json out = config_to_record(LookupConfig{});
  out.set("steps", kNotebookSteps);
  return out;
}

Json LookupTrainer::config_record() const {
  Json out = config_to_record(config_);
  out.set("stepsPerEpoch", steps_per_epoch_);
  out.set("pixels", data_.pixels);
  out.set("databaseImages", data_.database.count());
  out.set("heldOutImages", data_.held_out.count());
  out.set("trainingImages", data_.training.count());
  return out;
}

std::string LookupTrainer::evaluate_record(const Json&, Backend backend, Json& out) {
  out = to_record(evaluate(backend), [](auto& f, auto& e) { evaluation_fields(f, e); });
  return {};
}

std::string LookupTrainer::inspect_record(const Json& input, Backend backend, Json& out) {
  if (!input.is_object()) return "inspect takes {heldOut: index} or {pixels: 784 normalised values}";
  LookupInspection inspection;
  std::string error;
  if (const Json* held_out = input.find("heldOut")) {
    if (!held_out->is_number() || held_out->as_number() != std::floor(held_out->as_number()) ||
        std::fabs(held_out->as_number()) > 1e9)
      return "heldOut must be an integer index";
    error = inspect_held_out(int(held_out->as_number()), backend, inspection);
  } else {
    const Json* pixels = input.find("pixels");
    error = check_array_record("pixels", pixels);
    if (!error.empty()) return error;
    const std::vector<float> query = read_floats(*pixels);
    error = inspect(query.data(), query.size(), backend, inspection);
  }
  if (!error.empty()) return error;
  out = to_record(inspection, [](auto& f, auto& i) { inspection_fields(f, i); });
  return {};
}

std::string LookupTrainer::data_record(const std::string& part, Json& out) const {
  const LookupImages* images = part == "database" ? &data_.database
                               : part == "heldOut" ? &data_.held_out
                               : part == "training" ? &data_.training
                                                    : nullptr;
  if (!images) return "images takes 'database', 'heldOut' or 'training', got '" + part + "'";
  out = Json::object();
  out.set("pixels", images->pixels);
  out.set("labels", images->labels);
  return {};
}

}  // namespace attnlab
