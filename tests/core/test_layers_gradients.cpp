// Finite-difference gradient checks for every layer and loss: the analytic backward of each must
// agree with central differences of its forward.
#include <limits>

#include "layers/activations.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "losses.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

double dot(const float* a, const float* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += double(a[i]) * b[i];
  return s;
}

}  // namespace

TEST_CASE("Linear: dW, db and dx match finite differences") {
  Rng rng(1);
  Linear layer(5, 3, rng);
  RowMatrix x = RowMatrix::Random(4, 5), y(4, 3);
  const RowMatrix g = RowMatrix::Random(4, 3);
  auto loss = [&]() {
    layer.forward(x, y);
    return dot(y.data(), g.data(), y.size());
  };
  loss();
  RowMatrix dx;
  layer.backward(x, g, &dx);
  check_gradient("Linear dW", layer.weight.value.data(), layer.weight.size(), layer.weight.grad.data(), loss);
  check_gradient("Linear db", layer.bias.value.data(), layer.bias.size(), layer.bias.grad.data(), loss);
  check_gradient("Linear dx", x.data(), x.size(), dx.data(), loss);
}

TEST_CASE("Embedding: the gradient scatters into the rows that were looked up") {
  Rng rng(2);
  Embedding emb(6, 4, rng);
  const std::int32_t ids[] = {1, 4, 1, 0, 5};
  RowMatrix out(5, 4);
  const RowMatrix g = RowMatrix::Random(5, 4);
  auto loss = [&]() {
    emb.forward(ids, 5, out);
    return dot(out.data(), g.data(), out.size());
  };
  loss();
  emb.backward(ids, 5, g);
  check_gradient("Embedding dW", emb.weight.value.data(), emb.weight.size(), emb.weight.grad.data(), loss);
  CHECK(emb.weight.grad.row(2).isZero());  // never looked up
}

TEST_CASE("ReLU and Sigmoid backward match finite differences") {
  RowMatrix x = RowMatrix::Random(3, 7) * 3.0f, y(3, 7), dx(3, 7);
  for (Eigen::Index i = 0; i < x.size(); ++i)  // keep away from relu's kink at 0
    if (std::fabs(x.data()[i]) < 0.05f) x.data()[i] = 0.5f;
  const RowMatrix g = RowMatrix::Random(3, 7);
  auto relu_loss = [&]() {
    relu_forward(x, y);
    return dot(y.data(), g.data(), y.size());
  };
  relu_loss();
  relu_backward(x, g, dx);
  check_gradient("ReLU dx", x.data(), x.size(), dx.data(), relu_loss, 1e-3f);
  auto sigmoid_loss = [&]() {
    sigmoid_forward(x, y);
    return dot(y.data(), g.data(), y.size());
  };
  sigmoid_loss();
  sigmoid_backward(y, g, dx);
  check_gradient("Sigmoid dx", x.data(), x.size(), dx.data(), sigmoid_loss, 1e-3f);
  // no overflow at the extremes
  RowMatrix extreme(1, 2);
  extreme << -200.0f, 200.0f;
  RowMatrix s(1, 2);
  sigmoid_forward(extreme, s);
  CHECK(s(0, 0) == 0.0f);
  CHECK(s(0, 1) == 1.0f);
}

