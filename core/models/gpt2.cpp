#include "gpt2.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../attention.h"
#include "../layers/activations.h"
#include "../layers/layer_norm.h"
#include "../vec4.h"

namespace attnlab {

Gpt2Model::Gpt2Model(const Gpt2Config& config) : c_(config) {
  const int E = c_.n_embd, F = c_.n_inner;
  wte_ = RowMatrix::Zero(c_.vocab_size, E);
  wpe_ = RowMatrix::Zero(c_.n_positions, E);
  auto norm = [E] { return Norm::identity(E); };
  for (int l = 0; l < c_.n_layer; ++l)
    blocks_.push_back(Block{norm(), PackedLinear(E, 3 * E), PackedLinear(E, E), norm(), PackedLinear(E, F), PackedLinear(F, E)});
  ln_f_ = norm();
  index_tensors();
}

void Gpt2Model::index_tensors() {
  auto linear = [this](const std::string& name, PackedLinear& p) { tensors_.linear(name, p); };
  auto norm = [this](const std::string& name, Norm& n) { tensors_.norm(name, n); };
  tensors_.tensor("wte.weight", wte_.data());
  tensors_.tensor("wpe.weight", wpe_.data());
  for (int l = 0; l < c_.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    Block& b = blocks_[std::size_t(l)];
    norm(p + "ln_1", b.ln_1);
    linear(p + "attn.c_attn", b.attn);
    linear(p + "attn.c_proj", b.attn_proj);
    norm(p + "ln_2", b.ln_2);
    linear(p + "mlp.c_fc", b.fc);
    linear(p + "mlp.c_proj", b.mlp_proj);
  }
  norm("ln_f", ln_f_);
}

float* Gpt2Model::storage(const std::string& canonical) { return tensors_.storage(canonical); }

bool Gpt2Model::set_linear_weight(const std::string& canonical, const float* w) {
  PackedLinear* packed = tensors_.packed(canonical);
  if (!packed) return false;
  PackedLinear& p = *packed;
  // Conv1D's [in, out] -> nn.Linear's [out, in], which PackedLinear packs (one weight's copy, freed here).
  const int in = p.in_features(), out = p.out_features();
  std::vector<float> transposed(std::size_t(in) * out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o) transposed[std::size_t(o) * in + i] = w[std::size_t(i) * out + o];
  p.set_weight(transposed.data());
  return true;
}

std::string Gpt2Model::check_prompt(const std::int32_t* ids, int T) const {
  if (T < 1) return "the text has no tokens";
  if (T > c_.n_positions) return std::to_string(T) + " tokens: this model has position embeddings for " + std::to_string(c_.n_positions);
  for (int t = 0; t < T; ++t)
    if (ids[t] < 0 || ids[t] >= c_.vocab_size)
      return "token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) + " is outside the vocabulary [0, " +
             std::to_string(c_.vocab_size) + ")";
  return {};
}

std::string Gpt2Model::check_step(std::int32_t id) const {
  if (tokens_.empty()) return "no text yet: run the prompt first";
  if (!computed()) return "a pass is under way: finish its attention calls first";
  if (cached() >= c_.n_positions) return "the text has " + std::to_string(cached()) + " tokens: this model's n_positions";
  if (id < 0 || id >= c_.vocab_size) return "token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c_.vocab_size) + ")";
  return {};
}

void Gpt2Model::embed(const std::int32_t* ids, int n) {
  const int L = c_.n_layer, E = c_.n_embd, H = c_.n_head, D = c_.head_dim();
  past_ = int(tokens_.size());
  n_ = n;
  tokens_.insert(tokens_.end(), ids, ids + n);
  const int S = past_ + n;
  residual_.assign(std::size_t(L) + 1, RowMatrix());
  attention_.assign(std::size_t(L), {});
  RowMatrix& x = residual_[0];
  x.resize(n, E);
  for (int t = 0; t < n; ++t) x.row(t) = wte_.row(ids[t]) + wpe_.row(past_ + t);
  // Token t (position past + t) sees keys 0 .. past + t.
  mask_.clear();
  if (n > 1) {
    mask_.assign(std::size_t(n) * S, 0.0f);
    for (int t = 0; t < n; ++t)
      for (int s = past_ + t + 1; s < S; ++s) mask_[std::size_t(t) * S + s] = -std::numeric_limits<float>::infinity();
  }
  // Room for S keys per head: a prompt's cache is exactly S; a step past the capacity doubles it, and
  // each head's past rows move to their new place once.
  cache_k_.resize(std::size_t(L));
  cache_v_.resize(std::size_t(L));
  if (S > capacity_) {
    const int grown = past_ == 0 ? S : std::min(c_.n_positions, std::max(S, 2 * capacity_));
    for (int l = 0; l < L; ++l)
      for (auto* cache : {&cache_k_[std::size_t(l)], &cache_v_[std::size_t(l)]}) {
        std::vector<float> moved(std::size_t(H) * grown * D, 0.0f);
        for (int h = 0; h < H; ++h)
          std::copy_n(cache->data() + std::size_t(h) * capacity_ * D, std::size_t(past_) * D, moved.data() + std::size_t(h) * grown * D);
        *cache = std::move(moved);
      }
    capacity_ = grown;
  }
  next_layer_ = 0;
  projected_ = false;
}

void Gpt2Model::begin_forward(const std::int32_t* ids, int T) {
  tokens_.clear();
  cache_k_.clear();
  cache_v_.clear();
  capacity_ = 0;
  embed(ids, T);
}

void Gpt2Model::begin_step(std::int32_t id) { embed(&id, 1); }

void Gpt2Model::project(int layer) {
  const Block& b = blocks_[std::size_t(layer)];
  const int n = n_, E = c_.n_embd, H = c_.n_head, D = c_.head_dim(), C = capacity_;
  RowMatrix a(n, E), qkv(n, 3 * E);
  layer_norm_forward(residual_[std::size_t(layer)], b.ln_1.weight.data(), b.ln_1.bias.data(), c_.layer_norm_epsilon, a);
  b.attn.forward(a, qkv);
  // Columns [0, E) are q, [E, 2E) k, [2E, 3E) v; head h takes D columns of each from h*D.
  q_.assign(std::size_t(H) * n * D, 0.0f);
  float* k = cache_k_[std::size_t(layer)].data();
  float* v = cache_v_[std::size_t(layer)].data();
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < n; ++t)
      for (int d = 0; d < D; ++d) {
        q_[(std::size_t(h) * n + t) * D + d] = qkv(t, h * D + d);
        k[(std::size_t(h) * C + past_ + t) * D + d] = qkv(t, E + h * D + d);
        v[(std::size_t(h) * C + past_ + t) * D + d] = qkv(t, 2 * E + h * D + d);
      }
}

