#include "decoder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "../attention.h"
#include "../layers/activations.h"
#include "../layers/heads.h"
#include "../layers/layer_norm.h"
#include "../layers/rms_norm.h"
#include "../shard_runner.h"
#include "../vec4.h"

namespace attnlab {

std::string check_decoder_spec(const DecoderSpec& s) {
  if (s.vocab_size < 1 || s.n_embd < 1 || s.n_layer < 1 || s.n_head < 1 || s.n_kv_head < 1 || s.head_dim < 1 ||
      (s.has_mlp() && s.n_inner < 1) || s.n_positions < 1)
    return "every size of a decoder must be 1 or more";
  if (s.tied_unembedding && s.output_bias) return "a tied unembedding has no bias of its own";
  if (s.n_head % s.n_kv_head != 0)
    return std::to_string(s.n_head) + " query heads cannot share " + std::to_string(s.n_kv_head) + " key/value heads evenly";
  if (s.positions == DecoderPositions::rotary && s.head_dim % 2 != 0)
    return "rotary positions turn pairs of dimensions: the head width must be even, got " + std::to_string(s.head_dim);
  return {};
}

std::vector<DecoderTensorShape> decoder_tensors(const DecoderSpec& s, const DecoderNames& names) {
  using T = DecoderTensor;
  const std::int64_t E = s.n_embd, F = s.n_inner, QD = s.q_width(), KD = s.kv_width();
  std::vector<DecoderTensorShape> out = {{names.name(T::token_embd) + ".weight", {s.vocab_size, E}, false}};
  if (s.positions == DecoderPositions::learned) out.push_back({names.name(T::pos_embd) + ".weight", {s.n_positions, E}, false});
  auto norm = [&](const std::string& name) {
    if (!s.has_norm()) return;
    out.push_back({name + ".weight", {E}, false});
    if (s.norm == DecoderNorm::layer_norm) out.push_back({name + ".bias", {E}, false});
  };
  auto linear = [&](T role, int layer, std::int64_t in, std::int64_t width, bool bias) {
    const std::string name = names.name(role, layer);
    out.push_back({name + ".weight", s.layout == WeightLayout::out_in ? std::vector<std::int64_t>{width, in} : std::vector<std::int64_t>{in, width}, true});
    if (bias) out.push_back({name + ".bias", {width}, false});
  };
  for (int l = 0; l < s.n_layer; ++l) {
    norm(names.name(T::attn_norm, l));
    if (names.has(T::attn_qkv)) {
      linear(T::attn_qkv, l, E, QD + 2 * KD, s.qkv_bias);
    } else {
      linear(T::attn_q, l, E, QD, s.qkv_bias);
      linear(T::attn_k, l, E, KD, s.qkv_bias);
      linear(T::attn_v, l, E, KD, s.qkv_bias);
    }
    linear(T::attn_out, l, QD, E, s.out_bias);
    if (!s.has_mlp()) continue;
    norm(names.name(T::ffn_norm, l));
    if (s.mlp == DecoderMlp::gated_silu) linear(T::ffn_gate, l, E, F, s.mlp_bias);
    linear(T::ffn_up, l, E, F, s.mlp_bias);
    linear(T::ffn_down, l, F, E, s.mlp_bias);
  }
  norm(names.name(T::output_norm));
  if (!s.tied_unembedding) out.push_back({names.name(T::output) + ".weight", {s.vocab_size, E}, false});
  if (s.output_bias) out.push_back({names.name(T::output) + ".bias", {s.vocab_size}, false});
  return out;
}

std::uint64_t decoder_weight_count(const DecoderSpec& s, const DecoderNames& names) {
  std::uint64_t count = 0;
  for (const DecoderTensorShape& t : decoder_tensors(s, names)) {
    std::uint64_t n = 1;
    for (std::int64_t d : t.shape) n *= std::uint64_t(d);
    count += n;
  }
  return count;
}

Decoder::Decoder(const DecoderSpec& spec, const DecoderNames& names) : s_(spec), names_(names) {
  const int E = s_.n_embd, F = s_.n_inner, QD = s_.q_width(), KD = s_.kv_width();
  const bool fused = names_.has(DecoderTensor::attn_qkv), gated = s_.mlp == DecoderMlp::gated_silu;
  const WeightFormat w = s_.weights;
  const std::size_t VE = std::size_t(s_.vocab_size) * E;
  if (w == WeightFormat::f32) tok_ = RowMatrix::Zero(s_.vocab_size, E);
  else tok16_.assign(VE, 0);
  if (s_.positions == DecoderPositions::learned) pos_ = RowMatrix::Zero(s_.n_positions, E);
  if (!s_.tied_unembedding) {
    if (w == WeightFormat::f32) output_ = RowMatrix::Zero(s_.vocab_size, E);
    else output16_.assign(VE, 0);
  }
  if (s_.positions == DecoderPositions::rotary) rotary_ = Rotary(s_.head_dim, s_.rope_theta, s_.rope_scaling);
  blocks_.resize(std::size_t(s_.n_layer));
  for (Block& b : blocks_) {
    b.attn_norm = make_norm();
    if (fused) b.qkv = PackedLinear(E, QD + 2 * KD, w);
    else b.q = PackedLinear(E, QD, w), b.k = PackedLinear(E, KD, w), b.v = PackedLinear(E, KD, w);
    b.out = PackedLinear(QD, E, w);
    if (!s_.has_mlp()) continue;
    b.ffn_norm = make_norm();
    b.up = PackedLinear(E, F, w);
    if (gated) b.gate = PackedLinear(E, F, w);
    b.down = PackedLinear(F, E, w);
  }
  out_norm_ = make_norm();
  if (s_.output_bias) output_bias_.assign(std::size_t(s_.vocab_size), 0.0f);
  writable_ = s_.vocab_size;
  index_tensors();
}

std::string Decoder::limit_vocabulary(int n) {
  if (n < 1 || n > s_.vocab_size)
    return "a tokenizer of " + std::to_string(n) + " tokens cannot write this model's vocabulary of " + std::to_string(s_.vocab_size);
  writable_ = n;
  return {};
}

Decoder::Norm Decoder::make_norm() const {
  // PyTorch's initial weights (1s, and 0s for LayerNorm's bias): what a checkpoint then overwrites.
  if (!s_.has_norm()) return {};
  Norm n{std::vector<float>(std::size_t(s_.n_embd), 1.0f), {}};
  if (s_.norm == DecoderNorm::layer_norm) n.bias.assign(std::size_t(s_.n_embd), 0.0f);
  return n;
}

void Decoder::normalize(const Norm& norm, ConstMatrixRef x, MatrixRef y) const {
  if (s_.norm == DecoderNorm::layer_norm) layer_norm_forward(x, norm.weight.data(), norm.bias.data(), s_.norm_eps, y);
  else if (s_.norm == DecoderNorm::rms_norm) rms_norm_forward(x, norm.weight.data(), s_.norm_eps, y);
  else y = x;
}

void Decoder::index_tensors() {
  using T = DecoderTensor;
  auto norm = [this](const std::string& name, Norm& n) {
    if (n.weight.empty()) return;  // no norm
    tensors_.tensor(name + ".weight", n.weight.data());
    if (!n.bias.empty()) tensors_.tensor(name + ".bias", n.bias.data());
  };
  // A projection's weight is packed; its bias, where the spec gives it one, is filled in place.
  auto linear = [this](T role, int layer, PackedLinear& p, bool bias) {
    const std::string name = names_.name(role, layer);
    tensors_.linear_weight(name + ".weight", p);
    if (bias) tensors_.tensor(name + ".bias", p.bias_data());
  };
  if (s_.weights == WeightFormat::f32) tensors_.tensor(names_.name(T::token_embd) + ".weight", tok_.data());
  if (s_.positions == DecoderPositions::learned) tensors_.tensor(names_.name(T::pos_embd) + ".weight", pos_.data());
  for (int l = 0; l < s_.n_layer; ++l) {
    Block& b = blocks_[std::size_t(l)];
    norm(names_.name(T::attn_norm, l), b.attn_norm);
    if (names_.has(T::attn_qkv)) {
      linear(T::attn_qkv, l, b.qkv, s_.qkv_bias);
    } else {
      linear(T::attn_q, l, b.q, s_.qkv_bias);
      linear(T::attn_k, l, b.k, s_.qkv_bias);
      linear(T::attn_v, l, b.v, s_.qkv_bias);
    }
    linear(T::attn_out, l, b.out, s_.out_bias);
    if (!s_.has_mlp()) continue;
    norm(names_.name(T::ffn_norm, l), b.ffn_norm);
    linear(T::ffn_up, l, b.up, s_.mlp_bias);
    if (s_.mlp == DecoderMlp::gated_silu) linear(T::ffn_gate, l, b.gate, s_.mlp_bias);
    linear(T::ffn_down, l, b.down, s_.mlp_bias);
  }
  norm(names_.name(T::output_norm), out_norm_);
  if (!s_.tied_unembedding && s_.weights == WeightFormat::f32) tensors_.tensor(names_.name(T::output) + ".weight", output_.data());
  if (s_.output_bias) tensors_.tensor(names_.name(T::output) + ".bias", output_bias_.data());
}

float* Decoder::storage(const std::string& canonical) { return tensors_.storage(canonical); }

bool Decoder::holds_16_bit(const std::string& dtype) const {
  return (s_.weights == WeightFormat::bf16 && dtype == "BF16") || (s_.weights == WeightFormat::f16 && dtype == "F16");
}

std::uint16_t* Decoder::storage_16(const std::string& canonical, const std::string& dtype) {
  if (!holds_16_bit(dtype)) return nullptr;
  if (canonical == names_.name(DecoderTensor::token_embd) + ".weight") return tok16_.data();
  if (!s_.tied_unembedding && canonical == names_.name(DecoderTensor::output) + ".weight") return output16_.data();
  return nullptr;
}

bool Decoder::set_linear_weight_16(const std::string& canonical, const std::uint16_t* w, const std::string& dtype) {
  PackedLinear* packed = tensors_.packed(canonical);
  if (!packed || !holds_16_bit(dtype)) return false;
  if (s_.layout == WeightLayout::out_in) {
    packed->set_weight_16(w);
    return true;
  }
  const int in = packed->in_features(), out = packed->out_features();  // Conv1D's [in, out], as below
  std::vector<std::uint16_t> transposed(std::size_t(in) * out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o) transposed[std::size_t(o) * in + i] = w[std::size_t(i) * out + o];
  packed->set_weight_16(transposed.data());
  return true;
}

std::uint64_t Decoder::weight_bytes() const {
  const std::uint64_t E = s_.n_embd, F = s_.n_inner, QD = s_.q_width(), KD = s_.kv_width();
  const std::uint64_t wide = s_.weights == WeightFormat::f32 ? 4 : 2;
  const std::uint64_t mlp_matrices = s_.mlp == DecoderMlp::gated_silu ? 3 : s_.has_mlp() ? 2 : 0;
  const std::uint64_t matrices = std::uint64_t(s_.n_layer) * (E * (QD + 2 * KD) + QD * E + mlp_matrices * E * F) +
                                 std::uint64_t(s_.vocab_size) * E * (s_.tied_unembedding ? 1 : 2);
  return wide * matrices;
}

bool Decoder::set_linear_weight(const std::string& canonical, const float* w) {
  PackedLinear* packed = tensors_.packed(canonical);
  if (!packed || packed->format() != WeightFormat::f32) return false;
  PackedLinear& p = *packed;
  if (s_.layout == WeightLayout::out_in) {
    p.set_weight(w);
    return true;
  }
  // Conv1D's [in, out] -> nn.Linear's [out, in], which PackedLinear packs (one weight's copy, freed here).
  const int in = p.in_features(), out = p.out_features();
  std::vector<float> transposed(std::size_t(in) * out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o) transposed[std::size_t(o) * in + i] = w[std::size_t(i) * out + o];
  p.set_weight(transposed.data());
  return true;
}

std::string Decoder::check_prompt(const std::int32_t* ids, int T) const {
  if (T < 1) return "the text has no tokens";
  if (T > s_.n_positions) return std::to_string(T) + " tokens: this model has position embeddings for " + std::to_string(s_.n_positions);
  for (int t = 0; t < T; ++t)
    if (ids[t] < 0 || ids[t] >= s_.vocab_size)
      return "token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) + " is outside the vocabulary [0, " +
             std::to_string(s_.vocab_size) + ")";
  return {};
}

std::string Decoder::check_step(std::int32_t id) const {
  if (tokens_.empty()) return "no text yet: run the prompt first";
  if (!computed()) return "a pass is under way: finish its attention calls first";
  if (cells_.size() > 1) return "the last pass was a batch of patched reruns: run the prompt again first";
  if (cached() >= s_.n_positions) return "the text has " + std::to_string(cached()) + " tokens: this model's n_positions";
  if (id < 0 || id >= s_.vocab_size) return "token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(s_.vocab_size) + ")";
  return {};
}

void Decoder::embed(const std::int32_t* ids, int n, const Intervention& intervention) {
  const int L = s_.n_layer, E = s_.n_embd;
  past_ = int(tokens_.size());
  n_ = n;
  cells_.assign(1, Cell{});
  cells_[0].past = past_, cells_[0].n = n, cells_[0].intervention = intervention;
  last_row_only_ = false;
  ++pass_count_;
  if (ActivationCache* c = capture()) c->clear();
  tokens_.insert(tokens_.end(), ids, ids + n);
  residual_.assign(std::size_t(L) + 1, RowMatrix());
  attention_.assign(std::size_t(L), {});
  RowMatrix& x = residual_[0];
  x.resize(n, E);
  for (int t = 0; t < n; ++t) embedding_row(ids[t], x.row(t).data());
  keep("hook_embed", {n, E}, x.data());
  if (s_.positions == DecoderPositions::learned) {
    keep("hook_pos_embed", {n, E}, pos_.row(past_).data());
    for (int t = 0; t < n; ++t) x.row(t) += pos_.row(past_ + t);
  }
  // The cache's rows past .. past+n-1 are written by the layers; rows before them stay in place.
  cache_.truncate(past_);
  cache_.extend(n);
  start_rows(0);
}

void Decoder::start_rows(int first_layer) {
  // A cell's token t (position past + t) sees keys 0 .. past + t (none when n = 1: one query sees every key).
  for (Cell& c : cells_) {
    const int S = c.past + c.n;
    c.mask.clear();
    if (c.n == 1) continue;
    c.mask.assign(std::size_t(c.n) * S, 0.0f);
    for (int t = 0; t < c.n; ++t)
      for (int s = c.past + t + 1; s < S; ++s) c.mask[std::size_t(t) * S + s] = -std::numeric_limits<float>::infinity();
  }
  next_layer_ = first_layer, next_cell_ = 0;
  projected_ = false;
}

void Decoder::begin_forward(const std::int32_t* ids, int T, const Intervention& intervention) {
  tokens_.clear();
  cache_.reset(s_.n_layer, 1, s_.n_kv_head, s_.head_dim, s_.n_positions);
  embed(ids, T, intervention);
}

void Decoder::begin_step(std::int32_t id, const Intervention& intervention) { embed(&id, 1, intervention); }

std::string Decoder::check_intervention(const Intervention& iv, int T) const {
  for (const LayerHead& h : iv.heads_off.heads())
    if (h.layer >= s_.n_layer || h.head >= s_.n_head) return "head " + layer_head_text(h) + " is not in this model";
  for (const ActivationPatch& p : iv.patches) {
    const std::string where = std::string(patch_site_name(p.site)) + " patch at layer " + std::to_string(p.layer);
    if (p.layer < 0 || p.layer >= s_.n_layer) return where + ": this model's layers are 0 to " + std::to_string(s_.n_layer - 1);
    if (p.position < -1 || p.position >= T) return where + ": row " + std::to_string(p.position) + " is not in a pass of " + std::to_string(T) + " tokens";
    const bool per_head = p.site == PatchSite::z || p.site == PatchSite::pattern;
    if (p.head < -1 || p.head >= s_.n_head || (!per_head && p.head != -1))
      return where + ": head " + std::to_string(p.head) + (per_head ? " is not in the layer" : " (only z and pattern patches name a head)");
    if (!p.source) return where + ": no activation to put in place";
  }
  return {};
}

std::vector<float> Decoder::head_rows(const float* heads, std::size_t head_stride, int n, int Hh, int D) {
  std::vector<float> rows(std::size_t(n) * Hh * D);
  for (int h = 0; h < Hh; ++h)
    for (int t = 0; t < n; ++t)
      std::copy_n(heads + h * head_stride + std::size_t(t) * D, D, rows.data() + (std::size_t(t) * Hh + h) * D);
  return rows;
}

void Decoder::keep(const std::string& name, std::vector<int> shape, const float* values) const {
  if (ActivationCache* c = capture()) c->put(name, std::move(shape), values);
}

void Decoder::keep_norm(const std::string& prefix, ConstMatrixRef x, ConstMatrixRef normalized) const {
  // A model without norms has no ln hooks (TransformerLens's normalization_type None).
  if (!capture() || !s_.has_norm()) return;
  // TransformerLens's hook_scale: sqrt(mean of the squares + eps), of x centred for LayerNorm; its
  // hook_normalized: the norm's output for LayerNorm (weight and bias applied), x / scale for RMSNorm.
  const int n = int(x.rows()), E = int(x.cols());
  std::vector<float> scale(static_cast<std::size_t>(n));
  RowMatrix before_weight(n, E);
  for (int t = 0; t < n; ++t) {
    double mean = 0.0, squares = 0.0;
    if (s_.norm == DecoderNorm::layer_norm) mean = double(x.row(t).sum()) / E;
    for (int e = 0; e < E; ++e) squares += (x(t, e) - mean) * (x(t, e) - mean);
    scale[std::size_t(t)] = float(std::sqrt(squares / E + s_.norm_eps));
    for (int e = 0; e < E; ++e) before_weight(t, e) = float((x(t, e) - mean) / scale[std::size_t(t)]);
  }
  keep(prefix + ".hook_scale", {n, 1}, scale.data());
  if (s_.norm == DecoderNorm::layer_norm) {
    const RowMatrix out = normalized;
    keep(prefix + ".hook_normalized", {n, E}, out.data());
  } else {
    keep(prefix + ".hook_normalized", {n, E}, before_weight.data());
  }
}

void Decoder::patch_rows(PatchSite site, int layer, float* rows, int width) const {
  // A cell's row t is the pass's row row0 + t, at position past + t: the source (a whole pass's
  // activation) is read there.
  const int D = s_.head_dim;
  for (const Cell& c : cells_)
    for (const ActivationPatch& p : c.intervention.patches) {
      if (p.site != site || p.layer != layer) continue;
      for (int t = 0; t < c.n; ++t) {
        const int position = c.past + t;
        if (p.position != -1 && p.position != position) continue;
        float* to = rows + std::size_t(c.row0 + t) * width;
        const float* from = p.source + std::size_t(position) * width;
        if (site == PatchSite::z && p.head != -1) std::copy_n(from + std::size_t(p.head) * D, D, to + std::size_t(p.head) * D);
        else std::copy_n(from, width, to);
      }
    }
}

void Decoder::patch_pattern(int layer, const Cell& c, float* weights, RowMatrix& merged) const {
  const int n = c.n, S = c.past + c.n, H = s_.n_head, Hkv = s_.n_kv_head, D = s_.head_dim, G = s_.group();
  for (const ActivationPatch& p : c.intervention.patches) {
    if (p.site != PatchSite::pattern || p.layer != layer) continue;
    for (int h = 0; h < H; ++h) {
      if (p.head != -1 && p.head != h) continue;
      for (int t = 0; t < n; ++t) {
        if (p.position != -1 && p.position != c.past + t) continue;
        const std::size_t at = (std::size_t(h) * n + t) * S;
        std::copy_n(p.source + (std::size_t(h) * S + c.past + t) * S, S, weights + at);  // the source: [H, S, S]
        // z = pattern v again for this row, with this cell's values (head h reads key/value head h / G).
        std::vector<double> z(std::size_t(D), 0.0);
        for (int s = 0; s < S; ++s) {
          const float* v = cache_.values(layer) + (std::size_t(c.batch) * Hkv + h / G) * cache_.stride() + std::size_t(s) * D;
          for (int d = 0; d < D; ++d) z[std::size_t(d)] += double(weights[at + s]) * v[d];
        }
        for (int d = 0; d < D; ++d) merged(c.row0 + t, h * D + d) = float(z[std::size_t(d)]);
      }
    }
  }
}

void Decoder::keep_scores(int layer) const {
  if (!capture()) return;  // one cell: its rows are the pass's
  // q k^T / sqrt(D) with the causal mask's -inf (TransformerLens's hook_attn_scores; the kernel keeps
  // only the softmax, so the scores are computed here, for the cache alone).
  const int n = n_, S = past_ + n_, H = s_.n_head, D = s_.head_dim, G = s_.group();
  const float scale = 1.0f / std::sqrt(float(D));
  std::vector<float> scores(std::size_t(H) * n * S);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < n; ++t)
      for (int s = 0; s < S; ++s) {
        float& out = scores[(std::size_t(h) * n + t) * S + s];
        if (s > past_ + t) {
          out = -std::numeric_limits<float>::infinity();
          continue;
        }
        const float* q = q_.data() + (std::size_t(h) * n + t) * D;
        const float* k = cache_.keys(layer) + std::size_t(h / G) * cache_.stride() + std::size_t(s) * D;
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot += q[d] * k[d];
        out = dot * scale;
      }
  keep(block_hook(layer, "attn.hook_attn_scores"), {H, n, S}, scores.data());
}