TEST_CASE("losses: cross-entropy, binary cross-entropy and MSE gradients") {
  RowMatrix logits = RowMatrix::Random(6, 5) * 2.0f, d;
  const std::int32_t targets[] = {0, 4, 2, 2, 1, 3};
  auto ce = [&]() { return double(cross_entropy(logits, targets, nullptr)); };
  cross_entropy(logits, targets, &d);
  check_gradient("cross_entropy dlogits", logits.data(), logits.size(), d.data(), ce, 1e-2f, 1e-2);

  RowMatrix p = (RowMatrix::Random(2, 4).array() * 0.4f + 0.5f).matrix(), y(2, 4);
  y << 0, 1, 1, 0, 1, 0, 0.5f, 1;
  auto bce = [&]() { return double(binary_cross_entropy(p, y, nullptr)); };
  binary_cross_entropy(p, y, &d);
  check_gradient("bce dp", p.data(), p.size(), d.data(), bce, 1e-3f, 1e-2);
  // log clamped at -100 like PyTorch: p = 0 with y = 1 costs 100, not infinity
  RowMatrix zero = RowMatrix::Zero(1, 1), one = RowMatrix::Ones(1, 1);
  CHECK(binary_cross_entropy(zero, one, nullptr) == doctest::Approx(100.0f));

  RowMatrix pred = RowMatrix::Random(3, 3), target = RowMatrix::Random(3, 3);
  auto mse_loss = [&]() { return double(mse(pred, target, nullptr)); };
  mse(pred, target, &d);
  check_gradient("mse dpred", pred.data(), pred.size(), d.data(), mse_loss, 1e-2f, 1e-3);
}

TEST_CASE("MultiheadAttention: every parameter and input gradient, with both mask kinds") {
  const float inf = std::numeric_limits<float>::infinity();
  for (Backend backend : {Backend::scalar, Backend::simd128})
    for (int variant = 0; variant < 3; ++variant) {
      const int B = 2, T = 3, S = 4, E = 6, H = variant == 0 ? 1 : 2;
      Rng rng(10 + variant);
      MultiheadAttention mha(E, H, rng);
      // non-zero biases so their gradients matter
      for (Eigen::Index i = 0; i < mha.in_proj_bias.value.size(); ++i) mha.in_proj_bias.value.data()[i] = 0.1f * rng.normal();
      std::vector<float> query = random_vector(B * T * E, rng), key = random_vector(B * S * E, rng),
                         value = random_vector(B * S * E, rng);
      std::vector<float> kpm(B * S, 0.0f), attn(T * S, 0.0f);
      kpm[1] = -inf;        // batch 0 never attends to key 1
      attn[2] = -inf;       // query 0 never attends to key 2
      attn[1 * S + 3] = -1.5f;  // an additive (non-boolean) bias
      MhaInputs in{B, T, S, query.data(), key.data(), value.data()};
      if (variant >= 1) in.key_padding_mask = kpm.data();
      if (variant == 2) in.attn_mask = attn.data();
      const std::vector<float> g = random_vector(B * T * E, rng);
      auto loss = [&]() {
        mha.forward(in, backend);
        return dot(mha.output().data(), g.data(), g.size());
      };
      loss();
      // the masked entries are exactly zero in the per-head weights
      if (variant >= 1)
        for (int h = 0; h < H; ++h)
          for (int t = 0; t < T; ++t) CHECK(mha.weights()[((0 * H + h) * T + t) * S + 1] == 0.0f);
      for (Parameter* p : mha.parameters()) p->zero_grad();
      mha.backward(g.data(), nullptr, backend);
      const std::string tag = std::string(backend_name(backend)) + " variant " + std::to_string(variant) + " ";
      for (Parameter* p : mha.parameters())
        check_gradient(tag + p->name, p->value.data(), p->size(), p->grad.data(), loss);
      const RowMatrix dq = mha.d_query(), dk = mha.d_key(), dv = mha.d_value();
      check_gradient(tag + "d_query", query.data(), query.size(), dq.data(), loss);
      check_gradient(tag + "d_key", key.data(), key.size(), dk.data(), loss);
      check_gradient(tag + "d_value", value.data(), value.size(), dv.data(), loss);
    }
}

