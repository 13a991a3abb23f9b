#include "marian.h"

#include <algorithm>
#include <cmath>

#include "../attention.h"
#include "../layers/activations.h"
#include "../layers/heads.h"
#include "../layers/layer_norm.h"

namespace attnlab {

namespace {

constexpr double kLayerNormEps = 1e-5;  // nn.LayerNorm's default, which Marian's layers keep

void layer_norm(RowMatrix& x, const std::vector<float>& weight, const std::vector<float>& bias) {
  layer_norm_forward(x, weight.data(), bias.data(), kLayerNormEps, x);
}

}  // namespace

MarianModel::MarianModel(const MarianConfig& config) : c_(config) {
  const int E = c_.d_model;
  output_ = PackedLinear(E, c_.vocab_size);
  auto norm = [E] { return Norm::identity(E); };
  auto attention = [E] { return Attention{PackedLinear(E, E), PackedLinear(E, E), PackedLinear(E, E), PackedLinear(E, E)}; };
  encoder_.reserve(std::size_t(c_.encoder_layers));
  for (int l = 0; l < c_.encoder_layers; ++l)
    encoder_.push_back({attention(), norm(), PackedLinear(E, c_.encoder_ffn), PackedLinear(c_.encoder_ffn, E), norm()});
  decoder_.reserve(std::size_t(c_.decoder_layers));
  for (int l = 0; l < c_.decoder_layers; ++l)
    decoder_.push_back({attention(), norm(), attention(), norm(), PackedLinear(E, c_.decoder_ffn), PackedLinear(c_.decoder_ffn, E), norm()});
  // MarianSinusoidalPositionalEmbedding: angle(p, j) = p / 10000^(2 (j div 2) / E); the first half of
  // the columns are sin of the even j, the second half cos of the odd j. In double, then float.
  positions_.resize(c_.max_positions, E);
  for (int p = 0; p < c_.max_positions; ++p)
    for (int j = 0; j < E; ++j) {
      const double angle = double(p) / std::pow(10000.0, 2.0 * double(j / 2) / double(E));
      if (j % 2 == 0) positions_(p, j / 2) = float(std::sin(angle));
      else positions_(p, E / 2 + j / 2) = float(std::cos(angle));
    }
  index_tensors();
}

void MarianModel::index_tensors() {
  auto linear = [this](const std::string& name, PackedLinear& p) { tensors_.linear(name, p); };
  auto norm = [this](const std::string& name, Norm& n) { tensors_.norm(name, n); };
  auto attention = [&](const std::string& name, Attention& a) {
    linear(name + ".q_proj", a.q);
    linear(name + ".k_proj", a.k);
    linear(name + ".v_proj", a.v);
    linear(name + ".out_proj", a.out);
  };
  tensors_.linear_weight("model.shared.weight", output_);
  tensors_.tensor("final_logits_bias", output_.bias_data());
  for (int l = 0; l < c_.encoder_layers; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    EncoderLayer& e = encoder_[std::size_t(l)];
    attention(p + "self_attn", e.self);
    norm(p + "self_attn_layer_norm", e.self_norm);
    linear(p + "fc1", e.fc1);
    linear(p + "fc2", e.fc2);
    norm(p + "final_layer_norm", e.final_norm);
  }
  for (int l = 0; l < c_.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    DecoderLayer& d = decoder_[std::size_t(l)];
    attention(p + "self_attn", d.self);
    norm(p + "self_attn_layer_norm", d.self_norm);
    attention(p + "encoder_attn", d.cross);
    norm(p + "encoder_attn_layer_norm", d.cross_norm);
    linear(p + "fc1", d.fc1);
    linear(p + "fc2", d.fc2);
    norm(p + "final_layer_norm", d.final_norm);
  }
}

float* MarianModel::storage(const std::string& canonical) { return tensors_.storage(canonical); }

bool MarianModel::set_linear_weight(const std::string& canonical, const float* w) {
  PackedLinear* p = tensors_.packed(canonical);
  if (!p) return false;
  p->set_weight(w);
  return true;
}

std::string MarianModel::check_ids(const char* what, const std::int32_t* ids, int n) const {
  if (n < 1) return std::string(what) + " has no tokens";
  if (n > c_.max_positions)
    return std::string(what) + " has " + std::to_string(n) + " tokens: this model has positions for " + std::to_string(c_.max_positions);
  for (int i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= c_.vocab_size)
      return std::string(what) + ": token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
             " is outside the vocabulary [0, " + std::to_string(c_.vocab_size) + ")";
  return {};
}

void MarianModel::embed(const std::int32_t* ids, int n, int first_position, RowMatrix& x) const {
  const float scale = c_.scale_embedding ? std::sqrt(float(c_.d_model)) : 1.0f;
  x.resize(n, c_.d_model);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < c_.d_model; ++j) x(i, j) = output_.weight(ids[i], j) * scale + positions_(first_position + i, j);
}

