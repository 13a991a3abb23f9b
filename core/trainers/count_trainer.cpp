#include "count_trainer.h"

#include <algorithm>
#include <cmath>

#include "../io/record.h"
#include "../losses.h"
#include "../shard_runner.h"
#include "../validate.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters (kInitStream, sharded_step.h), training batches,
// the fixed sample, evaluation.
constexpr std::uint64_t kDataStream = 2, kSampleStream = 3, kEvalStream = 4;

// The notebook trains range(5001) steps.
constexpr int kNotebookSteps = 5001;
constexpr int kMaxBatch = 10000;

constexpr int S = CountShape::S;

}  // namespace

double count_training_bytes(const CountConfig& c) {
  const double E = c.sizes.embed_dim, A = c.sizes.att_dim, H = c.sizes.hidden, V = CountShape::V;
  // Per sequence: the kernel's q, out and their gradients (4 A), k, v and theirs (4 S A), the weights
  // (S), the tokens (S), the head's rows (6) and its four lanes.
  const double per_sequence = 4 * A + 4 * S * A + 2 * S + 10;
  // The training batch, and every shard's evaluation chunk beside it.
  const double sequences = c.batch + 2.0 * CountTrainer::kEvalChunk;
  const double parameters = V * E + E + A + E * A + A + E + 1 + 3 * H + 1;
  const double per_copy = parameters * 2 + V * (2 * E + 2 * A + 4);  // values, gradients, the digits' tables
  return 4 * (per_sequence * sequences + per_copy * CountTrainer::kShards + 2 * parameters);
}