TEST_CASE("MultiheadAttention with a query shared across the batch equals the expanded query") {
  const int B = 3, T = 4, S = 5, E = 8, H = 2;
  Rng rng(21);
  MultiheadAttention shared(E, H, rng);
  MultiheadAttention expanded = shared;  // same parameters
  const std::vector<float> q_rows = random_vector(T * E, rng), key = random_vector(B * S * E, rng),
                           value = random_vector(B * S * E, rng), g = random_vector(B * T * E, rng);
  std::vector<float> q_expanded;
  for (int b = 0; b < B; ++b) q_expanded.insert(q_expanded.end(), q_rows.begin(), q_rows.end());
  MhaInputs a{B, T, S, q_rows.data(), key.data(), value.data()};
  a.query_shared = true;
  MhaInputs b{B, T, S, q_expanded.data(), key.data(), value.data()};
  shared.forward(a, Backend::simd128);
  expanded.forward(b, Backend::simd128);
  CHECK(max_abs_diff(shared.output().data(), expanded.output().data(), B * T * E) == 0.0);
  shared.backward(g.data(), nullptr, Backend::simd128);
  expanded.backward(g.data(), nullptr, Backend::simd128);
  // d_query of the shared input is the batch sum of the expanded one's.
  RowMatrix summed = RowMatrix::Zero(T, E);
  for (int i = 0; i < B; ++i) summed += expanded.d_query().middleRows(i * T, T);
  CHECK(max_abs_diff(shared.d_query().data(), summed.data(), T * E) <= 1e-5);
  for (std::size_t p = 0; p < 4; ++p)
    CHECK(max_abs_diff(shared.parameters()[p]->grad.data(), expanded.parameters()[p]->grad.data(),
                       shared.parameters()[p]->size()) <= 1e-5);
}

TEST_CASE("MultiheadAttention with keys and values shared across the batch equals the expanded ones") {
  for (int H : {1, 2})
    for (int T : {1, 3}) {
      const int B = 5, S = 7, E = 8;
      Rng rng(30 + H * 10 + T);
      MultiheadAttention shared(E, H, rng);
      for (Eigen::Index i = 0; i < shared.in_proj_bias.value.size(); ++i)
        shared.in_proj_bias.value.data()[i] = 0.1f * rng.normal();
      MultiheadAttention expanded = shared;  // same parameters
      const std::vector<float> query = random_vector(B * T * E, rng), key_rows = random_vector(S * E, rng),
                               value_rows = random_vector(S * E, rng), g = random_vector(B * T * E, rng),
                               gw = random_vector(B * H * T * S, rng);
      std::vector<float> key, value;
      for (int b = 0; b < B; ++b) {
        key.insert(key.end(), key_rows.begin(), key_rows.end());
        value.insert(value.end(), value_rows.begin(), value_rows.end());
      }
      MhaInputs a{B, T, S, query.data(), key_rows.data(), value_rows.data()};
      a.kv_shared = true;
      MhaInputs e{B, T, S, query.data(), key.data(), value.data()};
      const std::string tag = "H=" + std::to_string(H) + " T=" + std::to_string(T);
      INFO(tag);
      shared.forward(a, Backend::simd128);
      expanded.forward(e, Backend::simd128);
      // the kernel saw one problem of B*T queries per head
      CHECK(shared.shape().B == 1);
      CHECK(shared.shape().T == B * T);
      CHECK(max_abs_diff(shared.output().data(), expanded.output().data(), B * T * E) <= 1e-6);
      CHECK(max_abs_diff(shared.weights().data(), expanded.weights().data(), B * H * T * S) <= 1e-6);
      CHECK(max_abs_diff(shared.weights_mean().data(), expanded.weights_mean().data(), B * T * S) <= 1e-6);
      shared.backward(g.data(), gw.data(), Backend::simd128);
      expanded.backward(g.data(), gw.data(), Backend::simd128);
      CHECK(max_abs_diff(shared.d_query().data(), expanded.d_query().data(), B * T * E) <= 1e-5);
      // d_key and d_value of the shared rows are the batch sums of the expanded ones'
      RowMatrix dk = RowMatrix::Zero(S, E), dv = RowMatrix::Zero(S, E);
      for (int b = 0; b < B; ++b) {
        dk += expanded.d_key().middleRows(b * S, S);
        dv += expanded.d_value().middleRows(b * S, S);
      }
      REQUIRE(shared.d_key().rows() == S);
      CHECK(max_abs_diff(shared.d_key().data(), dk.data(), S * E) <= 1e-5);
      CHECK(max_abs_diff(shared.d_value().data(), dv.data(), S * E) <= 1e-5);
      for (std::size_t p = 0; p < 4; ++p)
        CHECK(max_abs_diff(shared.parameters()[p]->grad.data(), expanded.parameters()[p]->grad.data(),
                           shared.parameters()[p]->size()) <= 1e-5);
    }
}

