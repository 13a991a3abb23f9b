#include "alignment_trainer.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "../io/record.h"
#include "../losses.h"
#include "../validate.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters (kInitStream, sharded_step.h), training batches,
// the fixed sample, evaluation.
constexpr std::uint64_t kDataStream = 2, kSampleStream = 3, kEvalStream = 4;

}  // namespace

AlignmentTrainer::AlignmentTrainer(const AlignmentConfig& config)
    : config_(config),
      data_rng_(config.seed, kDataStream),
      training_(config.seed, config.batch, config.lr,
                [&config](Rng& init_rng) { return std::make_unique<AlignmentModel>(config, init_rng); }) {
  shards_.resize(training_.models.shards());
  Rng sample_rng(config.seed, kSampleStream);
  sample_alignment_batch(config_, sample_rng, 1, fixed_sample_);
}

ParameterList AlignmentTrainer::parameters() { return model().parameters(); }

void AlignmentTrainer::set_lr(double lr) {
  config_.lr = lr;
  training_.set_lr(lr);
}

StepMetrics AlignmentTrainer::step(Backend backend) {
  sample_alignment_batch(config_, data_rng_, config_.batch, batch_);
  ShardedModels<AlignmentModel>& models = training_.models;
  const int shards = models.shards();
  for (int s = 0; s < shards; ++s) slice_alignment_batch(batch_, models.first(s), models.count(s), shards_[s]);
  const double token_count = double(batch_.B) * batch_.T;
  std::vector<double> loss_sums(shards);
  models.run([&](int s) { loss_sums[s] = models.shard(s).train_pass(shards_[s], backend, token_count); });
  double loss_sum = 0.0;
  int correct = 0;
  for (int s = 0; s < shards; ++s) {  // in shard order, so the sums are the same bits every run
    loss_sum += loss_sums[s];
    correct += models.shard(s).correct_predictions(shards_[s]);
  }
  return finish_step(loss_sum, correct);
}

void AlignmentTrainer::begin_step() {
  training_.zero_grad();
  sample_alignment_batch(config_, data_rng_, config_.batch, batch_);
  model().embed(batch_);
}

void AlignmentTrainer::middle_step() {
  model().head_forward(batch_);
  last_loss_sum_ = model().loss_backward(batch_, double(batch_.B) * batch_.T);
}

StepMetrics AlignmentTrainer::end_step() {
  model().finish_backward(batch_);
  return finish_step(last_loss_sum_, model().correct_predictions(batch_));
}

StepMetrics AlignmentTrainer::finish_step(double loss_sum, int correct) {
  const int steps_done = training_.finish_step();
  const double tokens = double(batch_.B) * batch_.T;
  return {steps_done, 0, float(loss_sum / tokens), float(correct / tokens)};
}

AlignmentEvaluation AlignmentTrainer::evaluate(int samples, Backend backend) {
  Rng eval_rng(config_.seed, kEvalStream);
  AlignmentBatch batch, chunk;
  sample_alignment_batch(config_, eval_rng, samples, batch);
  AlignmentModel& m = model();
  AlignmentEvaluation e;
  e.samples = samples;
  const int H = config_.heads, T = batch.T, S = batch.S;
  e.head_mass.assign(H, 0.0);
  double loss_sum = 0.0;
  int correct = 0;
  // In chunks of kEvalChunk samples: the activations of 1,024 samples at once (the weights alone are
  // B*H*T*S floats) took a large model past a gigabyte and the WASM module to its 2 GB limit. Every
  // sum runs in sample order, as it did over the whole batch.
  for (int first = 0; first < samples; first += kEvalChunk) {
    const int count = std::min(kEvalChunk, samples - first);
    slice_alignment_batch(batch, first, count, chunk);
    m.embed(chunk);
    attention_forward(backend, m.mha().kernel_forward_args());
    m.head_forward(chunk);
    loss_sum += cross_entropy_sum(m.logits(), chunk.targets.data(), nullptr, 1.0);
    correct += m.correct_predictions(chunk);
    const std::vector<float>& w = m.mha().weights();  // [count, H, T, S]
    for (int b = 0; b < count; ++b)
      for (int h = 0; h < H; ++h) {
        double mass = 0.0;
        for (int t = 0; t < T; ++t) {
          const float* row = &w[((std::size_t(b) * H + h) * T + t) * S];
          if (config_.task == AlignmentTaskKind::copy) mass += row[t];
          else if (config_.task == AlignmentTaskKind::reverse) mass += row[S - 1 - t];
          else
            for (int s = 0; s < S; ++s)
              if (chunk.keys[std::size_t(b) * S + s] == chunk.query[b]) mass += row[s];
        }
        e.head_mass[h] += mass / T;
      }
  }
  const double tokens = double(samples) * T;
  e.loss = loss_sum / tokens;
  e.accuracy = double(correct) / tokens;
  for (int h = 0; h < H; ++h) {
    e.head_mass[h] /= samples;
    e.pattern_mass += e.head_mass[h] / H;  // the head mean's mass is the mean of the heads' masses
    if (e.head_mass[h] > e.best_head_mass) {
      e.best_head_mass = e.head_mass[h];
      e.best_head = h;
    }
  }
  if (config_.pointer()) e.bayes_ceiling = pointer_bayes_ceiling(batch);
  return e;
}