std::string validate_count_config(const CountConfig& c) {
  if (c.batch < 1 || c.batch > kMaxBatch)
    return "batch must be an integer in [1, " + std::to_string(kMaxBatch) + "], got " + std::to_string(c.batch);
  if (!(c.lr > 0.0 && c.lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(c.lr);
  const struct { const char* name; int value, max; } sizes[] = {
      {"embedDim", c.sizes.embed_dim, kCountMaxEmbedDim},
      {"attDim", c.sizes.att_dim, kCountMaxAttDim},
      {"hidden", c.sizes.hidden, kCountMaxHidden}};
  for (const auto& size : sizes)
    if (size.value < 1 || size.value > size.max)
      return std::string(size.name) + " must be an integer in [1, " + std::to_string(size.max) + "], got " +
             std::to_string(size.value);
  const double bytes = count_training_bytes(c);
  if (bytes > kCountMemoryBudget)
    return "these settings need about " + megabytes(bytes) + " to train; the lab allows " +
           megabytes(kCountMemoryBudget) + ": lower batch (" + std::to_string(c.batch) + ") or attDim (" +
           std::to_string(c.sizes.att_dim) + ")";
  return {};
}

void sample_count_batch(Rng& rng, int n, std::vector<std::int32_t>& tokens, std::vector<float>& labels) {
  // the notebook's torch.randint(0, 10, (N, 10))
  tokens.resize(std::size_t(n) * S);
  labels.resize(n);
  for (int b = 0; b < n; ++b) {
    for (int s = 0; s < S; ++s) tokens[std::size_t(b) * S + s] = rng.randint(0, CountShape::V);
    labels[b] = count_label(&tokens[std::size_t(b) * S]);
  }
}

CountTrainer::CountTrainer(const CountConfig& config)
    : config_(config),
      data_rng_(config.seed, kDataStream),
      training_(config.seed, config.batch, config.lr,
                [kind = config.embedding, sizes = config.sizes](Rng& init_rng) {
                  return std::make_unique<CountModel>(init_rng, kind, sizes);
                }) {
  step_tensors_.resize(config.batch, config.sizes.att_dim);
  eval_tensors_.resize(training_.models.shards());
  Rng sample_rng(config.seed, kSampleStream);
  std::vector<float> labels;
  sample_count_batch(sample_rng, kFixedSamples, fixed_sample_, labels);
}

void CountTrainer::set_lr(double lr) {
  config_.lr = lr;
  training_.set_lr(lr);
}

void CountTrainer::run_shards(const std::vector<std::int32_t>& tokens, Backend backend) {
  ShardedModels<CountModel>& models = training_.models;
  const int shards = models.shards();
  std::vector<double> loss_sums(shards);
  for (int s = 0; s < shards; ++s) models.shard(s).attach(step_tensors_, models.first(s), models.count(s));
  models.run([&](int s) {
    const int first = models.first(s);
    loss_sums[s] = models.shard(s).train_pass(&tokens[std::size_t(first) * S], &labels_[first], backend,
                                              double(config_.batch));
  });
  last_loss_sum_ = 0.0;
  for (int s = 0; s < shards; ++s) last_loss_sum_ += loss_sums[s];  // in shard order: the same bits every run
}

StepMetrics CountTrainer::step(Backend backend) {
  sample_count_batch(data_rng_, config_.batch, tokens_, labels_);
  run_shards(tokens_, backend);
  int correct = 0;
  for (int s = 0; s < training_.models.shards(); ++s)
    correct += training_.models.shard(s).correct_predictions(&labels_[training_.models.first(s)]);
  return finish_step(last_loss_sum_, correct);
}

StepMetrics CountTrainer::step_on(const std::vector<std::int32_t>& tokens, Backend backend) {
  tokens_ = tokens;
  labels_.resize(config_.batch);
  for (int b = 0; b < config_.batch; ++b) labels_[b] = count_label(&tokens_[std::size_t(b) * S]);
  run_shards(tokens_, backend);
  int correct = 0;
  for (int s = 0; s < training_.models.shards(); ++s)
    correct += training_.models.shard(s).correct_predictions(&labels_[training_.models.first(s)]);
  return finish_step(last_loss_sum_, correct);
}

// The staged step: step()'s shards, on their rows of the same tensors, with the kernel between the
// stages run once over the whole batch by the caller.
void CountTrainer::begin_step() {
  sample_count_batch(data_rng_, config_.batch, tokens_, labels_);
  ShardedModels<CountModel>& models = training_.models;
  models.share_values();
  for (int s = 0; s < models.shards(); ++s) {
    CountModel& m = models.shard(s);
    m.attach(step_tensors_, models.first(s), models.count(s));
    m.zero_grad();
    m.prepare(&tokens_[std::size_t(models.first(s)) * S]);
  }
}

void CountTrainer::middle_step() {
  ShardedModels<CountModel>& models = training_.models;
  last_loss_sum_ = 0.0;
  for (int s = 0; s < models.shards(); ++s) {
    models.shard(s).finish_forward();
    last_loss_sum_ += models.shard(s).loss_backward(&labels_[models.first(s)], double(config_.batch));
  }
}

StepMetrics CountTrainer::end_step() {
  ShardedModels<CountModel>& models = training_.models;
  int correct = 0;
  for (int s = 0; s < models.shards(); ++s) {
    models.shard(s).finish_backward();
    correct += models.shard(s).correct_predictions(&labels_[models.first(s)]);
  }
  models.sum_grads();  // as run() does
  return finish_step(last_loss_sum_, correct);
}

StepMetrics CountTrainer::finish_step(double loss_sum, int correct) {
  const int steps_done = training_.finish_step();
  return {steps_done, 0, float(loss_sum / config_.batch), float(double(correct) / config_.batch)};
}

CountEvaluation CountTrainer::evaluate(int samples, Backend backend) {
  Rng eval_rng(config_.seed, kEvalStream);
  std::vector<std::int32_t> tokens;
  std::vector<float> labels;
  sample_count_batch(eval_rng, samples, tokens, labels);
  ShardedModels<CountModel>& models = training_.models;
  const int shards = models.shards();
  models.share_values();
  struct Sums {
    double loss = 0.0, mass = 0.0, uniform_mass = 0.0;
    int correct = 0, ties = 0, tie_correct = 0, zeros = 0;
  };
  std::vector<Sums> sums(shards);
  shard_runner().run(shards, [&](int s) {
    CountModel& m = models.shard(s);
    Sums& sum = sums[s];
    const auto [first, count] = part_range(samples, shards, s);
    for (int chunk = first; chunk < first + count; chunk += kEvalChunk) {
      const int n = std::min(kEvalChunk, first + count - chunk);
      eval_tensors_[s].resize(n, config_.sizes.att_dim);
      m.attach(eval_tensors_[s], 0, n);
      m.forward(&tokens[std::size_t(chunk) * S], backend);
      sum.loss += binary_cross_entropy_sum(m.probabilities(), &labels[chunk], std::size_t(n), nullptr, double(samples));
      for (int b = 0; b < n; ++b) {
        const std::int32_t* x = &tokens[std::size_t(chunk + b) * S];
        const float label = labels[chunk + b];
        const bool correct = (m.probability(b) > 0.5f ? 1.0f : 0.0f) == label;
        int twos = 0, fours = 0;
        double mass = 0.0;
        for (int t = 0; t < S; ++t) {
          twos += x[t] == 2;
          fours += x[t] == 4;
          if (x[t] == 2 || x[t] == 4) mass += m.weights(b)[t];
        }
        sum.correct += correct;
        sum.zeros += label == 0.0f;
        sum.mass += mass;
        sum.uniform_mass += double(twos + fours) / S;
        if (twos == fours) {
          ++sum.ties;
          sum.tie_correct += correct;
        }
      }
    }
  });
  Sums total;
  for (const Sums& s : sums) {  // in shard order
    total.loss += s.loss;
    total.mass += s.mass;
    total.uniform_mass += s.uniform_mass;
    total.correct += s.correct;
    total.ties += s.ties;
    total.tie_correct += s.tie_correct;
    total.zeros += s.zeros;
  }
  CountEvaluation e;
  e.samples = samples;
  e.accuracy = double(total.correct) / samples;
  e.ties = total.ties;
  e.tie_accuracy = total.ties ? double(total.tie_correct) / total.ties : 0.0;
  e.loss = total.loss / samples;
  e.mass_on_24 = total.mass / samples;
  e.uniform_mass_on_24 = total.uniform_mass / samples;
  e.majority = double(total.zeros) / samples;
  return e;
}

namespace {

std::string check_tokens(const char* name, const std::vector<std::int32_t>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] > 9)
      return std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(tokens[i]) +
             " is not a digit: " + name + " must be in [0, 9]";
  return {};
}

}  // namespace

