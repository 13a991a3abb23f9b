#include "induction_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "../io/record.h"
#include "staged_step.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters (kInitStream, sharded_step.h), training batches, the
// fixed sample, the probe sequences, evaluation.
constexpr std::uint64_t kDataStream = 2, kSampleStream = 3, kProbeStream = 4, kEvalStream = 5;
constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

// A number from the user's file as they wrote it: 9, 2.5, 1e+20.
std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// The repeat task over the vocabulary the model has (the text task's alphabet for its probes).
InductionConfig repeat_config(const InductionConfig& c, int vocab) {
  InductionConfig r = c;
  r.task = InductionTaskKind::repeat;
  r.vocab = vocab;
  return r;
}

int correct_predictions(const RowMatrix& logits, const InductionBatch& batch) {
  int correct = 0;
  const int T = batch.T;
  for (int b = 0; b < batch.B; ++b)
    for (int t = 0; t + 1 < T; ++t) {
      Eigen::Index best = 0;
      logits.row(Eigen::Index(b) * T + t).maxCoeff(&best);
      correct += int(best) == batch.tokens[std::size_t(b) * T + t + 1];
    }
  return correct;
}

}  // namespace

// ---- the staged step: the whole batch on copy 0, its calls left to the caller

class InductionStagedStep : public StagedStep {
 public:
  explicit InductionStagedStep(InductionTrainer& t) : t_(t) {}

  void begin() override {
    t_.next_batch();
    t_.training_.zero_grad();
    t_.model().begin_training(t_.batch_, double(t_.batch_.B) * (t_.batch_.T - 1));
    begun_ = true;
  }
  bool next_call(AttentionForward& call) override { return begun_ && t_.model().next_call(call); }
  void finish_call(const float* weights, const float* out) override { t_.model().finish_call(weights, out); }
  std::string check_pending() const override {
    return begun_ ? t_.model().check_pending() : "no training step is under way: begin one first";
  }
  bool needs_weights() const override { return t_.model().needs_weights(); }
  bool next_backward(AttentionBackward& call) override { return begun_ && t_.model().next_backward(call); }
  void finish_backward(const float* d_q, const float* d_k, const float* d_v) override {
    t_.model().finish_backward(d_q, d_k, d_v);
  }
  std::string check_finished() const override {
    if (!begun_) return "no training step is under way: begin one first";
    return t_.model().done() ? "" : "the step's attention calls are still pending";
  }
  StepMetrics end() override {
    begun_ = false;
    InductionModel& m = t_.model();
    t_.record_batch(m.target_losses(), t_.batch_);
    return t_.finish_step(m.loss_sum(), correct_predictions(m.logits(), t_.batch_));
  }

 private:
  InductionTrainer& t_;
  bool begun_ = false;
};

// ---- the trainer

InductionTrainer::InductionTrainer(const InductionConfig& config)
    : config_(config),
      vocab_(induction_vocab_size(config)),
      data_rng_(config.seed, kDataStream),
      training_(config.seed, config.batch, config.lr,
                [&config](Rng& init_rng) {
                  return std::make_unique<InductionModel>(config, induction_vocab_size(config), init_rng);
                }) {
  if (config_.task == InductionTaskKind::text) text_to_ids(config_.text, config_.context, text_);
  shards_.resize(std::size_t(training_.models.shards()));
  for (const Parameter* p : model().parameters()) parameter_count_ += p->size();
  const InductionConfig probe_task = repeat_config(config_, vocab_);
  // The fixed sample: the longest segment, at position 1 (the start token, r, r).
  Rng sample_rng(config.seed, kSampleStream);
  sample_repeat_batch(probe_task, sample_rng, 1, fixed_sample_);
  {
    const int T = config_.context, k = (T - 1) / 2;
    std::int32_t* x = fixed_sample_.tokens.data();
    for (int i = 0; i < k; ++i) x[1 + k + i] = x[1 + i];
    fixed_sample_.copy_start[0] = 1 + k;
    fixed_sample_.segment[0] = k;
  }
  Rng probe_rng(config.seed, kProbeStream);
  sample_repeat_batch(probe_task, probe_rng, kProbeSequences, probe_);
  probe(Backend::simd128);  // the timeline's point at step 0: the heads' scores before any training
}