void Gpt2Model::finish_layer(int layer, const float* weights, const float* context) {
  const Block& b = blocks_[std::size_t(layer)];
  const int n = n_, E = c_.n_embd, H = c_.n_head, D = c_.head_dim(), S = past_ + n_;
  attention_[std::size_t(layer)].assign(weights, weights + std::size_t(H) * n * S);
  RowMatrix merged(n, E), projected(n, E);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < n; ++t)
      for (int d = 0; d < D; ++d) merged(t, h * D + d) = context[(std::size_t(h) * n + t) * D + d];
  b.attn_proj.forward(merged, projected);
  RowMatrix& x = residual_[std::size_t(layer) + 1];
  x = residual_[std::size_t(layer)] + projected;
  RowMatrix m(n, E), inner(n, c_.n_inner);
  layer_norm_forward(x, b.ln_2.weight.data(), b.ln_2.bias.data(), c_.layer_norm_epsilon, m);
  b.fc.forward(m, inner);
  gelu_tanh_forward(inner, inner);
  b.mlp_proj.forward(inner, projected);
  x += projected;
  if (layer + 1 == c_.n_layer) {
    final_.resize(n, E);
    layer_norm_forward(x, ln_f_.weight.data(), ln_f_.bias.data(), c_.layer_norm_epsilon, final_);
  }
}

