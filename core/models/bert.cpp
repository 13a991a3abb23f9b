#include "bert.h"

#include <algorithm>
#include <cmath>

#include "../attention.h"
#include "../layers/activations.h"
#include "../layers/heads.h"
#include "../layers/layer_norm.h"

namespace attnlab {

BertModel::BertModel(const BertConfig& config, bool mlm_head, bool separate_decoder) : c_(config), mlm_(mlm_head) {
  const int E = c_.hidden_size, F = c_.intermediate_size;
  word_ = RowMatrix::Zero(c_.vocab_size, E);
  position_ = RowMatrix::Zero(c_.max_position_embeddings, E);
  token_type_ = RowMatrix::Zero(c_.type_vocab_size, E);
  auto norm = [E] { return LayerNormWeights{std::vector<float>(std::size_t(E), 1.0f), std::vector<float>(std::size_t(E), 0.0f)}; };
  embedding_norm_ = norm();
  layers_.reserve(std::size_t(c_.num_hidden_layers));
  for (int l = 0; l < c_.num_hidden_layers; ++l)
    layers_.push_back(Layer{PackedLinear(E, E), PackedLinear(E, E), PackedLinear(E, E), PackedLinear(E, E), norm(),
                            PackedLinear(E, F), PackedLinear(F, E), norm()});
  if (mlm_) {
    transform_ = PackedLinear(E, E);
    transform_norm_ = norm();
    prediction_bias_.assign(std::size_t(c_.vocab_size), 0.0f);
    if (separate_decoder) decoder_ = RowMatrix::Zero(c_.vocab_size, E);
  }
  index_tensors();
}

void BertModel::index_tensors() {
  auto matrix = [this](const std::string& name, RowMatrix& m) {
    storage_[name] = m.data();
    sizes_[name] = std::size_t(m.size());
  };
  auto vector = [this](const std::string& name, std::vector<float>& v) {
    storage_[name] = v.data();
    sizes_[name] = v.size();
  };
  auto linear = [this](const std::string& name, PackedLinear& p) {
    linears_[name + ".weight"] = &p;
    storage_[name + ".bias"] = p.bias_data();
    sizes_[name + ".bias"] = std::size_t(p.out_features());
    sizes_[name + ".weight"] = std::size_t(p.out_features()) * p.in_features();
  };
  auto norm = [&](const std::string& name, LayerNormWeights& n) {
    vector(name + ".weight", n.weight);
    vector(name + ".bias", n.bias);
  };
  matrix("embeddings.word_embeddings.weight", word_);
  matrix("embeddings.position_embeddings.weight", position_);
  matrix("embeddings.token_type_embeddings.weight", token_type_);
  norm("embeddings.LayerNorm", embedding_norm_);
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    Layer& layer = layers_[std::size_t(l)];
    linear(p + "attention.self.query", layer.query);
    linear(p + "attention.self.key", layer.key);
    linear(p + "attention.self.value", layer.value);
    linear(p + "attention.output.dense", layer.attention_output);
    norm(p + "attention.output.LayerNorm", layer.attention_norm);
    linear(p + "intermediate.dense", layer.intermediate);
    linear(p + "output.dense", layer.output);
    norm(p + "output.LayerNorm", layer.output_norm);
  }
  if (mlm_) {
    linear("cls.predictions.transform.dense", transform_);
    norm("cls.predictions.transform.LayerNorm", transform_norm_);
    vector("cls.predictions.bias", prediction_bias_);
    if (decoder_.size()) matrix("cls.predictions.decoder.weight", decoder_);
  }
}

float* BertModel::storage(const std::string& canonical) {
  auto it = storage_.find(canonical);
  return it == storage_.end() ? nullptr : it->second;
}

bool BertModel::set_linear_weight(const std::string& canonical, const float* w) {
  auto it = linears_.find(canonical);
  if (it == linears_.end()) return false;
  it->second->set_weight(w);
  return true;
}

std::string BertModel::check_input(const std::int32_t* ids, const std::int32_t* types, int T) const {
  if (T < 1) return "the input has no tokens";
  if (T > c_.max_position_embeddings)
    return std::to_string(T) + " tokens: this model has position embeddings for " + std::to_string(c_.max_position_embeddings);
  for (int t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= c_.vocab_size)
      return "token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) + " is outside the vocabulary [0, " +
             std::to_string(c_.vocab_size) + ")";
    if (types[t] < 0 || types[t] >= c_.type_vocab_size)
      return "token type " + std::to_string(types[t]) + " at position " + std::to_string(t) + " is outside [0, " +
             std::to_string(c_.type_vocab_size) + ")";
  }
  return {};
}

void BertModel::embed(const std::int32_t* ids, const std::int32_t* types, int T) {
  const int L = c_.num_hidden_layers, E = c_.hidden_size;
  T_ = T;
  hidden_.assign(std::size_t(L) + 1, RowMatrix());
  attention_.assign(std::size_t(L), {});
  queries_.assign(std::size_t(L), {});
  keys_.assign(std::size_t(L), {});
  RowMatrix sum(T, E);
  // Hugging Face's order of the sums: (word + token type) + position.
  for (int t = 0; t < T; ++t) {
    sum.row(t) = word_.row(ids[t]) + token_type_.row(types[t]);
    sum.row(t) += position_.row(t);
  }
  hidden_[0].resize(T, E);
  layer_norm_forward(sum, embedding_norm_.weight.data(), embedding_norm_.bias.data(), c_.layer_norm_eps, hidden_[0]);
}