void MarianModel::feed_forward(const PackedLinear& fc1, const PackedLinear& fc2, const Norm& norm, RowMatrix& x) const {
  RowMatrix inner(x.rows(), fc1.out_features()), out(x.rows(), x.cols());
  fc1.forward(x, inner);
  silu_forward(inner, inner);  // Marian's "swish"
  fc2.forward(inner, out);
  x += out;
  layer_norm(x, norm.weight, norm.bias);
}

// ---- the encoder and the teacher-forced decoder, in stages around the kernel -------------------------

void MarianModel::encode(Backend backend, const std::int32_t* ids, int S) {
  begin_encode(ids, S);
  run_staged(backend, *this);
}

void MarianModel::decode(Backend backend, const std::int32_t* target, int T, const HeadAblation& heads_off) {
  begin_decode(target, T, heads_off);
  run_staged(backend, *this);
}

bool MarianModel::next_call(AttentionForward& call) {
  if (pending_ == Pending::none) return false;
  if (!projected_) {
    const int l = pending_layer_;
    switch (pending_) {
      case Pending::encoder_self: call_ = encoder_project(l); break;
      case Pending::decoder_self: call_ = decoder_project_self(l); break;
      case Pending::decoder_cross: call_ = decoder_project_cross(l); break;
      case Pending::step_self: call_ = step_project_self(l); break;
      case Pending::step_cross: call_ = step_project_cross(l, pending_beam_); break;
      case Pending::none: break;
    }
  }
  const StagedAttention& s = call_;
  call = {};
  call.shape = {s.B, s.H, s.T, s.S, s.D};
  call.kv_stride = s.kv_stride;
  call.scale = 1.0f / std::sqrt(float(s.D));
  call.q = s.q;
  call.k = s.k;
  call.v = s.v;
  call.mask = {s.mask, 0, 0};  // one [T, S] mask for every head
  return true;
}

void MarianModel::finish_call(const float* weights, const float* out) {
  const int l = pending_layer_;
  switch (pending_) {
    case Pending::encoder_self: encoder_finish(l, weights, out); break;
    case Pending::decoder_self: decoder_finish_self(l, weights, out); break;
    case Pending::decoder_cross: decoder_finish_cross(l, weights, out); break;
    case Pending::step_self: step_finish_self(l, weights, out); break;
    case Pending::step_cross: step_finish_cross(l, pending_beam_, weights, out); break;
    case Pending::none: break;
  }
  call_ = {};
}

std::string MarianModel::check_pending() const {
  if (pending_ == Pending::none) return "no staged pass is under way: begin the encoder or the decoder first";
  if (!projected_) return "ask for the next attention call first (next_call)";
  return {};
}

MarianModel::StagedAttention MarianModel::staged(int H, int T, int S, const float* k, const float* v, const float* mask) const {
  return {H, T, S, c_.d_model / H, stage_q_.data(), k, v, mask};
}

void MarianModel::begin_encode(const std::int32_t* ids, int S) {
  S_ = S;
  T_ = 0;  // a decoder pass belongs to the source it read: a new encoding ends it
  encoded_ = false;  // until the last layer's finish: the decoder needs the whole encoder's keys and values
  projected_ = false;
  embed(ids, S, 0, stage_x_);
  encoder_attention_.assign(std::size_t(c_.encoder_layers), {});
  pending_ = Pending::encoder_self;
  pending_layer_ = 0;
}

MarianModel::StagedAttention MarianModel::project_self_attention(const Attention& attention, int H, const float* mask) {
  const int N = int(stage_x_.rows()), D = c_.d_model / H;
  RowMatrix q(N, c_.d_model), k(N, c_.d_model), v(N, c_.d_model);
  attention.q.forward(stage_x_, q);
  attention.k.forward(stage_x_, k);
  attention.v.forward(stage_x_, v);
  split_heads(q, 1, N, H, D, stage_q_);
  split_heads(k, 1, N, H, D, stage_k_);
  split_heads(v, 1, N, H, D, stage_v_);
  projected_ = true;
  return staged(H, N, N, stage_k_.data(), stage_v_.data(), mask);
}