std::string CountTrainer::inspect(const std::vector<std::int32_t>& tokens, Backend backend, CountInspection& out) {
  const std::size_t n = tokens.size() / S;
  if (tokens.empty() || tokens.size() % S != 0 || n > std::size_t(kMaxInspectSequences))
    return "inspect takes 1 to " + std::to_string(kMaxInspectSequences) + " sequences of " + std::to_string(S) +
           " digits, got " + std::to_string(tokens.size()) + " tokens";
  std::string error = check_tokens("tokens", tokens);
  if (!error.empty()) return error;
  const int N = int(n);
  CountModel& m = model();
  eval_tensors_[0].resize(N, config_.sizes.att_dim);
  m.attach(eval_tensors_[0], 0, N);
  m.forward(tokens.data(), backend);
  out = CountInspection{};
  out.N = N;
  std::vector<float> labels(N);
  for (int b = 0; b < N; ++b) {
    out.weights.insert(out.weights.end(), m.weights(b), m.weights(b) + S);
    for (int s = 0; s < S; ++s) out.values.push_back(m.value(b, s));
    out.weighted.push_back(m.weighted(b));
    out.probability.push_back(m.probability(b));
    labels[b] = count_label(&tokens[std::size_t(b) * S]);
    out.label.push_back(std::int32_t(labels[b]));
  }
  out.loss = binary_cross_entropy_sum(out.probability.data(), labels.data(), n, nullptr, double(N)) / N;
  return {};
}

std::string CountTrainer::gradients_on(const std::vector<std::int32_t>& tokens, Backend backend, double& loss) {
  const std::size_t n = tokens.size() / S;
  if (tokens.empty() || tokens.size() % S != 0 || n > std::size_t(kMaxInspectSequences))
    return "gradients take 1 to " + std::to_string(kMaxInspectSequences) + " sequences of " + std::to_string(S) +
           " digits, got " + std::to_string(tokens.size()) + " tokens";
  std::string error = check_tokens("tokens", tokens);
  if (!error.empty()) return error;
  const int N = int(n);
  std::vector<float> labels(N);
  for (int b = 0; b < N; ++b) labels[b] = count_label(&tokens[std::size_t(b) * S]);
  CountModel& m = model();
  eval_tensors_[0].resize(N, config_.sizes.att_dim);
  m.attach(eval_tensors_[0], 0, N);
  loss = m.train_pass(tokens.data(), labels.data(), backend, double(N)) / N;
  return {};
}

// ---- records: the config and results as JS sees them (docs/api.md)