void Decoder::truncate(int length) {
  if (length >= cached()) return;
  tokens_.resize(std::size_t(std::max(0, length)));
  cache_.truncate(length);
}

void Decoder::project(int layer) {
  const Block& b = blocks_[std::size_t(layer)];
  const int n = n_, E = s_.n_embd, H = s_.n_head, Hkv = s_.n_kv_head, D = s_.head_dim, QD = s_.q_width(), KD = s_.kv_width();
  RowMatrix& x = residual_[std::size_t(layer)];
  patch_rows(PatchSite::resid_pre, layer, x.data(), E);
  keep(block_hook(layer, "hook_resid_pre"), {n, E}, x.data());
  RowMatrix a(n, E), q, k, v;
  merged_.resize(n, QD);  // filled by the cells' attention calls
  normalize(b.attn_norm, x, a);
  keep_norm(block_hook(layer, "ln1"), x, a);
  // q, k, v as three column ranges: of the fused product ([0, HD) q, then Hkv D of k, then of v), or
  // each its own.
  const float *qs, *ks, *vs;
  std::size_t qs_row, ks_row, vs_row;
  if (names_.has(DecoderTensor::attn_qkv)) {
    q.resize(n, QD + 2 * KD);
    b.qkv.forward(a, q);
    qs = q.data(), ks = q.data() + QD, vs = q.data() + QD + KD;
    qs_row = ks_row = vs_row = std::size_t(QD + 2 * KD);
  } else {
    q.resize(n, QD), k.resize(n, KD), v.resize(n, KD);
    b.q.forward(a, q);
    b.k.forward(a, k);
    b.v.forward(a, v);
    qs = q.data(), ks = k.data(), vs = v.data();
    qs_row = std::size_t(QD), ks_row = vs_row = std::size_t(KD);
  }
  // Each cell's q into [H, n, D]; its k and v into its cache rows past .. past+n-1 of each key/value
  // head; then the rotation of each query and key row at its position (rotary.h: a row at a time).
  q_.resize(std::size_t(H) * n * D);
  for (const Cell& c : cells_) {
    const std::size_t r = std::size_t(c.row0);
    split_heads(qs + r * qs_row, qs_row, c.n, H, D, q_.data() + r * QD, std::size_t(c.n) * D);
    split_heads(ks + r * ks_row, ks_row, c.n, Hkv, D, cache_.key(layer, c.batch, 0, c.past), cache_.stride());
    split_heads(vs + r * vs_row, vs_row, c.n, Hkv, D, cache_.value(layer, c.batch, 0, c.past), cache_.stride());
  }
  if (capture()) {  // one cell: its rows are the pass's
    keep(block_hook(layer, "attn.hook_q"), {n, H, D}, head_rows(q_.data(), std::size_t(n) * D, n, H, D).data());
    keep(block_hook(layer, "attn.hook_k"), {n, Hkv, D}, head_rows(cache_.key(layer, 0, 0, past_), cache_.stride(), n, Hkv, D).data());
    keep(block_hook(layer, "attn.hook_v"), {n, Hkv, D}, head_rows(cache_.value(layer, 0, 0, past_), cache_.stride(), n, Hkv, D).data());
  }
  if (s_.positions == DecoderPositions::rotary) {
    for (const Cell& c : cells_) {
      float* q = q_.data() + std::size_t(c.row0) * QD;
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < c.n; ++t) rotary_.apply(q + (std::size_t(h) * c.n + t) * D, c.past + t);
      for (int h = 0; h < Hkv; ++h)
        for (int t = 0; t < c.n; ++t) rotary_.apply(cache_.key(layer, c.batch, h, c.past + t), c.past + t);
    }
    if (capture()) {
      keep(block_hook(layer, "attn.hook_rot_q"), {n, H, D}, head_rows(q_.data(), std::size_t(n) * D, n, H, D).data());
      keep(block_hook(layer, "attn.hook_rot_k"), {n, Hkv, D}, head_rows(cache_.key(layer, 0, 0, past_), cache_.stride(), n, Hkv, D).data());
    }
  }
  keep_scores(layer);
  if (last_row_only_ && layer + 1 == s_.n_layer) keep_last_rows(layer);
}