int InductionTrainer::epoch() const {
  if (sequences_.empty() || steps_done() == 0) return 0;
  const long count = long(sequences_.size()) / config_.context;
  return int((sequences_used_ - 1) / count) + 1;
}

void InductionTrainer::set_lr(double lr) {
  config_.lr = lr;
  training_.set_lr(lr);
}

void InductionTrainer::next_batch() {
  const int B = config_.batch, T = config_.context;
  if (!sequences_.empty()) {
    const long count = long(sequences_.size()) / T;
    std::vector<std::int32_t> tokens(std::size_t(B) * T);
    for (int b = 0; b < B; ++b) {
      const long i = (sequences_used_ + b) % count;
      std::copy_n(&sequences_[std::size_t(i) * T], T, &tokens[std::size_t(b) * T]);
    }
    sequences_used_ += B;
    batch_of_sequences(tokens, B, T, batch_);
  } else if (config_.task == InductionTaskKind::text) {
    sample_text_batch(text_, T, data_rng_, B, batch_);
  } else {
    sample_repeat_batch(config_, data_rng_, B, batch_);
  }
}

StepMetrics InductionTrainer::step(Backend backend) {
  next_batch();
  ShardedModels<InductionModel>& models = training_.models;
  const int shards = models.shards();
  for (int s = 0; s < shards; ++s) slice_induction_batch(batch_, models.first(s), models.count(s), shards_[std::size_t(s)]);
  const double targets = double(batch_.B) * (batch_.T - 1);
  models.run([&](int s) {
    InductionModel& m = models.shard(s);
    m.begin_training(shards_[std::size_t(s)], targets);
    m.run(backend);
  });
  double loss_sum = 0.0;
  int correct = 0;
  std::vector<float> losses;  // the batch's target losses, shard after shard: the batch's order
  for (int s = 0; s < shards; ++s) {  // in shard order, so the sums are the same bits every run
    const InductionModel& m = models.shard(s);
    loss_sum += m.loss_sum();
    correct += correct_predictions(m.logits(), shards_[std::size_t(s)]);
    losses.insert(losses.end(), m.target_losses().begin(), m.target_losses().end());
  }
  record_batch(losses, batch_);
  StepMetrics metrics = finish_step(loss_sum, correct);
  if (timeline_.point_due(metrics.step)) probe(backend == Backend::scalar ? Backend::scalar : Backend::simd128);
  return metrics;
}

std::unique_ptr<StagedStep> InductionTrainer::staged_step() { return std::make_unique<InductionStagedStep>(*this); }

void InductionTrainer::record_batch(const std::vector<float>& losses, const InductionBatch& batch) {
  const int P = batch.T - 1;
  double sum = 0.0, repeat = 0.0, rest = 0.0;
  int repeats = 0, rests = 0;
  const bool segments = !batch.copy_start.empty() && batch.copy_start[0] >= 0;
  for (int b = 0; b < batch.B; ++b)
    for (int t = 0; t < P; ++t) {
      const double l = losses[std::size_t(b) * P + t];
      sum += l;
      if (!segments) continue;
      if (batch.repeat_target(b, t + 1)) repeat += l, ++repeats;
      else rest += l, ++rests;
    }
  timeline_.add_step(sum, batch.B * P, repeat, repeats, rest, rests);
  last_step_ = {float(sum / (double(batch.B) * P)), repeats ? float(repeat / repeats) : kNone, rests ? float(rest / rests) : kNone};
}

StepMetrics InductionTrainer::finish_step(double loss_sum, double correct) {
  const int steps = training_.finish_step();
  const double targets = double(batch_.B) * (batch_.T - 1);
  StepMetrics m{steps, epoch(), float(loss_sum / targets), float(correct / targets)};
  return m;
}

void InductionTrainer::probe(Backend backend) {
  InductionModel& m = model();
  m.begin_looking(probe_);
  m.run(backend);
  std::vector<const std::vector<float>*> patterns;
  for (int l = 0; l < m.layers(); ++l) patterns.push_back(&m.pattern(l));
  timeline_.add_point(steps_done(), head_scores(patterns, config_.heads, probe_));
}