MarianModel::StagedAttention MarianModel::encoder_project(int l) {
  return project_self_attention(encoder_[std::size_t(l)].self, c_.encoder_heads, nullptr);
}

void MarianModel::encoder_finish(int l, const float* weights, const float* out) {
  const EncoderLayer& layer = encoder_[std::size_t(l)];
  const int E = c_.d_model, H = c_.encoder_heads, D = E / H;
  encoder_attention_[std::size_t(l)].assign(weights, weights + std::size_t(H) * S_ * S_);
  attend_output(layer.self, layer.self_norm, out, H, D);
  feed_forward(layer.fc1, layer.fc2, layer.final_norm, stage_x_);
  next_stage(Pending::encoder_self, l, c_.encoder_layers);
  if (pending_ != Pending::none) return;
  encoder_out_ = stage_x_;
  // Each decoder layer's cross-attention keys and values: the encoder output, projected once.
  const int Hd = c_.decoder_heads, Dd = E / Hd;
  RowMatrix k(S_, E), v(S_, E);
  cross_k_.assign(std::size_t(c_.decoder_layers), {});
  cross_v_.assign(std::size_t(c_.decoder_layers), {});
  for (int d = 0; d < c_.decoder_layers; ++d) {
    decoder_[std::size_t(d)].cross.k.forward(encoder_out_, k);
    split_heads(k, 1, S_, Hd, Dd, cross_k_[std::size_t(d)]);
    decoder_[std::size_t(d)].cross.v.forward(encoder_out_, v);
    split_heads(v, 1, S_, Hd, Dd, cross_v_[std::size_t(d)]);
  }
  encoded_ = true;
}

void MarianModel::begin_decode(const std::int32_t* target, int T, const HeadAblation& heads_off) {
  heads_off_ = heads_off;
  T_ = T;
  embed(target, T, 0, stage_x_);
  causal_.assign(std::size_t(T) * T, 0.0f);
  for (int t = 0; t < T; ++t)
    for (int s = t + 1; s < T; ++s) causal_[std::size_t(t) * T + s] = -INFINITY;
  decoder_attention_.assign(std::size_t(c_.decoder_layers), {});
  cross_attention_.assign(std::size_t(c_.decoder_layers), {});
  pending_ = Pending::decoder_self;
  pending_layer_ = 0;
  projected_ = false;
}

MarianModel::StagedAttention MarianModel::decoder_project_self(int l) {
  return project_self_attention(decoder_[std::size_t(l)].self, c_.decoder_heads, causal_.data());  // causal
}

void MarianModel::decoder_finish_self(int l, const float* weights, const float* out) {
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int H = c_.decoder_heads, D = c_.d_model / H;
  decoder_attention_[std::size_t(l)].assign(weights, weights + std::size_t(H) * T_ * T_);
  attend_output(layer.self, layer.self_norm, out, H, D);
  pending_ = Pending::decoder_cross;
}

MarianModel::StagedAttention MarianModel::decoder_project_cross(int l) {
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int H = c_.decoder_heads, D = c_.d_model / H;
  RowMatrix q(T_, c_.d_model);
  layer.cross.q.forward(stage_x_, q);
  split_heads(q, 1, T_, H, D, stage_q_);
  projected_ = true;
  return staged(H, T_, S_, cross_k_[std::size_t(l)].data(), cross_v_[std::size_t(l)].data(), nullptr);
}

void MarianModel::decoder_finish_cross(int l, const float* weights, const float* out) {
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int H = c_.decoder_heads, D = c_.d_model / H;
  cross_attention_[std::size_t(l)].assign(weights, weights + std::size_t(H) * T_ * S_);
  attend_output(layer.cross, layer.cross_norm, out, H, D, l);
  feed_forward(layer.fc1, layer.fc2, layer.final_norm, stage_x_);
  next_stage(Pending::decoder_self, l, c_.decoder_layers);
  if (pending_ == Pending::none) project_logits(stage_x_, logits_);
}