void Decoder::keep_last_rows(int layer) {
  // Every row's keys and values are in the cache; what follows in the layer only changes a row's own
  // residual, and the metric reads each cell's last one.
  const int H = s_.n_head, D = s_.head_dim, QD = s_.q_width(), B = int(cells_.size());
  std::vector<float> q(std::size_t(B) * QD);
  RowMatrix x(B, s_.n_embd);
  for (int i = 0; i < B; ++i) {
    Cell& c = cells_[std::size_t(i)];
    const float* heads = q_.data() + std::size_t(c.row0) * QD;  // the cell's [H, n, D]
    for (int h = 0; h < H; ++h) std::copy_n(heads + (std::size_t(h) * c.n + c.n - 1) * D, D, q.data() + (std::size_t(i) * H + h) * D);
    x.row(i) = residual_[std::size_t(layer)].row(c.row0 + c.n - 1);
    c.past += c.n - 1, c.n = 1, c.row0 = i;
    c.mask.clear();  // one query sees every key
  }
  q_ = std::move(q);
  residual_[std::size_t(layer)] = std::move(x);
  n_ = B;
  merged_.resize(B, QD);
}

void Decoder::finish_cell(int layer, const Cell& c, const float* weights, const float* context) {
  const int H = s_.n_head, D = s_.head_dim, S = c.past + c.n;
  // The pattern kept for the views is a one-cell pass's; a batch's cells each patch their own copy.
  std::vector<float> own;
  std::vector<float>& pattern = cells_.size() == 1 ? attention_[std::size_t(layer)] : own;
  pattern.assign(weights, weights + std::size_t(H) * c.n * S);
  merge_heads(context, std::size_t(c.n) * D, c.n, H, D, merged_.data() + std::size_t(c.row0) * H * D, std::size_t(H) * D);
  patch_pattern(layer, c, pattern.data(), merged_);  // a head's pattern replaced: its z again from it
  keep(block_hook(layer, "attn.hook_pattern"), {H, c.n, S}, pattern.data());
}

