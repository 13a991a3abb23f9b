#include "self_attention.h"

#include <cmath>

#include "../attention.h"
#include "../gemm.h"
#include "dropout.h"

namespace attnlab {

SelfAttention::SelfAttention(int input_dim, float p, Rng& rng)
    : query(input_dim, input_dim, rng), key(input_dim, input_dim, rng), value(input_dim, input_dim, rng), dropout(p) {
  for (auto [layer, prefix] : {std::pair{&query, "query"}, std::pair{&key, "key"}, std::pair{&value, "value"}}) {
    layer->weight.name = std::string(prefix) + ".weight";
    layer->bias.name = std::string(prefix) + ".bias";
  }
}

float SelfAttention::scale() const { return 1.0f / std::sqrt(float(input_dim())); }

void SelfAttention::project(ConstMatrixRef x) {
  const Eigen::Index E = input_dim();
  for (auto [layer, out] : {std::pair{&query, &q_}, std::pair{&key, &k_}, std::pair{&value, &v_}}) {
    out->resize(x.rows(), E);
    layer->forward(x, *out);
  }
}

void SelfAttention::finish(const float* weights, int batch, int length, bool train, Rng& rng) {
  const Eigen::Index L = length, E = input_dim();
  weights_ = ConstMatrixMap(weights, Eigen::Index(batch) * L, L);
  // attention_weights = self.dropout(F.softmax(energy)): only in train mode.
  if (train && dropout > 0.0f) dropout_forward(weights_.data(), weights_.data(), std::size_t(weights_.size()), dropout, rng);
  out_.resize(Eigen::Index(batch) * L, E);
  for (int b = 0; b < batch; ++b)
    gemm_ab(weights_.middleRows(b * L, L), v_.middleRows(b * L, L), out_.middleRows(b * L, L));
}

void SelfAttention::forward(Backend backend, ConstMatrixRef x, int batch, int length, const float* mask, bool train,
                            Rng& rng) {
  project(x);
  const int L = length, E = input_dim();
  std::vector<float> weights(std::size_t(batch) * L * L), kernel_out(std::size_t(batch) * L * E);
  AttentionForward a;
  a.shape = {batch, 1, L, L, E};
  a.scale = scale();
  a.q = q_.data();
  a.k = k_.data();
  a.v = v_.data();
  a.mask = {mask, std::size_t(L) * L, 0};
  a.weights = weights.data();
  a.out = kernel_out.data();
  attention_forward(backend, a);
  finish(weights.data(), batch, length, train, rng);
}

void SelfAttention::begin(ConstMatrixRef x, int batch, int length, const float* mask, bool train, std::uint64_t seed) {
  project(x);
  batch_ = batch, length_ = length, train_ = train, seed_ = seed;
  if (mask) mask_.assign(mask, mask + std::size_t(batch) * length * length);
  else mask_.clear();
  pending_ = true;
}

bool SelfAttention::next_call(AttentionForward& call) {
  if (!pending_) return false;
  const int L = length_;
  call = {};
  call.shape = {batch_, 1, L, L, input_dim()};
  call.scale = scale();
  call.q = q_.data();
  call.k = k_.data();
  call.v = v_.data();
  call.mask = {mask_.empty() ? nullptr : mask_.data(), std::size_t(L) * L, 0};
  return true;
}

void SelfAttention::finish_call(const float* weights, const float* /*out: recomputed from the weights after dropout*/) {
  Rng rng{seed_};
  finish(weights, batch_, length_, train_, rng);
  pending_ = false;
}

std::string SelfAttention::check_pending() const {
  return pending_ ? std::string() : std::string("no forward pass is under way: begin one first");
}

ParameterList SelfAttention::parameters() {
  return {&query.weight, &query.bias, &key.weight, &key.bias, &value.weight, &value.bias};
}

}  // namespace attnlab