void MarianModel::attend_output(const Attention& attention, const Norm& norm, const float* out, int H, int D, int ablated_layer) {
  // x = LayerNorm(x + out_proj(the heads' outputs merged))
  projected_ = false;
  const int N = int(stage_x_.rows());
  RowMatrix context, attended(N, c_.d_model);
  merge_heads(out, 1, N, H, D, context);
  if (ablated_layer >= 0) heads_off_.apply(ablated_layer, context, D);  // cross heads switched off: z zeroed before out_proj
  attention.out.forward(context, attended);
  stage_x_ += attended;
  layer_norm(stage_x_, norm.weight, norm.bias);
}

void MarianModel::next_stage(Pending first, int l, int layers) {
  pending_layer_ = l + 1;
  pending_ = pending_layer_ < layers ? first : Pending::none;
}

void MarianModel::project_logits(ConstMatrixRef x, RowMatrix& logits) const {
  // logits[n, v] = x[n] . shared[v] + final_logits_bias[v]: the packed panels are streamed once per call
  // for up to four rows of x (a decoding step's beams), 122 MB of them for opus-mt's 59,514 x 512.
  logits.resize(x.rows(), c_.vocab_size);
  output_.forward(x, logits);
}

// ---- generation's decoding steps, in stages through the key/value cache ------------------------------

void MarianModel::start_steps(int beams, const HeadAblation& heads_off) {
  heads_off_ = heads_off;
  cache_.reset(c_.decoder_layers, beams, c_.decoder_heads, c_.d_model / c_.decoder_heads, c_.max_positions);
}

void MarianModel::begin_step(const std::vector<int>& tokens, int t) {
  const int B = int(tokens.size());
  stage_x_.resize(B, c_.d_model);
  RowMatrix one;
  for (int b = 0; b < B; ++b) {
    const std::int32_t id = tokens[std::size_t(b)];
    embed(&id, 1, t, one);
    stage_x_.row(b) = one.row(0);
  }
  step_position_ = t;
  cache_.truncate(t);
  cache_.extend(1);
  step_context_.resize(B, c_.d_model);
  step_cross_.assign(std::size_t(B), std::vector<float>(std::size_t(c_.decoder_layers) * c_.decoder_heads * S_));
  pending_ = Pending::step_self;
  pending_layer_ = 0;
  projected_ = false;
}

MarianModel::StagedAttention MarianModel::step_project_self(int l) {
  // q, k, v of each beam's token; k and v appended to its rows of the cache: [B, H, t + 1, D] in place.
  const Attention& self = decoder_[std::size_t(l)].self;
  const int B = int(stage_x_.rows()), E = c_.d_model, H = c_.decoder_heads, D = E / H, t = step_position_;
  RowMatrix q(B, E), k(B, E), v(B, E);
  self.q.forward(stage_x_, q);
  self.k.forward(stage_x_, k);
  self.v.forward(stage_x_, v);
  split_heads(q, B, 1, H, D, stage_q_);  // B sequences of one token: [B, H, 1, D]
  for (int b = 0; b < B; ++b) {
    split_heads(k.data() + std::size_t(b) * E, std::size_t(E), 1, H, D, cache_.key(l, b, 0, t), cache_.stride());
    split_heads(v.data() + std::size_t(b) * E, std::size_t(E), 1, H, D, cache_.value(l, b, 0, t), cache_.stride());
  }
  projected_ = true;
  StagedAttention s = staged(H, 1, t + 1, cache_.keys(l), cache_.values(l), nullptr);  // one query sees every key
  s.B = B;
  s.kv_stride = cache_.stride();
  return s;
}

void MarianModel::step_finish_self(int l, const float* weights, const float* out) {
  (void)weights;  // a step's own row is not kept: generate() shows the cross-attention
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int B = int(stage_x_.rows()), E = c_.d_model, H = c_.decoder_heads, D = E / H;
  RowMatrix attended(B, E);
  merge_heads(out, B, 1, H, D, step_context_);
  layer.self.out.forward(step_context_, attended);
  stage_x_ += attended;
  layer_norm(stage_x_, layer.self_norm.weight, layer.self_norm.bias);
  projected_ = false;
  pending_ = Pending::step_cross;
  pending_beam_ = 0;
}