void Decoder::finish_layer(int layer) {
  const Block& b = blocks_[std::size_t(layer)];
  const int n = n_, E = s_.n_embd, H = s_.n_head, D = s_.head_dim;
  RowMatrix& merged = merged_;
  RowMatrix projected(n, E);
  patch_rows(PatchSite::z, layer, merged.data(), H * D);
  // Heads switched off: their z zeroed before W_o.
  for (const Cell& c : cells_) c.intervention.heads_off.apply(layer, merged.middleRows(c.row0, c.n), D);
  keep(block_hook(layer, "attn.hook_z"), {n, H, D}, merged.data());
  b.out.forward(merged, projected);
  patch_rows(PatchSite::attn_out, layer, projected.data(), E);
  keep(block_hook(layer, "hook_attn_out"), {n, E}, projected.data());
  RowMatrix& x = residual_[std::size_t(layer) + 1];
  x = residual_[std::size_t(layer)] + projected;
  if (s_.has_mlp()) {
    keep(block_hook(layer, "hook_resid_mid"), {n, E}, x.data());
    add_mlp(layer, x);
  }
  keep(block_hook(layer, "hook_resid_post"), {n, E}, x.data());
  if (layer + 1 == s_.n_layer) {
    final_.resize(n, E);
    normalize(out_norm_, x, final_);
    keep_norm("ln_final", x, final_);
  }
}