std::string AlignmentTrainer::validate_sample(const AlignmentBatch& s) const {
  const auto bad_token = [](const char* what, int i, int v, int lo, int hi) {
    return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) + " is out of range: " +
           what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  };
  if (s.B != 1) return "inspect takes one sample";
  if (!config_.pointer()) {
    if (s.S < 1 || s.S > config_.length)
      return "the input must have 1 to " + std::to_string(config_.length) + " tokens (the trained length), got " +
             std::to_string(s.S);
    for (int i = 0; i < s.S; ++i)
      if (s.keys[i] < 1 || s.keys[i] >= config_.vocab) return bad_token("tokens", i, s.keys[i], 1, config_.vocab - 1);
    return {};
  }
  if (s.S < 1 || s.S > config_.pairs)
    return "pointer needs 1 to " + std::to_string(config_.pairs) + " key/value pairs, got " + std::to_string(s.S);
  for (int i = 0; i < s.S; ++i) {
    if (s.keys[i] < 1 || s.keys[i] > config_.key_range) return bad_token("keys", i, s.keys[i], 1, config_.key_range);
    const int lo = config_.key_range + 1, hi = config_.key_range + config_.value_range;
    if (s.values[i] < lo || s.values[i] > hi) return bad_token("values", i, s.values[i], lo, hi);
  }
  if (s.query.size() != 1 || s.query[0] < 1 || s.query[0] > config_.key_range)
    return "the query key must be in [1, " + std::to_string(config_.key_range) + "]";
  return {};
}

std::string AlignmentTrainer::inspect(const AlignmentBatch& sample, Backend backend, AlignmentInspection& out) {
  std::string error = validate_sample(sample);
  if (!error.empty()) return error;
  AlignmentModel& m = model();
  m.embed(sample);
  attention_forward(backend, m.mha().kernel_forward_args());
  m.head_forward(sample);
  out.H = config_.heads;
  out.T = sample.T;
  out.S = sample.S;
  out.weights = m.mha().weights();
  out.weights_mean = m.mha().weights_mean();
  out.predictions.resize(sample.T);
  out.confidence.resize(sample.T);
  for (int t = 0; t < sample.T; ++t) {
    const RowMatrix& logits = m.logits();
    Eigen::Index best = 0;
    const float max_logit = logits.row(t).maxCoeff(&best);
    float sum = 0.0f;
    for (Eigen::Index c = 0; c < logits.cols(); ++c) sum += std::exp(logits(t, c) - max_logit);
    out.predictions[t] = int(best);
    out.confidence[t] = 1.0f / sum;
  }
  return {};
}

// ---- records: the config and results as JS sees them (docs/api.md)

namespace {

const Choices<AlignmentTaskKind> kTasks = {
    {AlignmentTaskKind::copy, "copy"}, {AlignmentTaskKind::reverse, "reverse"}, {AlignmentTaskKind::pointer, "pointer"}};

template <class Fields, class Config>
void config_fields(Fields& f, Config& c) {
  f("task", c.task, kTasks);
  f("seed", c.seed);
  f("dModel", c.d_model);
  f("heads", c.heads);
  f("batch", c.batch);
  f("lr", c.lr);
  f("vocab", c.vocab);
  f("length", c.length);
  f("pairs", c.pairs);
  f("keyRange", c.key_range);
  f("valueRange", c.value_range);
  f("uniqueKeys", c.unique_keys);
  f("positional", c.positional);
}
const auto declare_config = [](auto& f, auto& c) { config_fields(f, c); };

template <class Fields, class Evaluation>
void evaluation_fields(Fields& f, Evaluation& e) {
  f("samples", e.samples);
  f("accuracy", e.accuracy);
  f("loss", e.loss);
  f("bayesCeiling", e.bayes_ceiling);
  f("patternMass", e.pattern_mass);
  f("bestHead", e.best_head);
  f("bestHeadMass", e.best_head_mass);
  f("headMass", e.head_mass);
}

template <class Fields, class Inspection>
void inspection_fields(Fields& f, Inspection& i) {
  f("H", i.H);
  f("T", i.T);
  f("S", i.S);
  f("weights", i.weights);
  f("weightsMean", i.weights_mean);
  f("predictions", i.predictions);
  f("confidence", i.confidence);
}

// validate_alignment_config names the C++ fields; the records name them as JS does.
std::string in_js_names(std::string error) {
  for (const auto& [cpp, js] : {std::pair{"d_model", "dModel"}, std::pair{"key_range", "keyRange"},
                                std::pair{"value_range", "valueRange"}}) {
    for (std::size_t at = error.find(cpp); at != std::string::npos; at = error.find(cpp))
      error.replace(at, std::string(cpp).size(), js);
  }
  return error;
}

}  // namespace