MarianModel::StagedAttention MarianModel::step_project_cross(int l, int beam) {
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int H = c_.decoder_heads;
  if (beam == 0) {
    // Every beam's query at once ([B, H, D]: beam b's [H, 1, D] at b H D).
    RowMatrix q(stage_x_.rows(), c_.d_model);
    layer.cross.q.forward(stage_x_, q);
    stage_q_ = std::vector<float>(q.data(), q.data() + q.size());
  }
  projected_ = true;
  StagedAttention s = staged(H, 1, S_, cross_k_[std::size_t(l)].data(), cross_v_[std::size_t(l)].data(), nullptr);
  s.q = stage_q_.data() + std::size_t(beam) * c_.d_model;
  return s;
}

void MarianModel::step_finish_cross(int l, int beam, const float* weights, const float* out) {
  const DecoderLayer& layer = decoder_[std::size_t(l)];
  const int B = int(stage_x_.rows()), E = c_.d_model, H = c_.decoder_heads, D = E / H, S = S_;
  std::copy(weights, weights + std::size_t(H) * S, step_cross_[std::size_t(beam)].begin() + long(std::size_t(l) * H * S));
  merge_heads(out, D, 1, H, D, step_context_.data() + std::size_t(beam) * E, std::size_t(E));  // beam's row of [B, E]
  projected_ = false;
  if (beam + 1 < B) {
    pending_beam_ = beam + 1;
    return;
  }
  RowMatrix attended(B, E);
  heads_off_.apply(l, step_context_, D);  // cross heads switched off: z zeroed before out_proj
  layer.cross.out.forward(step_context_, attended);
  stage_x_ += attended;
  layer_norm(stage_x_, layer.cross_norm.weight, layer.cross_norm.bias);
  feed_forward(layer.fc1, layer.fc2, layer.final_norm, stage_x_);
  next_stage(Pending::step_self, l, c_.decoder_layers);
  if (pending_ == Pending::none) project_logits(stage_x_, step_logits_);
}

namespace {

// log_softmax of a row in double (HF takes it in float32; the difference is far below the 1e-4 checks).
std::vector<double> log_softmax(const float* z, int V) {
  double max = -INFINITY;
  for (int v = 0; v < V; ++v) max = std::max(max, double(z[v]));
  double sum = 0.0;
  for (int v = 0; v < V; ++v) sum += std::exp(double(z[v]) - max);
  const double log_sum = max + std::log(sum);
  std::vector<double> out(static_cast<std::size_t>(V));
  for (int v = 0; v < V; ++v) out[std::size_t(v)] = double(z[v]) - log_sum;
  return out;
}

}  // namespace