bool Gpt2Model::next_call(AttentionForward& call) {
  if (n_ == 0 || next_layer_ >= c_.n_layer) return false;
  const int H = c_.n_head, D = c_.head_dim(), S = past_ + n_;
  if (!projected_) project(next_layer_);
  projected_ = true;
  call = {};
  call.shape = {1, H, n_, S, D};
  call.scale = 1.0f / std::sqrt(float(D));
  call.q = q_.data();
  call.k = cache_k_[std::size_t(next_layer_)].data();
  call.v = cache_v_[std::size_t(next_layer_)].data();
  call.kv_stride = std::size_t(capacity_) * D;
  if (!mask_.empty()) call.mask = {mask_.data(), 0, 0};  // one [n, S] mask for every head
  return true;
}

void Gpt2Model::finish_call(const float* weights, const float* context) {
  finish_layer(next_layer_, weights, context);
  ++next_layer_;
  projected_ = false;
}

std::string Gpt2Model::check_pending() const {
  if (n_ == 0) return "no pass is under way: begin one first";
  if (next_layer_ >= c_.n_layer) return "the pass is done: every layer is finished";
  if (!projected_) return "ask for layer " + std::to_string(next_layer_) + "'s attention call first (next_call)";
  return {};
}

void Gpt2Model::forward(Backend backend, const std::int32_t* ids, int T) {
  begin_forward(ids, T);
  run_staged(backend, *this);
}

void Gpt2Model::step(Backend backend, std::int32_t id) {
  begin_step(id);
  run_staged(backend, *this);
}

namespace {

// logits[v] = wte[v] . x for every row of wte [V, E]: one streaming pass over the 150 MB of gpt2-small's
// embeddings per written token (Eigen has no WASM SIMD path). Four sums in flight per row (e mod 16 in
// [0, 4), [4, 8), [8, 12), [12, 16)), so that the adds do not wait on one another and the loop keeps up
// with memory; they are added in a fixed order, so every call gives the same bits.
void unembed_rows(const RowMatrix& wte, const float* x, float* logits) {
  using namespace vec4;
  const int V = int(wte.rows()), E = int(wte.cols()), E16 = E - E % 16;
  for (int v = 0; v < V; ++v) {
    const float* w = wte.data() + std::size_t(v) * E;
    f32x4 a0 = zero4(), a1 = zero4(), a2 = zero4(), a3 = zero4();
    for (int e = 0; e < E16; e += 16) {
      a0 = add4(a0, mul4(load4(w + e), load4(x + e)));
      a1 = add4(a1, mul4(load4(w + e + 4), load4(x + e + 4)));
      a2 = add4(a2, mul4(load4(w + e + 8), load4(x + e + 8)));
      a3 = add4(a3, mul4(load4(w + e + 12), load4(x + e + 12)));
    }
    const f32x4 acc = add4(add4(a0, a1), add4(a2, a3));
    float sum = (lane(acc, 0) + lane(acc, 1)) + (lane(acc, 2) + lane(acc, 3));
    for (int e = E16; e < E; ++e) sum += w[e] * x[e];
    logits[v] = sum;
  }
}

}  // namespace

std::vector<float> Gpt2Model::logits(int t) const {
  if (!computed() || t < 0 || t >= n_) return {};
  std::vector<float> out(std::size_t(c_.vocab_size));
  const RowVector x = final_.row(t);
  unembed_rows(wte_, x.data(), out.data());
  return out;
}

std::vector<float> Gpt2Model::unembed(const float* residual) const {
  const int E = c_.n_embd;
  RowMatrix x = ConstMatrixMap(residual, 1, E), normed(1, E);
  layer_norm_forward(x, ln_f_.weight.data(), ln_f_.bias.data(), c_.layer_norm_epsilon, normed);
  std::vector<float> out(std::size_t(c_.vocab_size));
  unembed_rows(wte_, normed.data(), out.data());
  return out;
}

}  // namespace attnlab