std::string AlignmentTrainer::config_error(const Json& config) {
  AlignmentConfig c;
  std::string error = from_record(config, c, declare_config);
  return error.empty() ? in_js_names(validate_alignment_config(c)) : error;
}

AlignmentConfig AlignmentTrainer::config_from(const Json& config) {
  AlignmentConfig c;
  from_record(config, c, declare_config);
  return c;
}

Json AlignmentTrainer::config_to_record(const AlignmentConfig& c) {
  Json out = to_record(c, declare_config);
  out.set("steps", default_steps(c.task));
  return out;
}

Json AlignmentTrainer::defaults(const std::string& task) {
  AlignmentConfig c;
  for (const auto& [value, name] : kTasks)
    if (task == name) c.task = value;
  return config_to_record(c);
}

Json AlignmentTrainer::config_record() const {
  Json out = config_to_record(config_);
  out.set("vocabSize", config_.vocab_size());
  out.set("inLength", config_.in_len());
  out.set("outLength", config_.out_len());
  return out;
}

std::string AlignmentTrainer::evaluate_record(const Json& options, Backend backend, Json& out) {
  int samples = 1024;
  const Json* n = options.is_object() ? options.find("samples") : nullptr;
  if (n && n->is_number() && std::isfinite(n->as_number()))
    samples = int(std::max(1.0, std::min(n->as_number(), double(kMaxEvalSamples))));
  out = to_record(evaluate(samples, backend), [](auto& f, auto& e) { evaluation_fields(f, e); });
  return {};
}

std::string AlignmentTrainer::inspect_record(const Json& input, Backend backend, Json& out) {
  if (!input.is_object()) return "inspect takes {tokens} (copy, reverse) or {keys, values, query} (pointer)";
  AlignmentBatch b;
  b.B = 1;
  if (!config_.pointer()) {
    const Json* tokens = input.find("tokens");
    std::string error = check_array_record("tokens", tokens);
    if (error.empty()) error = read_int32s("tokens", *tokens, b.keys);
    if (!error.empty()) return error;
    b.values = b.keys;
    b.S = b.T = int(b.keys.size());
    b.targets.resize(b.keys.size());
    for (int t = 0; t < b.T; ++t)
      b.targets[t] = config_.task == AlignmentTaskKind::copy ? b.keys[t] : b.keys[b.S - 1 - t];
  } else {
    const Json *keys = input.find("keys"), *values = input.find("values");
    std::string error = first_error({check_array_record("keys", keys), check_array_record("values", values)});
    if (error.empty()) error = first_error({read_int32s("keys", *keys, b.keys), read_int32s("values", *values, b.values)});
    if (!error.empty()) return error;
    if (b.keys.size() != b.values.size())
      return "keys and values must have the same length, got " + std::to_string(b.keys.size()) + " and " +
             std::to_string(b.values.size());
    const Json* query = input.find("query");
    if (!query || !query->is_number() || query->as_number() != std::floor(query->as_number()) ||
        std::fabs(query->as_number()) > 2147483647.0) {
      std::ostringstream got;
      if (query && query->is_number()) got << query->as_number();
      else got << "a " << Json::js_typeof(query);
      return "query must be a key (a whole number), got " + got.str();
    }
    b.query = {std::int32_t(query->as_number())};
    b.S = int(b.keys.size());
    b.T = 1;
    b.targets = {0};
    for (int s = 0; s < b.S; ++s)
      if (b.keys[s] == b.query[0]) {
        b.targets[0] = b.values[s];
        break;
      }
  }
  AlignmentInspection inspection;
  std::string error = inspect(b, backend, inspection);
  if (!error.empty()) return error;
  out = to_record(inspection, [](auto& f, auto& i) { inspection_fields(f, i); });
  return {};
}

std::string AlignmentTrainer::data_record(const std::string& part, Json& out) const {
  if (part != "fixedSample") return "the Alignment trainer's data has one part, 'fixedSample', got '" + part + "'";
  const AlignmentBatch& b = fixed_sample_;
  out = Json::object();
  out.set("keys", b.keys);
  out.set("values", b.values);
  out.set("targets", b.targets);
  if (!b.query.empty()) out.set("query", b.query[0]);
  return {};
}

}  // namespace attnlab