InductionEvaluation InductionTrainer::evaluate(int samples, const HeadAblation* off, Backend backend) {
  Rng eval_rng(config_.seed, kEvalStream);
  InductionBatch batch, chunk;
  if (config_.task == InductionTaskKind::text) sample_text_batch(text_, config_.context, eval_rng, samples, batch);
  else sample_repeat_batch(config_, eval_rng, samples, batch);
  InductionModel& m = model();
  const int T = config_.context, P = T - 1, L = config_.layers, H = config_.heads;
  InductionEvaluation e;
  e.samples = samples;
  e.position_loss.assign(std::size_t(P), 0.0f);
  std::vector<double> position(std::size_t(P), 0.0);
  double loss = 0.0, repeat = 0.0, rest = 0.0;
  long repeats = 0, rests = 0, correct = 0;
  // Scores on the repeat task's sequences even when the model trains on text (its probes).
  InductionBatch scored;
  Rng score_rng(config_.seed, kEvalStream + 1);
  if (config_.task == InductionTaskKind::text) sample_repeat_batch(repeat_config(config_, vocab_), score_rng, samples, scored);
  std::vector<double> score_sums(4 * std::size_t(L) * H, 0.0);
  const auto add_scores = [&](const InductionBatch& b) {
    std::vector<const std::vector<float>*> patterns;
    for (int l = 0; l < L; ++l) patterns.push_back(&m.pattern(l));
    const HeadScores s = head_scores(patterns, H, b);
    const std::vector<float>* parts[4] = {&s.previous, &s.duplicate, &s.induction, &s.first};
    for (int k = 0; k < 4; ++k)
      for (std::size_t i = 0; i < std::size_t(L) * H; ++i) score_sums[std::size_t(k) * L * H + i] += double((*parts[k])[i]) * b.B;
  };
  for (int first = 0; first < samples; first += kEvalChunk) {
    const int count = std::min(kEvalChunk, samples - first);
    slice_induction_batch(batch, first, count, chunk);
    m.begin_looking(chunk, off);
    m.run(backend);
    correct += correct_predictions(m.logits(), chunk);
    const std::vector<float>& losses = m.target_losses();
    for (int b = 0; b < count; ++b)
      for (int t = 0; t < P; ++t) {
        const double l = losses[std::size_t(b) * P + t];
        loss += l;
        position[std::size_t(t)] += l;
        if (config_.task != InductionTaskKind::repeat) continue;
        if (chunk.repeat_target(b, t + 1)) repeat += l, ++repeats;
        else rest += l, ++rests;
      }
    if (config_.task == InductionTaskKind::repeat) {
      add_scores(chunk);
    } else {
      slice_induction_batch(scored, first, count, chunk);
      m.begin_looking(chunk, off);
      m.run(backend);
      add_scores(chunk);
    }
  }
  e.loss = loss / (double(samples) * P);
  e.accuracy = double(correct) / (double(samples) * P);
  e.repeat_loss = repeats ? repeat / double(repeats) : kNone;
  e.rest_loss = rests ? rest / double(rests) : kNone;
  for (int t = 0; t < P; ++t) e.position_loss[std::size_t(t)] = float(position[std::size_t(t)] / samples);
  // Targets are numbered 1 .. T-1 (the token they predict); Olsson's tokens 50 and 500 of 512.
  e.late_position = P;
  e.early_position = std::max(1, int(std::lround(P / 10.0)));
  e.icl_score = double(e.position_loss[std::size_t(e.late_position - 1)]) - e.position_loss[std::size_t(e.early_position - 1)];
  e.scores.layers = L;
  e.scores.heads = H;
  std::vector<float>* parts[4] = {&e.scores.previous, &e.scores.duplicate, &e.scores.induction, &e.scores.first};
  for (int k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < std::size_t(L) * H; ++i) parts[k]->push_back(float(score_sums[std::size_t(k) * L * H + i] / samples));
  return e;
}