void Decoder::add_mlp(int layer, RowMatrix& x) {
  const Block& b = blocks_[std::size_t(layer)];
  const int n = n_, E = s_.n_embd, F = s_.n_inner;
  RowMatrix m(n, E), inner(n, F), projected(n, E);
  normalize(b.ffn_norm, x, m);
  keep_norm(block_hook(layer, "ln2"), x, m);
  b.up.forward(m, inner);
  if (s_.mlp == DecoderMlp::gelu_new || s_.mlp == DecoderMlp::gelu) {
    keep(block_hook(layer, "mlp.hook_pre"), {n, F}, inner.data());
    if (s_.mlp == DecoderMlp::gelu) gelu_forward(inner, inner);
    else gelu_tanh_forward(inner, inner);
  } else {
    RowMatrix gate(n, F);
    b.gate.forward(m, gate);
    keep(block_hook(layer, "mlp.hook_pre"), {n, F}, gate.data());
    keep(block_hook(layer, "mlp.hook_pre_linear"), {n, F}, inner.data());
    silu_gate_forward(gate, inner);
    inner.swap(gate);
  }
  keep(block_hook(layer, "mlp.hook_post"), {n, F}, inner.data());
  b.down.forward(inner, projected);
  patch_rows(PatchSite::mlp_out, layer, projected.data(), E);
  keep(block_hook(layer, "hook_mlp_out"), {n, E}, projected.data());
  x += projected;
}