namespace {

const Choices<CountEmbedding> kEmbeddings = {{CountEmbedding::lookup, "embedding"}, {CountEmbedding::one_hot, "one-hot"}};

template <class Fields, class Config>
void config_fields(Fields& f, Config& c) {
  f("seed", c.seed);
  f("lr", c.lr);
  f("batch", c.batch);
  f("embedding", c.embedding, kEmbeddings);
  f("embedDim", c.sizes.embed_dim);
  f("attDim", c.sizes.att_dim);
  f("hidden", c.sizes.hidden);
}
const auto declare_config = [](auto& f, auto& c) { config_fields(f, c); };

template <class Fields, class Evaluation>
void evaluation_fields(Fields& f, Evaluation& e) {
  f("samples", e.samples);
  f("accuracy", e.accuracy);
  f("tieAccuracy", e.tie_accuracy);
  f("ties", e.ties);
  f("loss", e.loss);
  f("massOn24", e.mass_on_24);
  f("uniformMassOn24", e.uniform_mass_on_24);
  f("majority", e.majority);
}

template <class Fields, class Inspection>
void inspection_fields(Fields& f, Inspection& i) {
  f("N", i.N);
  f("weights", i.weights);
  f("values", i.values);
  f("weighted", i.weighted);
  f("probability", i.probability);
  f("label", i.label);
  f("loss", i.loss);
}

}  // namespace

std::string CountTrainer::config_error(const Json& config) {
  CountConfig c;
  std::string error = from_record(config, c, declare_config);
  return error.empty() ? validate_count_config(c) : error;
}

CountConfig CountTrainer::config_from(const Json& config) {
  CountConfig c;
  from_record(config, c, declare_config);
  return c;
}

Json CountTrainer::config_to_record(const CountConfig& c) { return to_record(c, declare_config); }

Json CountTrainer::defaults(const std::string&) {
  Json out = config_to_record(CountConfig{});
  out.set("steps", kNotebookSteps);
  return out;
}

Json CountTrainer::config_record() const {
  Json out = config_to_record(config_);
  out.set("steps", kNotebookSteps);
  out.set("length", S);
  out.set("digits", CountShape::V);
  return out;
}

std::string CountTrainer::evaluate_record(const Json& options, Backend backend, Json& out) {
  int samples = kDefaultEvalSamples;
  const Json* n = options.is_object() ? options.find("samples") : nullptr;
  if (n && n->is_number() && std::isfinite(n->as_number()))
    samples = int(std::max(1.0, std::min(n->as_number(), double(kMaxEvalSamples))));
  out = to_record(evaluate(samples, backend), [](auto& f, auto& e) { evaluation_fields(f, e); });
  return {};
}

std::string CountTrainer::inspect_record(const Json& input, Backend backend, Json& out) {
  const char* usage = "inspect takes {tokens: 10 digits} or {batch: N * 10 digits}";
  if (!input.is_object()) return usage;
  const Json* one = input.find("tokens");
  const Json* many = input.find("batch");
  if (!one && !many) return usage;
  const char* name = one ? "tokens" : "batch";
  std::vector<std::int32_t> tokens;
  std::string error = check_array_record(name, one ? one : many);
  if (error.empty()) error = read_int32s(name, one ? *one : *many, tokens);
  if (!error.empty()) return error;
  if (one && tokens.size() != std::size_t(S))
    return "tokens must hold " + std::to_string(S) + " digits, got " + std::to_string(tokens.size());
  if (many && (tokens.empty() || tokens.size() % S != 0))
    return "batch must hold N * " + std::to_string(S) + " digits (N >= 1), got " + std::to_string(tokens.size());
  error = check_tokens(name, tokens);
  if (!error.empty()) return error;
  const Json* gradients = input.find("gradients");
  if (gradients && !gradients->is_bool()) return "gradients must be true or false";
  CountInspection inspection;
  error = inspect(tokens, backend, inspection);
  if (!error.empty()) return error;
  if (gradients && gradients->as_bool()) {
    double loss = 0.0;
    error = gradients_on(tokens, backend, loss);
    if (!error.empty()) return error;
  }
  out = to_record(inspection, [](auto& f, auto& i) { inspection_fields(f, i); });
  return {};
}

std::string CountTrainer::data_record(const std::string& part, Json& out) const {
  if (part != "fixedSample") return "the Count trainer's data has one part, 'fixedSample', got '" + part + "'";
  out = Json::object();
  out.set("tokens", fixed_sample_);
  return {};
}

}  // namespace attnlab