std::string InductionTrainer::inspect(const std::vector<std::int32_t>& tokens, Backend backend, InductionInspection& out) {
  const int T = int(tokens.size());
  if (T < 2 || T > config_.context)
    return "the sequence must have 2 to " + std::to_string(config_.context) + " tokens (the context), got " + std::to_string(T);
  for (int t = 0; t < T; ++t)
    if (tokens[std::size_t(t)] < 0 || tokens[std::size_t(t)] >= vocab_)
      return "tokens[" + std::to_string(t) + "] = " + std::to_string(tokens[std::size_t(t)]) + " is out of range: ids are 0 to " +
             std::to_string(vocab_ - 1);
  InductionBatch batch;
  batch_of_sequences(tokens, 1, T, batch);
  InductionModel& m = model();
  m.begin_looking(batch);
  m.run(backend);
  const int L = config_.layers, H = config_.heads;
  out.layers = L;
  out.heads = H;
  out.T = T;
  out.tokens = tokens;
  out.weights.clear();
  for (int l = 0; l < L; ++l) out.weights.insert(out.weights.end(), m.pattern(l).begin(), m.pattern(l).end());
  out.predictions.resize(std::size_t(T));
  out.confidence.resize(std::size_t(T));
  const RowMatrix& logits = m.logits();
  for (int t = 0; t < T; ++t) {
    Eigen::Index best = 0;
    const float max_logit = logits.row(t).maxCoeff(&best);
    float sum = 0.0f;
    for (Eigen::Index c = 0; c < logits.cols(); ++c) sum += std::exp(logits(t, c) - max_logit);
    out.predictions[std::size_t(t)] = int(best);
    out.confidence[std::size_t(t)] = 1.0f / sum;
  }
  out.losses = m.target_losses();
  return {};
}

std::string InductionTrainer::set_sequences(const Json& sequences) {
  const int T = config_.context;
  if (!sequences.is_array()) return "the data must be a JSON array of token-id sequences";
  const std::size_t count = sequences.items().size();
  if (count == 0) return "the data has no sequences";
  if (double(count) * T > double(kMaxDataTokens))
    return "the data has " + std::to_string(count) + " sequences of " + std::to_string(T) + " tokens; the lab reads at most " +
           std::to_string(kMaxDataTokens) + " tokens";
  std::vector<std::int32_t> ids;
  ids.reserve(count * std::size_t(T));
  for (std::size_t i = 0; i < count; ++i) {
    const Json& s = sequences.items()[i];
    const std::string which = "sequence " + std::to_string(i);
    if (!s.is_array()) return which + " is not an array of token ids";
    if (s.items().size() != std::size_t(T))
      return which + " has " + std::to_string(s.items().size()) + " tokens; this model's context is " + std::to_string(T);
    for (std::size_t t = 0; t < s.items().size(); ++t) {
      const Json& v = s.items()[t];
      const double x = v.is_number() ? v.as_number() : std::numeric_limits<double>::quiet_NaN();
      if (!(x == std::floor(x) && x >= 0 && x < vocab_))
        return which + ", token " + std::to_string(t) + ": " + (v.is_number() ? number_text(x) : "not a number") +
               " is not an id of this model's vocabulary (0 to " + std::to_string(vocab_ - 1) + ")";
      ids.push_back(std::int32_t(x));
    }
  }
  sequences_ = std::move(ids);
  sequences_used_ = 0;
  return {};
}

// ---- records