TEST_CASE("MultiheadAttention kv_shared[B=3,S=5,E=6,H=1|2,T=1|2]: every gradient matches finite differences") {
  for (Backend backend : {Backend::scalar, Backend::simd128})
    for (int H : {1, 2})
      for (int T : {1, 2}) {
        const int B = 3, S = 5, E = 6;
        Rng rng(50 + H + 4 * T);
        MultiheadAttention mha(E, H, rng);
        for (Eigen::Index i = 0; i < mha.in_proj_bias.value.size(); ++i) mha.in_proj_bias.value.data()[i] = 0.1f * rng.normal();
        std::vector<float> query = random_vector(B * T * E, rng), key = random_vector(S * E, rng),
                           value = random_vector(S * E, rng);
        MhaInputs in{B, T, S, query.data(), key.data(), value.data()};
        in.kv_shared = true;
        const std::vector<float> g = random_vector(B * T * E, rng), gw = random_vector(B * H * T * S, rng);
        // a loss on the output and on the per-head weights, as the Lookup lab's uses the weights
        auto loss = [&]() {
          mha.forward(in, backend);
          return dot(mha.output().data(), g.data(), g.size()) + dot(mha.weights().data(), gw.data(), gw.size());
        };
        loss();
        for (Parameter* p : mha.parameters()) p->zero_grad();
        mha.backward(g.data(), gw.data(), backend);
        const std::string tag = std::string(backend_name(backend)) + " H=" + std::to_string(H) + " T=" + std::to_string(T) + " ";
        for (Parameter* p : mha.parameters())
          check_gradient(tag + p->name, p->value.data(), p->size(), p->grad.data(), loss);
        const RowMatrix dq = mha.d_query(), dk = mha.d_key(), dv = mha.d_value();
        check_gradient(tag + "d_query", query.data(), query.size(), dq.data(), loss);
        check_gradient(tag + "d_key", key.data(), key.size(), dk.data(), loss);
        check_gradient(tag + "d_value", value.data(), value.size(), dv.data(), loss);
      }
}

TEST_CASE("MultiheadAttention backward without d_out (a loss on the weights only) leaves out_proj untouched") {
  const int B = 2, T = 1, S = 4, E = 8, H = 2;
  Rng rng(61);
  MultiheadAttention mha(E, H, rng);
  const std::vector<float> query = random_vector(B * T * E, rng), kv = random_vector(S * E, rng),
                           gw = random_vector(B * H * T * S, rng), zero(B * T * E, 0.0f);
  MhaInputs in{B, T, S, query.data(), kv.data(), kv.data()};
  in.kv_shared = true;
  MultiheadAttention with_zero = mha;
  mha.forward(in, Backend::simd128);
  mha.backward(nullptr, gw.data(), Backend::simd128);
  with_zero.forward(in, Backend::simd128);
  with_zero.backward(zero.data(), gw.data(), Backend::simd128);
  CHECK(mha.out_proj_weight.grad.isZero(0.0f));
  CHECK(mha.out_proj_bias.grad.isZero(0.0f));
  CHECK(mha.in_proj_weight.grad.bottomRows(E).isZero(0.0f));  // V's rows: the weights ignore V
  CHECK(max_abs_diff(mha.in_proj_weight.grad.data(), with_zero.in_proj_weight.grad.data(), 3 * E * E) == 0.0);
  CHECK(max_abs_diff(mha.d_query().data(), with_zero.d_query().data(), B * T * E) == 0.0);
}