bool Decoder::next_call(AttentionForward& call) {
  if (n_ == 0 || next_layer_ >= s_.n_layer) return false;
  const int H = s_.n_head, D = s_.head_dim;
  if (!projected_) project(next_layer_);
  projected_ = true;
  // One call per cell: its queries, its own keys and values (the cache's batch element).
  const Cell& c = cells_[std::size_t(next_cell_)];
  const std::size_t kv = std::size_t(c.batch) * s_.n_kv_head * cache_.stride();
  call = {};
  call.shape = {1, H, c.n, c.past + c.n, D};
  call.scale = 1.0f / std::sqrt(float(D));
  call.q = q_.data() + std::size_t(c.row0) * H * D;
  call.k = cache_.keys(next_layer_) + kv;
  call.v = cache_.values(next_layer_) + kv;
  call.kv_stride = cache_.stride();
  call.kv_heads = s_.n_kv_head;
  if (!c.mask.empty()) call.mask = {c.mask.data(), 0, 0};  // one [n, S] mask for every head
  return true;
}

void Decoder::finish_call(const float* weights, const float* context) {
  finish_cell(next_layer_, cells_[std::size_t(next_cell_)], weights, context);
  if (++next_cell_ < int(cells_.size())) return;
  finish_layer(next_layer_);
  ++next_layer_, next_cell_ = 0;
  projected_ = false;
}

std::string Decoder::check_pending() const {
  if (n_ == 0) return "no pass is under way: begin one first";
  if (next_layer_ >= s_.n_layer) return "the pass is done: every layer is finished";
  if (!projected_) return "ask for layer " + std::to_string(next_layer_) + "'s attention call first (next_call)";
  return {};
}

Decoder::SavedPass Decoder::save_pass() const { return {tokens_, cache_, residual_, attention_, final_, n_}; }

void Decoder::restore_pass(const SavedPass& saved) {
  tokens_ = saved.tokens, cache_ = saved.cache, residual_ = saved.residual, attention_ = saved.attention, final_ = saved.final;
  past_ = 0, n_ = saved.n, next_layer_ = s_.n_layer, next_cell_ = 0, projected_ = false, last_row_only_ = false;
  cells_.assign(1, Cell{});
  cells_[0].n = n_;
  ++pass_count_;
}

std::string Decoder::check_rerun(int layer, int from) const {
  if (!computed() || past_ != 0 || cells_.size() != 1) return "no prompt's pass to run again: run the prompt first";
  if (layer < 0 || layer >= s_.n_layer) return "layer " + std::to_string(layer) + " is not in this model";
  if (from < 0 || from >= n_) return "row " + std::to_string(from) + " is not in the pass";
  return {};
}