namespace {

const Choices<InductionTaskKind> kTasks = {{InductionTaskKind::repeat, "repeat"}, {InductionTaskKind::text, "text"}};

template <class Fields, class Config>
void config_fields(Fields& f, Config& c) {
  f("task", c.task, kTasks);
  f("layers", c.layers);
  f("heads", c.heads);
  f("dModel", c.d_model);
  f("dHead", c.d_head);
  f("mlp", c.mlp);
  f("layerNorm", c.layer_norm);
  f("vocab", c.vocab);
  f("context", c.context);
  f("batch", c.batch);
  f("lr", c.lr);
  f("seed", c.seed);
  f("text", c.text);
}
const auto declare_config = [](auto& f, auto& c) { config_fields(f, c); };

Json scores_record(const HeadScores& s) {
  Json out = Json::object();
  out.set("previous", s.previous);
  out.set("duplicate", s.duplicate);
  out.set("induction", s.induction);
  out.set("first", s.first);
  return out;
}

Json number_or_null(double x) { return std::isfinite(x) ? Json(x) : Json(); }

// "L.H" or [L, H] -> a head; "" or what is wrong.
std::string read_head(const Json& v, LayerHead& out) {
  if (v.is_string()) {
    const std::string& s = v.as_string();
    const std::size_t dot = s.find('.');
    const auto digits = [](const std::string& t) {
      return !t.empty() && t.size() <= 4 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dot == std::string::npos || !digits(s.substr(0, dot)) || !digits(s.substr(dot + 1)))
      return "a head is written layer.head (e.g. 1.3), got '" + s.substr(0, 40) + "'";
    out = {std::stoi(s.substr(0, dot)), std::stoi(s.substr(dot + 1))};
    return {};
  }
  if (v.is_array() && v.items().size() == 2 && v.items()[0].is_number() && v.items()[1].is_number()) {
    const double l = v.items()[0].as_number(), h = v.items()[1].as_number();
    if (l == std::floor(l) && h == std::floor(h) && std::fabs(l) < 1e6 && std::fabs(h) < 1e6) {
      out = {int(l), int(h)};
      return {};
    }
  }
  return "a head is written layer.head (e.g. 1.3) or [layer, head]";
}

}  // namespace

std::string InductionTrainer::config_error(const Json& config) {
  InductionConfig c;
  std::string error = from_record(config, c, declare_config);
  return error.empty() ? validate_induction_config(c) : error;
}

InductionConfig InductionTrainer::config_from(const Json& config) {
  InductionConfig c;
  from_record(config, c, declare_config);
  return c;
}

// The lab's Steps (1,500: the phase change comes after about 400 at the defaults) and its text preset's.
int InductionTrainer::default_steps(const InductionConfig& c) { return c.task == InductionTaskKind::text ? 3000 : 1500; }

Json InductionTrainer::config_to_record(const InductionConfig& c) {
  Json out = to_record(c, declare_config);
  out.set("steps", default_steps(c));
  return out;
}

Json InductionTrainer::defaults(const std::string& task) {
  InductionConfig c;
  if (task == "text") c.task = InductionTaskKind::text;
  return config_to_record(c);
}

Json InductionTrainer::config_record() const {
  Json out = config_to_record(config_);
  out.set("vocabSize", vocab_);
  out.set("dMlp", config_.mlp ? config_.d_mlp() : 0);
  out.set("parameters", double(parameter_count_));
  out.set("probeSequences", kProbeSequences);
  if (config_.task == InductionTaskKind::text) {
    Json alphabet = Json::array();
    for (std::uint32_t cp : text_.alphabet) alphabet.push(Json(int(cp)));
    out.set("alphabet", std::move(alphabet));
  }
  return out;
}

std::string InductionTrainer::evaluate_record(const Json& options, Backend backend, Json& out) {
  int samples = kDefaultEvalSamples;
  HeadAblation off;
  if (options.is_object()) {
    const Json* n = options.find("samples");
    if (n && n->is_number() && std::isfinite(n->as_number()))
      samples = int(std::max(1.0, std::min(n->as_number(), double(kMaxEvalSamples))));
    if (const Json* a = options.find("ablate"); a && !a->is_null()) {
      if (!a->is_array()) return "ablate must be a list of heads (layer.head)";
      if (a->items().size() > std::size_t(config_.layers) * config_.heads)
        return "ablate lists " + std::to_string(a->items().size()) + " heads; this model has " +
               std::to_string(config_.layers * config_.heads);
      std::vector<LayerHead> heads;
      for (const Json& v : a->items()) {
        LayerHead h;
        std::string error = read_head(v, h);
        if (!error.empty()) return error;
        heads.push_back(h);
      }
      std::string error = off.set(heads, config_.layers, config_.heads);
      if (!error.empty()) return error;
    }
  }
  const InductionEvaluation e = evaluate(samples, off.empty() ? nullptr : &off, backend);
  out = Json::object();
  out.set("samples", e.samples);
  out.set("loss", e.loss);
  out.set("accuracy", e.accuracy);
  out.set("repeatLoss", number_or_null(e.repeat_loss));
  out.set("restLoss", number_or_null(e.rest_loss));
  out.set("positionLoss", e.position_loss);
  out.set("iclScore", e.icl_score);
  out.set("earlyPosition", e.early_position);
  out.set("latePosition", e.late_position);
  out.set("layers", config_.layers);
  out.set("heads", config_.heads);
  out.set("scores", scores_record(e.scores));
  Json ablated = Json::array();
  for (const LayerHead& h : off.heads()) ablated.push(Json(layer_head_text(h)));
  out.set("ablated", std::move(ablated));
  return {};
}

