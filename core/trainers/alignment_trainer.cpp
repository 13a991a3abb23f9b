#include "alignment_trainer.h"

#include <cmath>

#include "../losses.h"

namespace attnlab {

namespace {

// Independent PCG32 streams of one seed: parameters, training batches, the fixed sample, evaluation.
constexpr std::uint64_t kInitStream = 1, kDataStream = 2, kSampleStream = 3, kEvalStream = 4;

void rename(Parameter& p, const char* name) { p.name = name; }

int argmax_row(const RowMatrix& m, Eigen::Index row) {
  Eigen::Index best = 0;
  m.row(row).maxCoeff(&best);
  return int(best);
}

}  // namespace

AlignmentTrainer::AlignmentTrainer(const AlignmentConfig& config)
    : config_(config),
      init_rng_(config.seed, kInitStream),
      data_rng_(config.seed, kDataStream),
      tok_emb_(config.vocab_size(), config.d_model, init_rng_),
      in_pos_emb_(config.in_len(), config.d_model, init_rng_),
      out_pos_emb_(config.out_len(), config.d_model, init_rng_),
      attn_(config.d_model, config.heads, init_rng_),
      out_(config.d_model, config.vocab_size(), init_rng_) {
  rename(tok_emb_.weight, "tok_emb.weight");
  rename(in_pos_emb_.weight, "in_pos_emb.weight");
  rename(out_pos_emb_.weight, "out_pos_emb.weight");
  rename(attn_.in_proj_weight, "attn.in_proj_weight");
  rename(attn_.in_proj_bias, "attn.in_proj_bias");
  rename(attn_.out_proj_weight, "attn.out_proj.weight");
  rename(attn_.out_proj_bias, "attn.out_proj.bias");
  rename(out_.weight, "out.weight");
  rename(out_.bias, "out.bias");
  AdamOptions options;
  options.lr = config.lr;
  adam_ = std::make_unique<Adam>(parameters(), options);
  Rng sample_rng(config.seed, kSampleStream);
  sample_alignment_batch(config_, sample_rng, 1, fixed_sample_);
}

ParameterList AlignmentTrainer::parameters() {
  ParameterList list{&tok_emb_.weight, &in_pos_emb_.weight, &out_pos_emb_.weight};
  for (Parameter* p : attn_.parameters()) list.push_back(p);
  for (Parameter* p : out_.parameters()) list.push_back(p);
  return list;
}

void AlignmentTrainer::set_lr(double lr) {
  config_.lr = lr;
  adam_->options.lr = lr;
}

void AlignmentTrainer::embed(const AlignmentBatch& batch) {
  const int B = batch.B, S = batch.S, T = batch.T, E = config_.d_model;
  // Copy and reverse ask every batch element the same queries (the output positions): project them
  // once. Pointer adds each sample's query token, so its queries differ.
  const bool shared = !config_.pointer();
  key_in_.resize(std::size_t(B) * S, E);
  value_in_.resize(std::size_t(B) * S, E);
  query_in_.resize(std::size_t(shared ? 1 : B) * T, E);
  tok_emb_.forward(batch.keys.data(), B * S, key_in_);
  tok_emb_.forward(batch.values.data(), B * S, value_in_);
  for (int b = 0; b < B; ++b) {
    if (config_.positional) {
      key_in_.middleRows(std::size_t(b) * S, S) += in_pos_emb_.weight.value.topRows(S);
      value_in_.middleRows(std::size_t(b) * S, S) += in_pos_emb_.weight.value.topRows(S);
    }
    if (!shared) {
      query_in_.middleRows(std::size_t(b) * T, T) = out_pos_emb_.weight.value.topRows(T);
      query_in_.middleRows(std::size_t(b) * T, T).rowwise() += tok_emb_.weight.value.row(batch.query[b]);
    }
  }
  if (shared) query_in_ = out_pos_emb_.weight.value.topRows(T);
  MhaInputs in{B, T, S, query_in_.data(), key_in_.data(), value_in_.data()};
  in.query_shared = shared;
  attn_.prepare(in);
}

void AlignmentTrainer::head_forward(const AlignmentBatch& batch) {
  attn_.finish_forward();
  logits_.resize(std::size_t(batch.B) * batch.T, config_.vocab_size());
  out_.forward(attn_.output(), logits_);
}

void AlignmentTrainer::backward_embeddings(const AlignmentBatch& batch) {
  const int B = batch.B, S = batch.S, T = batch.T;
  const RowMatrix& dk = attn_.d_key();
  const RowMatrix& dv = attn_.d_value();
  const RowMatrix& dq = attn_.d_query();
  tok_emb_.backward(batch.keys.data(), B * S, dk);
  tok_emb_.backward(batch.values.data(), B * S, dv);
  for (int b = 0; b < B; ++b) {
    if (config_.positional) {
      in_pos_emb_.weight.grad.topRows(S) += dk.middleRows(std::size_t(b) * S, S);
      in_pos_emb_.weight.grad.topRows(S) += dv.middleRows(std::size_t(b) * S, S);
    }
    if (config_.pointer()) {
      out_pos_emb_.weight.grad.topRows(T) += dq.middleRows(std::size_t(b) * T, T);
      tok_emb_.weight.grad.row(batch.query[b]) += dq.middleRows(std::size_t(b) * T, T).colwise().sum();
    }
  }
  if (!config_.pointer()) out_pos_emb_.weight.grad.topRows(T) += dq;  // already summed over the batch
}

void AlignmentTrainer::begin_step() {
  adam_->zero_grad();
  sample_alignment_batch(config_, data_rng_, config_.batch, batch_);
  embed(batch_);
}

void AlignmentTrainer::middle_step() {
  head_forward(batch_);
  last_loss_ = cross_entropy(logits_, batch_.targets.data(), &d_logits_);
  out_.backward(attn_.output(), d_logits_, &d_ctx_);
  attn_.begin_backward(d_ctx_.data(), nullptr);
}

StepMetrics AlignmentTrainer::end_step() {
  attn_.finish_backward();
  backward_embeddings(batch_);
  adam_->step();
  ++steps_done_;
  int correct = 0;
  for (Eigen::Index i = 0; i < logits_.rows(); ++i) correct += argmax_row(logits_, i) == batch_.targets[i];
  return {steps_done_, last_loss_, float(correct) / float(logits_.rows())};
}

StepMetrics AlignmentTrainer::step(Backend backend) {
  begin_step();
  attention_forward(backend, attn_.kernel_forward_args());
  middle_step();
  attention_backward(backend, attn_.kernel_backward_args());
  return end_step();
}

AlignmentEvaluation AlignmentTrainer::evaluate(int samples, Backend backend) {
  Rng eval_rng(config_.seed, kEvalStream);
  AlignmentBatch batch;
  sample_alignment_batch(config_, eval_rng, samples, batch);
  embed(batch);
  attention_forward(backend, attn_.kernel_forward_args());
  head_forward(batch);
  AlignmentEvaluation e;
  e.samples = samples;
  e.loss = cross_entropy(logits_, batch.targets.data(), nullptr);
  int correct = 0;
  for (Eigen::Index i = 0; i < logits_.rows(); ++i) correct += argmax_row(logits_, i) == batch.targets[i];
  e.accuracy = double(correct) / double(logits_.rows());
  const int H = config_.heads, T = batch.T, S = batch.S;
  const std::vector<float>& w = attn_.weights();  // [B, H, T, S]
  e.head_mass.assign(H, 0.0);
  for (int b = 0; b < samples; ++b)
    for (int h = 0; h < H; ++h) {
      double mass = 0.0;
      for (int t = 0; t < T; ++t) {
        const float* row = &w[((std::size_t(b) * H + h) * T + t) * S];
        if (config_.task == AlignmentTaskKind::copy) mass += row[t];
        else if (config_.task == AlignmentTaskKind::reverse) mass += row[S - 1 - t];
        else
          for (int s = 0; s < S; ++s)
            if (batch.keys[std::size_t(b) * S + s] == batch.query[b]) mass += row[s];
      }
      e.head_mass[h] += mass / T;
    }
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
  embed(sample);
  attention_forward(backend, attn_.kernel_forward_args());
  head_forward(sample);
  out.H = config_.heads;
  out.T = sample.T;
  out.S = sample.S;
  out.weights = attn_.weights();
  out.weights_mean = attn_.weights_mean();
  out.predictions.resize(sample.T);
  out.confidence.resize(sample.T);
  for (int t = 0; t < sample.T; ++t) {
    const int best = argmax_row(logits_, t);
    const float max_logit = logits_(t, best);
    float sum = 0.0f;
    for (Eigen::Index c = 0; c < logits_.cols(); ++c) sum += std::exp(logits_(t, c) - max_logit);
    out.predictions[t] = best;
    out.confidence[t] = 1.0f / sum;
  }
  return {};
}

}  // namespace attnlab
