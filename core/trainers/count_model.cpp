#include "count_model.h"

#include <algorithm>
#include <cmath>

#include "../layers/init.h"
#include "../losses.h"

namespace attnlab {

namespace {

constexpr int S = CountShape::S;

// nn.Sigmoid, as activations.cpp: two branches so that exp never overflows.
float sigmoid(float z) {
  if (z >= 0.0f) return 1.0f / (1.0f + std::exp(-z));
  const float e = std::exp(z);
  return e / (1.0f + e);
}

Parameter normal_parameter(const char* name, int rows, int cols, Rng& rng) {
  Parameter p(name, rows, cols);
  init_normal(p.value, rng);  // torch.randn
  return p;
}

}  // namespace

void CountKernelTensors::resize(int batch, int width) {
  B = batch;
  D = width;
  const std::size_t rows = std::size_t(batch), positions = rows * S, W = std::size_t(width);
  q.assign(rows * W, 0.0f);
  out.assign(rows * W, 0.0f);
  d_out.assign(rows * W, 0.0f);
  d_q.assign(rows * W, 0.0f);
  k.assign(positions * W, 0.0f);
  v.assign(positions * W, 0.0f);  // columns 1..D-1 stay 0
  d_k.assign(positions * W, 0.0f);
  d_v.assign(positions * W, 0.0f);
  weights.assign(positions, 0.0f);
}

AttentionForward CountKernelTensors::forward_args(int first, int count) {
  AttentionForward a;
  a.shape = {count, 1, 1, S, D};
  a.scale = 1.0f / std::sqrt(float(D));  // the notebook's / sqrt(att_dim)
  const std::size_t row = std::size_t(first), W = std::size_t(D);
  a.q = q.data() + row * W;
  a.k = k.data() + row * S * W;
  a.v = v.data() + row * S * W;
  a.weights = weights.data() + row * S;
  a.out = out.data() + row * W;
  return a;
}

AttentionBackward CountKernelTensors::backward_args(int first, int count) {
  const AttentionForward f = forward_args(first, count);
  AttentionBackward a;
  a.shape = f.shape;
  a.scale = f.scale;
  a.q = f.q;
  a.k = f.k;
  a.v = f.v;
  a.weights = f.weights;
  const std::size_t row = std::size_t(first), W = std::size_t(D);
  a.d_out = d_out.data() + row * W;
  a.d_q = d_q.data() + row * W;
  a.d_k = d_k.data() + row * S * W;
  a.d_v = d_v.data() + row * S * W;
  return a;
}

float count_label(const std::int32_t* tokens) {
  int twos = 0, fours = 0;
  for (int s = 0; s < S; ++s) {
    twos += tokens[s] == 2;
    fours += tokens[s] == 4;
  }
  return twos > fours ? 1.0f : 0.0f;
}

namespace {
std::optional<Embedding> make_lookup(CountEmbedding kind, int embed_dim, Rng& rng) {
  if (kind != CountEmbedding::lookup) return std::nullopt;
  return Embedding(CountShape::V, embed_dim, rng);
}
std::optional<Linear> make_one_hot(CountEmbedding kind, int embed_dim, Rng& rng) {
  if (kind != CountEmbedding::one_hot) return std::nullopt;
  return Linear(CountShape::V, embed_dim, rng);  // torch.nn.Linear(one_hot_dim = 10, embed_dim)
}
}  // namespace

CountModel::CountModel(Rng& init_rng, CountEmbedding embedding, CountSizes sizes)
    : sizes_(sizes),
      embed_(make_lookup(embedding, sizes.embed_dim, init_rng)),
      one_hot_(make_one_hot(embedding, sizes.embed_dim, init_rng)),
      query_(normal_parameter("query", 1, sizes.att_dim, init_rng)),
      wk_(sizes.embed_dim, sizes.att_dim, init_rng),
      wv_(sizes.embed_dim, 1, init_rng),
      nn0_(1, sizes.hidden, init_rng),
      nn2_(sizes.hidden, 1, init_rng),
      digit_keys_(V, sizes.att_dim),
      digit_values_(V, 1),
      d_digit_keys_(V, sizes.att_dim),
      d_digit_values_(V, 1),
      table_(V, sizes.embed_dim),
      d_table_(V, sizes.embed_dim),
      one_hots_(RowMatrix::Identity(V, V)) {
  if (embed_) embed_->weight.name = "embed.weight";
  if (one_hot_) {
    one_hot_->weight.name = "embed.weight";  // [E, 10], as torch names Linear's weight
    one_hot_->bias.name = "embed.bias";
  }
  wk_.weight.name = "WK.weight";
  wk_.bias.name = "WK.bias";
  wv_.weight.name = "WV.weight";
  wv_.bias.name = "WV.bias";
  nn0_.weight.name = "nn.0.weight";
  nn0_.bias.name = "nn.0.bias";
  nn2_.weight.name = "nn.2.weight";
  nn2_.bias.name = "nn.2.bias";
  query_.torch_shape = {1, int(query_.value.cols())};  // torch.nn.Parameter(torch.randn(1, att_dim)): [1, A], not [A]
}

ParameterList CountModel::parameters() {
  ParameterList list{&query_};
  if (embed_) list.push_back(&embed_->weight);
  if (one_hot_) list.insert(list.end(), {&one_hot_->weight, &one_hot_->bias});
  list.insert(list.end(), {&wk_.weight, &wk_.bias, &wv_.weight, &wv_.bias, &nn0_.weight, &nn0_.bias, &nn2_.weight, &nn2_.bias});
  return list;
}

void CountModel::embed_digits() {
  if (embed_) table_ = embed_->weight.value;      // embed(d) = row d of the Embedding's weight
  else one_hot_->forward(one_hots_, table_);      // embed(d) = Linear(one_hot(d)) = W[:, d] + b
}

void CountModel::embed_digits_backward() {
  if (embed_) embed_->weight.grad += d_table_;
  else one_hot_->backward(one_hots_, d_table_, nullptr);  // dW += d_table^T I, db += sum over the digits
}

void CountModel::zero_grad() { zero_grads(parameters()); }

CountHead CountModel::head() const {
  return {nn0_.weight.value.data(), nn0_.bias.value.data(), nn2_.weight.value.data(), nn2_.bias.value(0, 0),
          sizes_.hidden};
}



void CountModel::attach(CountKernelTensors& tensors, int first, int count) {
  tensors_ = &tensors;
  first_ = first;
  count_ = count;
  tokens_.resize(std::size_t(count) * S);
  for (std::vector<float>* rows : {&a_, &z_, &p_, &d_p_, &dz_, &da_}) rows->resize(count);
}

void CountModel::prepare(const std::int32_t* tokens) {
  std::copy(tokens, tokens + std::size_t(count_) * S, tokens_.begin());
  // k = WK(embed(x)), v = WV(embed(x)): the 10 digits embedded and projected once, then gathered
  embed_digits();
  wk_.forward(table_, digit_keys_);
  wv_.forward(table_, digit_values_);
  CountKernelTensors& t = *tensors_;
  // Plain loops over the A floats of a row (5 by default): a std::copy of 20 bytes is a call to memmove
  // in WASM.
  const int D = sizes_.att_dim;  // the kernel's width
  const float* query = query_.value.data();
  for (int b = 0; b < count_; ++b) {
    const std::size_t row = std::size_t(first_ + b);
    for (int d = 0; d < D; ++d) t.q[row * D + d] = query[d];  // one query for every sample
    for (int s = 0; s < S; ++s) {
      const int digit = tokens_[std::size_t(b) * S + s];
      const float* key = digit_keys_.row(digit).data();
      const std::size_t at = (row * S + s) * D;
      for (int d = 0; d < D; ++d) t.k[at + d] = key[d];
      t.v[at] = digit_values_(digit, 0);  // column 0; columns 1..A-1 are 0 (resize())
    }
  }
}

void CountModel::finish_forward() {
  // a = out[:, 0] -> nn.0 -> ReLU -> nn.2 (count_model_simd128.h) -> Sigmoid
  for (int b = 0; b < count_; ++b) a_[b] = weighted(b);
  count_head_forward(head(), a_.data(), count_, z_.data(), lanes_);
  for (int b = 0; b < count_; ++b) p_[b] = sigmoid(z_[b]);
}

double CountModel::loss_backward(const float* labels, double batch_count) {
  const double loss_sum = binary_cross_entropy_sum(p_.data(), labels, std::size_t(count_), d_p_.data(), batch_count);
  for (int b = 0; b < count_; ++b) {
    // p = sigmoid(z): dz = dp p (1 - p), with the forward's output
    const float p = p_[b];
    dz_[b] = d_p_[b] * p * (1.0f - p);
    nn2_.bias.grad(0, 0) += dz_[b];  // z = w2 . h + b2
  }
  // z = nn(a): down to da, adding nn.0's and nn.2's weight gradients
  count_head_backward(head(), a_.data(), dz_.data(), count_, nn0_.weight.grad.data(), nn0_.bias.grad.data(),
                      nn2_.weight.grad.data(), da_.data(), lanes_);
  CountKernelTensors& t = *tensors_;
  const int D = sizes_.att_dim;  // the kernel's width
  for (int b = 0; b < count_; ++b) {
    // a = out[b][0]: dOut's column 0; the other columns of out are 0 and unused
    float* d_out = &t.d_out[std::size_t(first_ + b) * D];
    std::fill(d_out, d_out + D, 0.0f);
    d_out[0] = da_[b];
  }
  return loss_sum;
}

void CountModel::finish_backward() {
  const CountKernelTensors& t = *tensors_;
  const int D = sizes_.att_dim;  // the kernel's width
  // q = the query for every sample: its gradient is dQ summed over the rows
  for (int b = 0; b < count_; ++b)
    for (int d = 0; d < D; ++d) query_.grad(0, d) += t.d_q[std::size_t(first_ + b) * D + d];
  // k, v gathered from the digits' rows: their gradients scattered back to the digits (v's column 0;
  // its other columns are constants)
  d_digit_keys_.setZero();
  d_digit_values_.setZero();
  const std::size_t at = std::size_t(first_) * S * D;
  scatter_add_rows(tokens_.data(), count_ * S, &t.d_k[at], D, D, d_digit_keys_.data());
  scatter_add_rows(tokens_.data(), count_ * S, &t.d_v[at], D, 1, d_digit_values_.data());
  // digit_keys = WK(table), digit_values = WV(table), table = embed(0..9)
  wk_.backward(table_, d_digit_keys_, &d_embed_);
  d_table_ = d_embed_;
  wv_.backward(table_, d_digit_values_, &d_embed_);
  d_table_ += d_embed_;
  embed_digits_backward();
}

double CountModel::train_pass(const std::int32_t* tokens, const float* labels, Backend backend, double batch_count) {
  zero_grad();
  prepare(tokens);
  attention_forward(backend, kernel_forward_args());
  finish_forward();
  const double loss_sum = loss_backward(labels, batch_count);
  attention_backward(backend, kernel_backward_args());
  finish_backward();
  return loss_sum;
}

void CountModel::forward(const std::int32_t* tokens, Backend backend) {
  prepare(tokens);
  attention_forward(backend, kernel_forward_args());
  finish_forward();
}

int CountModel::correct_predictions(const float* labels) const {
  int correct = 0;
  for (int b = 0; b < count_; ++b) correct += (p_[b] > 0.5f ? 1.0f : 0.0f) == labels[b];
  return correct;
}

}  // namespace attnlab