std::string InductionTrainer::inspect_record(const Json& input, Backend backend, Json& out) {
  if (!input.is_object()) return "inspect takes {tokens}";
  const Json* tokens = input.find("tokens");
  std::vector<std::int32_t> ids;
  std::string error = check_array_record("tokens", tokens);
  if (error.empty()) error = read_int32s("tokens", *tokens, ids);
  if (!error.empty()) return error;
  InductionInspection i;
  error = inspect(ids, backend, i);
  if (!error.empty()) return error;
  out = Json::object();
  out.set("layers", i.layers);
  out.set("heads", i.heads);
  out.set("T", i.T);
  out.set("tokens", i.tokens);
  out.set("weights", i.weights);
  out.set("predictions", i.predictions);
  out.set("confidence", i.confidence);
  out.set("losses", i.losses);
  return {};
}

std::string InductionTrainer::data_record(const std::string& part, Json& out) const {
  if (part == "fixedSample") {
    out = Json::object();
    out.set("tokens", fixed_sample_.tokens);
    out.set("copyStart", fixed_sample_.copy_start[0]);
    out.set("segment", fixed_sample_.segment[0]);
    return {};
  }
  if (part == "lastStep") {  // the losses of the last step's batch: all targets, the repeat's, the rest's
    out = Json::object();
    out.set("step", steps_done());
    out.set("loss", number_or_null(last_step_[0]));
    out.set("repeatLoss", number_or_null(last_step_[1]));
    out.set("restLoss", number_or_null(last_step_[2]));
    return {};
  }
  if (part == "timeline") {
    const std::vector<TimelinePoint>& points = timeline_.points();
    std::vector<std::int32_t> steps;
    std::vector<float> loss, repeat, rest, previous, duplicate, induction, first;
    for (const TimelinePoint& p : points) {
      steps.push_back(p.step);
      loss.push_back(p.loss);
      repeat.push_back(p.repeat_loss);
      rest.push_back(p.rest_loss);
      previous.insert(previous.end(), p.scores.previous.begin(), p.scores.previous.end());
      duplicate.insert(duplicate.end(), p.scores.duplicate.begin(), p.scores.duplicate.end());
      induction.insert(induction.end(), p.scores.induction.begin(), p.scores.induction.end());
      first.insert(first.end(), p.scores.first.begin(), p.scores.first.end());
    }
    out = Json::object();
    out.set("every", timeline_.every());
    out.set("layers", config_.layers);
    out.set("heads", config_.heads);
    out.set("steps", steps);
    out.set("loss", loss);
    out.set("repeatLoss", repeat);
    out.set("restLoss", rest);
    out.set("previous", previous);
    out.set("duplicate", duplicate);
    out.set("induction", induction);
    out.set("first", first);
    out.set("phaseStep", timeline_.phase_step());
    const int formed = timeline_.formed_index();
    out.set("formedStep", formed >= 0 ? points[std::size_t(formed)].step : -1);
    return {};
  }
  return "the Induction trainer's data has the parts 'fixedSample', 'timeline' and 'lastStep', got '" + part + "'";
}

std::string InductionTrainer::set_data_record(const Json& input) {
  const Json* sequences = input.is_object() ? input.find("sequences") : nullptr;
  if (!sequences) return "set the data as {sequences: [[ids...], ...]}";
  return set_sequences(*sequences);
}

}  // namespace attnlab