void Decoder::begin_rerun(int layer, const std::vector<Rerun>& reruns) {
  const int T = n_, E = s_.n_embd, B = int(reruns.size());
  ++pass_count_;
  cells_.assign(std::size_t(B), Cell{});
  int rows = 0;
  for (int i = 0; i < B; ++i) {
    Cell& c = cells_[std::size_t(i)];
    c.past = reruns[std::size_t(i)].from, c.n = T - c.past, c.batch = i, c.row0 = rows;
    c.intervention = reruns[std::size_t(i)].intervention;
    rows += c.n;
  }
  if (ActivationCache* c = capture()) c->clear();
  last_row_only_ = capture() == nullptr;
  // Layer `layer`'s input for each cell's rows, one cell after the other; the layers after it are
  // computed for them.
  RowMatrix x(rows, E);
  for (const Cell& c : cells_) x.middleRows(c.row0, c.n) = residual_[std::size_t(layer)].bottomRows(c.n);
  residual_[std::size_t(layer)] = std::move(x);
  if (B == 1) {
    cache_.truncate(cells_[0].past);  // its rows from `from` on are written again
    cache_.extend(cells_[0].n);
  } else {
    // Each cell its own copy of the pass's keys and values from `layer` on, its rows from `from` on
    // written again (the layers before are not read).
    KvCache batch;
    batch.reset(s_.n_layer, B, s_.n_kv_head, s_.head_dim, s_.n_positions);
    batch.extend(T);
    const std::size_t rows_of_head = std::size_t(T) * s_.head_dim;
    for (int l = layer; l < s_.n_layer; ++l)
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < s_.n_kv_head; ++h) {
          std::copy_n(cache_.key(l, 0, h, 0), rows_of_head, batch.key(l, b, h, 0));
          std::copy_n(cache_.value(l, 0, h, 0), rows_of_head, batch.value(l, b, h, 0));
        }
    cache_ = std::move(batch);
  }
  past_ = cells_[0].past, n_ = rows;
  start_rows(layer);
}

void Decoder::rerun(Backend backend, int layer, const std::vector<Rerun>& cells) {
  begin_rerun(layer, cells);
  run_staged(backend, *this);
}

void Decoder::rerun(Backend backend, int layer, int from, const Intervention& intervention) {
  rerun(backend, layer, {Rerun{from, intervention}});
}

double Decoder::cell_logit_difference(int c, int a, int b) const {
  const Cell& cell = cells_[std::size_t(c)];
  return logit_difference(cell.row0 + cell.n - 1, a, b);
}

void Decoder::forward(Backend backend, const std::int32_t* ids, int T, const Intervention& intervention) {
  begin_forward(ids, T, intervention);
  run_staged(backend, *this);
}

void Decoder::step(Backend backend, std::int32_t id, const Intervention& intervention) {
  begin_step(id, intervention);
  run_staged(backend, *this);
}

namespace {

// logits[v] = U[v] . x for every row of U [V, E]: one streaming pass over the 150 MB of gpt2-small's
// embeddings per written token (Eigen has no WASM SIMD path). Four sums in flight per row (e mod 16 in
// [0, 4), [4, 8), [8, 12), [12, 16)), so that the adds do not wait on one another and the loop keeps up
// with memory; they are added in a fixed order, so every call gives the same bits. A 16-bit U streams
// half the bytes and is widened eight at a time (vec4.h), the sums as over its float32 widening.
struct F32Rows {
  using T = float;
  static void load8(const float* p, vec4::f32x4& a, vec4::f32x4& b) { a = vec4::load4(p), b = vec4::load4(p + 4); }
  static float one(const float* p) { return *p; }
};
struct Bf16Rows {
  using T = std::uint16_t;
  static void load8(const std::uint16_t* p, vec4::f32x4& a, vec4::f32x4& b) { vec4::widen_bf16_8(p, a, b); }
};
struct F16Rows {
  using T = std::uint16_t;
  static void load8(const std::uint16_t* p, vec4::f32x4& a, vec4::f32x4& b) { vec4::widen_f16_8(p, a, b); }
};

// Row w [E] widened to float32 (the tail through an 8-wide block padded with zeros).
template <class W>
void widen_row(const typename W::T* w, int E, float* out) {
  using namespace vec4;
  const int E8 = E - E % 8;
  f32x4 a, b;
  for (int e = 0; e < E8; e += 8) {
    W::load8(w + e, a, b);
    store4(out + e, a), store4(out + e + 4, b);
  }
  if (E8 == E) return;
  typename W::T tail[8] = {};
  float widened[8];
  std::copy(w + E8, w + E, tail);
  W::load8(tail, a, b);
  store4(widened, a), store4(widened + 4, b);
  std::copy(widened, widened + (E - E8), out + E8);
}

template <class W>
void unembed_rows(const typename W::T* U, int V, int E, const float* x, float* logits) {
  using namespace vec4;
  const int E16 = E - E % 16;
  std::vector<float> row(static_cast<std::size_t>(E));
  for (int v = 0; v < V; ++v) {
    const typename W::T* w = U + std::size_t(v) * E;
    f32x4 a0 = zero4(), a1 = zero4(), a2 = zero4(), a3 = zero4(), w0, w1, w2, w3;
    for (int e = 0; e < E16; e += 16) {
      W::load8(w + e, w0, w1);
      W::load8(w + e + 8, w2, w3);
      a0 = add4(a0, mul4(w0, load4(x + e)));
      a1 = add4(a1, mul4(w1, load4(x + e + 4)));
      a2 = add4(a2, mul4(w2, load4(x + e + 8)));
      a3 = add4(a3, mul4(w3, load4(x + e + 12)));
    }
    const f32x4 acc = add4(add4(a0, a1), add4(a2, a3));
    float sum = (lane(acc, 0) + lane(acc, 1)) + (lane(acc, 2) + lane(acc, 3));
    if (E16 < E) {
      widen_row<W>(w + E16, E - E16, row.data());
      for (int e = E16; e < E; ++e) sum += row[std::size_t(e - E16)] * x[e];
    }
    logits[v] = sum;
  }
}

// The rows split in contiguous ranges over the shard runner's active workers (the threads builds): each
// row's sum is its own, so the split changes no bit. SmolLM2-135M's tied unembedding is a fifth of the
// weights a written token streams; on one thread it took 14% of a step at two threads, the other asleep.
void unembed_rows(WeightFormat format, const void* U, int V, int E, const float* x, float* logits) {
  ShardRunner& runner = shard_runner();
  const int shards = std::max(1, std::min(V / 128, 1 + runner.active_workers()));  // 128 rows at least
  runner.run(shards, [&](int shard) {
    const int v0 = int(std::int64_t(V) * shard / shards), v1 = int(std::int64_t(V) * (shard + 1) / shards);
    const std::size_t at = std::size_t(v0) * E;
    if (format == WeightFormat::f32) unembed_rows<F32Rows>(static_cast<const float*>(U) + at, v1 - v0, E, x, logits + v0);
    else if (format == WeightFormat::bf16) unembed_rows<Bf16Rows>(static_cast<const std::uint16_t*>(U) + at, v1 - v0, E, x, logits + v0);
    else unembed_rows<F16Rows>(static_cast<const std::uint16_t*>(U) + at, v1 - v0, E, x, logits + v0);
  });
}

}  // namespace

