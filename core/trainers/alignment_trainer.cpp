#include "alignment_trainer.h"

#include <algorithm>
#include <cmath>

#include "../losses.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters, training batches, the fixed sample, evaluation.
constexpr std::uint64_t kInitStream = 1, kDataStream = 2, kSampleStream = 3, kEvalStream = 4;

}  // namespace

AlignmentTrainer::AlignmentTrainer(const AlignmentConfig& config)
    : config_(config),
      data_rng_(config.seed, kDataStream),
      // every copy draws the same initial values; only copy 0's are trained (the others take them each step)
      models_(config.batch, [&config] {
        Rng init_rng(config.seed, kInitStream);
        return std::make_unique<AlignmentModel>(config, init_rng);
      }) {
  shards_.resize(models_.shards());
  AdamOptions options;
  options.lr = config.lr;
  adam_ = std::make_unique<Adam>(parameters(), options);
  Rng sample_rng(config.seed, kSampleStream);
  sample_alignment_batch(config_, sample_rng, 1, fixed_sample_);
}

ParameterList AlignmentTrainer::parameters() { return model().parameters(); }

void AlignmentTrainer::set_lr(double lr) {
  config_.lr = lr;
  adam_->options.lr = lr;
}

StepMetrics AlignmentTrainer::step(Backend backend) {
  sample_alignment_batch(config_, data_rng_, config_.batch, batch_);
  const int shards = models_.shards();
  for (int s = 0; s < shards; ++s) slice_alignment_batch(batch_, models_.first(s), models_.count(s), shards_[s]);
  const double token_count = double(batch_.B) * batch_.T;
  std::vector<double> loss_sums(shards);
  models_.run([&](int s) { loss_sums[s] = models_.shard(s).train_pass(shards_[s], backend, token_count); });
  double loss_sum = 0.0;
  int correct = 0;
  for (int s = 0; s < shards; ++s) {  // in shard order, so the sums are the same bits every run
    loss_sum += loss_sums[s];
    correct += models_.shard(s).correct_predictions(shards_[s]);
  }
  return finish_step(loss_sum, correct);
}

void AlignmentTrainer::begin_step() {
  adam_->zero_grad();
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
  adam_->step();
  ++steps_done_;
  const double tokens = double(batch_.B) * batch_.T;
  return {steps_done_, float(loss_sum / tokens), float(correct / tokens)};
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

}  // namespace attnlab