void BertModel::project(int layer) {
  const Layer& w = layers_[std::size_t(layer)];
  const RowMatrix& h = hidden_[std::size_t(layer)];
  const int H = c_.num_attention_heads, D = c_.head_dim();
  RowMatrix x(T_, c_.hidden_size);
  w.query.forward(h, x);
  split_heads(x, 1, T_, H, D, queries_[std::size_t(layer)]);
  w.key.forward(h, x);
  split_heads(x, 1, T_, H, D, keys_[std::size_t(layer)]);
  w.value.forward(h, x);
  split_heads(x, 1, T_, H, D, v_);
}

void BertModel::finish_layer(int layer, const float* weights, const float* context) {
  const Layer& w = layers_[std::size_t(layer)];
  const int T = T_, E = c_.hidden_size, H = c_.num_attention_heads, D = c_.head_dim();
  attention_[std::size_t(layer)].assign(weights, weights + std::size_t(H) * T * T);
  RowMatrix merged;
  merge_heads(context, 1, T, H, D, merged);
  heads_off_.apply(layer, merged, D);  // heads switched off: their z zeroed before the output dense
  const RowMatrix& input = hidden_[std::size_t(layer)];
  RowMatrix attended(T, E);
  w.attention_output.forward(merged, attended);
  attended += input;
  layer_norm_forward(attended, w.attention_norm.weight.data(), w.attention_norm.bias.data(), c_.layer_norm_eps, attended);
  RowMatrix inner(T, c_.intermediate_size);
  w.intermediate.forward(attended, inner);
  gelu_forward(inner, inner);
  RowMatrix& out = hidden_[std::size_t(layer) + 1];
  out.resize(T, E);
  w.output.forward(inner, out);
  out += attended;
  layer_norm_forward(out, w.output_norm.weight.data(), w.output_norm.bias.data(), c_.layer_norm_eps, out);
}

void BertModel::begin_forward(const std::int32_t* ids, const std::int32_t* types, int T, const HeadAblation& heads_off) {
  heads_off_ = heads_off;
  embed(ids, types, T);
  next_layer_ = 0;
  projected_ = false;
}

bool BertModel::next_call(AttentionForward& call) {
  if (T_ == 0 || next_layer_ >= c_.num_hidden_layers) return false;
  const int l = next_layer_, H = c_.num_attention_heads, D = c_.head_dim();
  if (!projected_) project(l);
  projected_ = true;
  call = {};
  call.shape = {1, H, T_, T_, D};
  call.scale = 1.0f / std::sqrt(float(D));
  call.q = queries_[std::size_t(l)].data();
  call.k = keys_[std::size_t(l)].data();
  call.v = v_.data();
  return true;
}

void BertModel::finish_call(const float* weights, const float* context) {
  finish_layer(next_layer_, weights, context);
  ++next_layer_;
  projected_ = false;
}

std::string BertModel::check_pending() const {
  if (T_ == 0) return "no forward pass is under way: begin one first";
  if (next_layer_ >= c_.num_hidden_layers) return "the forward pass is done: every layer is finished";
  if (!projected_) return "ask for layer " + std::to_string(next_layer_) + "'s attention call first (next_call)";
  return {};
}

void BertModel::forward(Backend backend, const std::int32_t* ids, const std::int32_t* types, int T,
                        const HeadAblation& heads_off) {
  begin_forward(ids, types, T, heads_off);
  run_staged(backend, *this);
}

std::vector<BertModel::Prediction> BertModel::predict(int position, int k) const {
  if (!mlm_ || position < 0 || position >= T_ || k < 1) return {};
  const int E = c_.hidden_size, V = c_.vocab_size;
  RowMatrix x(1, E), y(1, E);
  x = hidden_.back().row(position);
  transform_.forward(x, y);
  gelu_forward(y, y);
  layer_norm_forward(y, transform_norm_.weight.data(), transform_norm_.bias.data(), c_.layer_norm_eps, y);
  const RowMatrix& decoder = decoder_.size() ? decoder_ : word_;
  std::vector<float> logits(static_cast<std::size_t>(V));
  double max = -INFINITY;
  for (int v = 0; v < V; ++v) {
    logits[std::size_t(v)] = decoder.row(v).dot(y.row(0)) + prediction_bias_[std::size_t(v)];
    max = std::max(max, double(logits[std::size_t(v)]));
  }
  if (!std::isfinite(max)) return {};  // (the loader's checks keep this from happening: no order to give)
  double sum = 0.0;
  for (float z : logits) sum += std::exp(double(z) - max);
  std::vector<int> order(static_cast<std::size_t>(V));
  for (int v = 0; v < V; ++v) order[std::size_t(v)] = v;
  const int top = std::min(k, V);
  // Ties go to the lower id, so the order is the same on every machine.
  std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](int a, int b) {
    return logits[std::size_t(a)] != logits[std::size_t(b)] ? logits[std::size_t(a)] > logits[std::size_t(b)] : a < b;
  });
  std::vector<Prediction> out;
  for (int i = 0; i < top; ++i) {
    const int v = order[std::size_t(i)];
    out.push_back({v, float(std::exp(double(logits[std::size_t(v)]) - max) / sum), logits[std::size_t(v)]});
  }
  return out;
}

}  // namespace attnlab