void Decoder::embedding_row(int id, float* out) const {
  const int E = s_.n_embd;
  const std::size_t at = std::size_t(id) * E;
  if (s_.weights == WeightFormat::f32) std::copy_n(tok_.data() + at, E, out);
  else if (s_.weights == WeightFormat::bf16) widen_row<Bf16Rows>(tok16_.data() + at, E, out);
  else widen_row<F16Rows>(tok16_.data() + at, E, out);
}

const void* Decoder::unembedding() const {
  if (s_.weights == WeightFormat::f32) return s_.tied_unembedding ? tok_.data() : output_.data();
  return s_.tied_unembedding ? tok16_.data() : output16_.data();
}

std::vector<float> Decoder::logits(int t) const {
  if (!computed() || t < 0 || t >= n_) return {};
  std::vector<float> out(std::size_t(s_.vocab_size));
  const RowVector x = final_.row(t);
  unembed_rows(s_.weights, unembedding(), s_.vocab_size, s_.n_embd, x.data(), out.data());
  add_output_bias(out);
  std::fill(out.begin() + writable_, out.end(), -std::numeric_limits<float>::infinity());  // ids no tokenizer writes
  return out;
}

std::vector<float> Decoder::unembedding_row(int v) const {
  std::vector<float> row(std::size_t(s_.n_embd));
  const std::size_t at = std::size_t(v) * s_.n_embd;
  const void* U = unembedding();
  if (s_.weights == WeightFormat::f32) std::copy_n(static_cast<const float*>(U) + at, s_.n_embd, row.data());
  else if (s_.weights == WeightFormat::bf16) widen_row<Bf16Rows>(static_cast<const std::uint16_t*>(U) + at, s_.n_embd, row.data());
  else widen_row<F16Rows>(static_cast<const std::uint16_t*>(U) + at, s_.n_embd, row.data());
  return row;
}

double Decoder::logit_difference(int t, int a, int b) const {
  const RowVector x = final_.row(t);
  const std::vector<float> ua = unembedding_row(a), ub = unembedding_row(b);
  double diff = 0.0;
  for (int e = 0; e < s_.n_embd; ++e) diff += double(x[e]) * (double(ua[std::size_t(e)]) - double(ub[std::size_t(e)]));
  if (s_.output_bias) diff += double(output_bias_[std::size_t(a)]) - double(output_bias_[std::size_t(b)]);
  return diff;
}

std::vector<float> Decoder::attention_output_bias(int layer) const {
  const PackedLinear& out = blocks_[std::size_t(layer)].out;
  if (!s_.out_bias) return std::vector<float>(std::size_t(s_.n_embd), 0.0f);
  return std::vector<float>(out.bias_data(), out.bias_data() + s_.n_embd);
}

std::vector<float> Decoder::head_output(int layer, int head, const float* z_row) const {
  // Through the packed projection with every other head's z zero; the projection's bias taken off
  // again (it is added once per layer, not per head: attention_output_bias).
  const int H = s_.n_head, D = s_.head_dim, E = s_.n_embd;
  RowMatrix z = RowMatrix::Zero(1, H * D), y(1, E);
  std::copy_n(z_row + std::size_t(head) * D, D, z.data() + std::size_t(head) * D);
  blocks_[std::size_t(layer)].out.forward(z, y);
  std::vector<float> out(static_cast<std::size_t>(E));
  const std::vector<float> bias = attention_output_bias(layer);
  for (int e = 0; e < E; ++e) out[std::size_t(e)] = y(0, e) - bias[std::size_t(e)];
  return out;
}

void Decoder::add_output_bias(std::vector<float>& logits) const {
  for (std::size_t v = 0; v < output_bias_.size(); ++v) logits[v] += output_bias_[v];
}

std::vector<float> Decoder::unembed(const float* residual) const {
  const int E = s_.n_embd;
  RowMatrix x = ConstMatrixMap(residual, 1, E), normed(1, E);
  normalize(out_norm_, x, normed);
  std::vector<float> out(std::size_t(s_.vocab_size));
  unembed_rows(s_.weights, unembedding(), s_.vocab_size, s_.n_embd, normed.data(), out.data());
  add_output_bias(out);
  std::fill(out.begin() + writable_, out.end(), -std::numeric_limits<float>::infinity());
  return out;
}

}  // namespace attnlab