MarianModel::Generation MarianModel::generate(Backend backend, int num_beams, int max_length, const HeadAblation& heads_off) {
  const int B = std::max(1, num_beams), V = c_.vocab_size;
  max_length = std::max(2, std::min(max_length, c_.max_positions));
  start_steps(B, heads_off);
  Generation result;
  // Live beams: ids, summed log-probabilities, and each generated token's cross-attention.
  std::vector<std::vector<int>> seqs(std::size_t(B), std::vector<int>{c_.decoder_start_id});
  // HF starts beam search with one live beam: the others' scores are -1e9 until the first step.
  std::vector<double> scores(std::size_t(B), -1e9);
  scores[0] = 0.0;
  std::vector<std::vector<std::vector<float>>> history(static_cast<std::size_t>(B));
  struct Hypothesis {
    std::vector<int> ids;
    double score;
    std::vector<std::vector<float>> cross;
  };
  std::vector<Hypothesis> finished;
  const double lp = c_.length_penalty;
  bool done = false;
  for (int length = 1; length < max_length; ++length) {
    std::vector<int> last(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) last[std::size_t(b)] = seqs[std::size_t(b)].back();
    begin_step(last, length - 1);
    run_staged(backend, *this);
    RowMatrix& logits = step_logits_;
    for (int b = 0; b < B; ++b) history[std::size_t(b)].push_back(step_cross_[std::size_t(b)]);
    // The last position max_length allows gets </s> (forced_eos_token_id), as HF's processor does.
    const bool force_eos = c_.forced_eos_id >= 0 && length == max_length - 1;
    if (B == 1) {
      // Greedy: the most likely token that is not a bad word.
      float* z = logits.row(0).data();
      for (int bad : c_.bad_words) z[bad] = -INFINITY;
      if (force_eos)
        for (int v = 0; v < V; ++v)
          if (v != c_.forced_eos_id) z[v] = -INFINITY;
      const int next = int(std::max_element(z, z + V) - z);
      seqs[0].push_back(next);
      if (next == c_.eos_id) break;
      continue;
    }
    // Beam search: every (beam, token) candidate scored by its beam's sum of log-probabilities.
    std::vector<std::pair<double, long>> candidates;
    candidates.reserve(std::size_t(B) * V);
    for (int b = 0; b < B; ++b) {
      std::vector<double> logp = log_softmax(logits.row(b).data(), V);
      for (int bad : c_.bad_words) logp[std::size_t(bad)] = -INFINITY;
      if (force_eos)
        for (int v = 0; v < V; ++v)
          if (v != c_.forced_eos_id) logp[std::size_t(v)] = -INFINITY;
      for (int v = 0; v < V; ++v) candidates.push_back({scores[std::size_t(b)] + logp[std::size_t(v)], long(b) * V + v});
    }
    const long keep = std::min<long>(2L * B, long(candidates.size()));
    std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                      [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    std::vector<std::vector<int>> next_seqs;
    std::vector<double> next_scores;
    std::vector<int> origin;
    BeamStep record;
    for (long i = 0; i < keep && int(next_seqs.size()) < B; ++i) {
      const int b = int(candidates[std::size_t(i)].second / V), token = int(candidates[std::size_t(i)].second % V);
      const double score = candidates[std::size_t(i)].first;
      if (token == c_.eos_id) {
        // A hypothesis ends: scored by its length (HF: the ids so far, the start token included).
        if (i >= B) continue;  // only the top B candidates may end a hypothesis
        std::vector<int> ids = seqs[std::size_t(b)];
        ids.push_back(token);
        finished.push_back({ids, score / std::pow(double(seqs[std::size_t(b)].size()), lp), history[std::size_t(b)]});
        record.finished.push_back(b);
        continue;
      }
      std::vector<int> ids = seqs[std::size_t(b)];
      ids.push_back(token);
      next_seqs.push_back(std::move(ids));
      next_scores.push_back(score);
      origin.push_back(b);
    }
    // Keep only the best B finished hypotheses (HF's BeamHypotheses).
    std::stable_sort(finished.begin(), finished.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (int(finished.size()) > B) finished.resize(std::size_t(B));
    // The cache and the histories follow the beams kept.
    cache_.reorder(origin);
    std::vector<std::vector<std::vector<float>>> next_history;
    for (int b : origin) next_history.push_back(history[std::size_t(b)]);
    history = std::move(next_history);
    seqs = std::move(next_seqs);
    scores = std::move(next_scores);
    record.beams = seqs;
    for (double s : scores) record.scores.push_back(float(s));
    result.steps.push_back(std::move(record));
    // Done when B hypotheses are finished and (early_stopping false) the step's best candidate, scored
    // by the generated length (the ids after this step less the start token: `length`), cannot beat the
    // worst of them: HF's BeamHypotheses.is_done with its best candidate (transformers 4.35 .. 4.49).
    if (int(finished.size()) == B) {
      done = c_.early_stopping || finished.back().score >= candidates.front().first / std::pow(double(length), lp);
      if (done) break;
    }
  }
  if (B == 1) {
    result.ids = seqs[0];
    result.cross = history[0];
    return result;
  }
  // Stopped by max_length: the beams still live count as hypotheses too, scored by their generated
  // length (less the start token), each kept only if it beats the worst of B (BeamHypotheses.add).
  if (!done) {
    for (int b = 0; b < B; ++b) {
      const double score = scores[std::size_t(b)] / std::pow(double(seqs[std::size_t(b)].size() - 1), lp);
      if (int(finished.size()) == B && score <= finished.back().score) continue;
      finished.push_back({seqs[std::size_t(b)], score, history[std::size_t(b)]});
      std::stable_sort(finished.begin(), finished.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      if (int(finished.size()) > B) finished.resize(std::size_t(B));
    }
  }
  // The best hypothesis; on a tie the one added later (HF's finalize sorts stably and takes the last).
  auto best = finished.begin();
  for (auto it = finished.begin(); it != finished.end(); ++it)
    if (it->score >= best->score) best = it;
  result.ids = best->ids;
  result.score = float(best->score);
  result.cross = best->cross;
  return result;
}

}  // namespace attnlab
