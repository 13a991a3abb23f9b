// Golden parity with PyTorch 1.13 for the Scaled dot-product lab (tests/fixtures/make_scaled_fixtures.py):
// notebook 04's SimpleAttention stage by stage (Q K^T, / sqrt(d_k), the mask, softmax, weights V) and
// notebook 03's SelfAttention in eval mode with no mask, a causal mask and a padding mask, on both CPU
// backends; then dropout's statistics in train mode.
//
// Tolerance: 1e-6 (the issue's), or twice PyTorch's own float32-vs-float64 error where that is larger.
#include <cmath>
#include <limits>

#include "attention.h"
#include "attention_stages.h"
#include "layers/dropout.h"
#include "layers/self_attention.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

const SafeTensorsFile& fixture() {
  static const SafeTensorsFile f = load_fixture("scaled_dot_product.safetensors");
  return f;
}

double tolerance(const std::string& key) { return std::max(1e-6, 2.0 * double(tensor_f(fixture(), "err/" + key)[0])); }

// -inf must match -inf; NaN in PyTorch's result (a row with every key masked) must be 0 in ours.
void expect_close(const std::string& name, const float* ours, std::size_t n) {
  const std::vector<float> torch = tensor_f(fixture(), name);
  REQUIRE(torch.size() == n);
  const double tol = tolerance(name);
  for (std::size_t i = 0; i < n; ++i) {
    INFO(name << "[" << i << "]: ours " << ours[i] << ", torch " << torch[i] << ", tolerance " << tol);
    if (std::isnan(torch[i])) CHECK(ours[i] == 0.0f);
    else if (std::isinf(torch[i])) CHECK(ours[i] == torch[i]);
    else CHECK(std::fabs(double(ours[i]) - torch[i]) <= tol);
  }
}

RowMatrix matrix(const std::string& name, int rows, int cols) {
  const std::vector<float> v = tensor_f(fixture(), name);
  REQUIRE(v.size() == std::size_t(rows) * cols);
  return ConstMatrixMap(v.data(), rows, cols);
}

std::vector<float> causal_mask(int L, int batch) {
  std::vector<float> m(std::size_t(batch) * L * L, 0.0f);
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < L; ++t)
      for (int s = t + 1; s < L; ++s) m[(std::size_t(b) * L + t) * L + s] = -kInf;
  return m;
}

std::vector<float> padding_mask(int L, const std::vector<int>& lengths) {
  std::vector<float> m(lengths.size() * L * L, 0.0f);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (int t = 0; t < L; ++t)
      for (int s = 0; s < L; ++s)
        if (t >= lengths[b] || s >= lengths[b]) m[(b * L + t) * L + s] = -kInf;
  return m;
}

}  // namespace

TEST_CASE("scaled dot-product, notebook 04: every stage equals PyTorch's, without and with a causal mask, on both CPU backends") {
  const RowMatrix q = matrix("simple/q", 5, 4), k = matrix("simple/k", 5, 4), v = matrix("simple/v", 5, 4);
  for (const std::string mask_name : {"none", "causal"}) {
    const std::vector<float> mask = causal_mask(5, 1);
    const float* m = mask_name == "causal" ? mask.data() : nullptr;
    const ScoreStages st = score_stages(q, k, 0.5f, m);  // 1 / sqrt(d_k), d_k = 4
    const std::string at = "simple/" + mask_name + "/";
    expect_close(at + "scores", st.scores.data(), 25);
    expect_close(at + "scaled", st.scaled.data(), 25);
    expect_close(at + "masked", st.masked.data(), 25);
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      std::vector<float> weights(25), out(20);
      AttentionForward a;
      a.shape = {1, 1, 5, 5, 4};
      a.scale = 0.5f;
      a.q = q.data();
      a.k = k.data();
      a.v = v.data();
      a.mask = {m, 25, 0};
      a.weights = weights.data();
      a.out = out.data();
      attention_forward(backend, a);
      INFO("backend " << backend_name(backend));
      expect_close(at + "weights", weights.data(), 25);
      expect_close(at + "output", out.data(), 20);
      // The rows of the softmax sum to 1 (over the allowed keys), and a masked weight is exactly 0.
      for (int t = 0; t < 5; ++t) {
        double sum = 0.0;
        for (int s = 0; s < 5; ++s) {
          sum += weights[std::size_t(t) * 5 + s];
          if (m && s > t) CHECK(weights[std::size_t(t) * 5 + s] == 0.0f);
        }
        CHECK(std::fabs(sum - 1.0) < 1e-6);
      }
    }
  }
}

TEST_CASE("SelfAttention, notebook 03, eval mode: projections, weights and output equal PyTorch's with no, causal and padding masks") {
  constexpr int N = 2, L = 6, E = 8;
  Rng rng(0);
  SelfAttention layer(E, 0.1f, rng);
  std::vector<std::string> names;
  for (Parameter* p : layer.parameters()) {
    names.push_back(p->name);
    const std::vector<float> v = tensor_f(fixture(), "self/init/" + p->name);
    REQUIRE(v.size() == p->size());
    std::copy(v.begin(), v.end(), p->value.data());
  }
  CHECK(names == std::vector<std::string>{"query.weight", "query.bias", "key.weight", "key.bias", "value.weight", "value.bias"});
  const RowMatrix x = matrix("self/x", N * L, E);
  const std::vector<float> causal = causal_mask(L, N), padding = padding_mask(L, {6, 4});
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    for (const auto& [name, mask] : {std::pair<std::string, const float*>{"none", nullptr}, {"causal", causal.data()},
                                     {"padding", padding.data()}}) {
      INFO("backend " << backend_name(backend) << ", mask " << name);
      Rng dropout_rng(1);
      layer.forward(backend, x, N, L, mask, /*train=*/false, dropout_rng);
      expect_close("self/q", layer.queries().data(), N * L * E);
      expect_close("self/k", layer.keys().data(), N * L * E);
      expect_close("self/v", layer.values().data(), N * L * E);
      expect_close("self/" + name + "/weights", layer.weights().data(), N * L * L);
      expect_close("self/" + name + "/output", layer.output().data(), N * L * E);
    }
  }
}

TEST_CASE("dropout on the weights (train mode): about p of them are 0, the rest scaled by 1/(1-p), and the expected value is kept") {
  // Over 2,000 seeds of one 6x6 softmax: the mean of each dropped weight must be within 4 standard
  // errors of the weight itself (the expectation dropout preserves), and the zero fraction near p.
  constexpr int L = 6, E = 8, kSeeds = 2000;
  constexpr float p = 0.25f;
  Rng init(3);
  SelfAttention layer(E, p, init);
  RowMatrix x(L, E);
  for (float& xi : x.reshaped()) xi = init.normal();
  Rng eval_rng(0);
  layer.forward(Backend::scalar, x, 1, L, nullptr, false, eval_rng);
  const RowMatrix exact = layer.weights();
  RowMatrix sum = RowMatrix::Zero(L, L);
  double zeros = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    Rng rng(std::uint64_t(seed) + 100);
    layer.forward(Backend::scalar, x, 1, L, nullptr, true, rng);
    const RowMatrix& w = layer.weights();
    for (Eigen::Index i = 0; i < w.size(); ++i) {
      const float wi = w.data()[i], ei = exact.data()[i];
      if (wi == 0.0f) zeros += 1;
      else CHECK(std::fabs(wi - ei / (1.0f - p)) <= 1e-6f * std::max(1.0f, ei));
    }
    sum += w;
  }
  const double n = double(kSeeds) * L * L;
  const double zero_fraction = zeros / n, se_fraction = std::sqrt(p * (1 - p) / n);
  CHECK(std::fabs(zero_fraction - p) < 4 * se_fraction);
  for (Eigen::Index i = 0; i < exact.size(); ++i) {
    const double e = exact.data()[i], mean = sum.data()[i] / kSeeds;
    const double se = e * std::sqrt(p / (1 - p) / kSeeds);  // std of one draw: e * sqrt(p / (1 - p))
    INFO("weight " << i << ": exact " << e << ", mean over seeds " << mean);
    CHECK(std::fabs(mean - e) <= 4 * se + 1e-7);
  }
  // The output in train mode is the dropped weights times V.
  Rng rng(7);
  layer.forward(Backend::scalar, x, 1, L, nullptr, true, rng);
  const RowMatrix expected = layer.weights() * layer.values();
  CHECK(max_abs_diff(layer.output().data(), expected.data(), std::size_t(expected.size())) < 1e-5);
  // The same seed drops the same weights (bit for bit).
  Rng again(7);
  const RowMatrix first = layer.output();
  layer.forward(Backend::scalar, x, 1, L, nullptr, true, again);
  CHECK(max_abs_diff(layer.output().data(), first.data(), std::size_t(first.size())) == 0.0);
}

TEST_CASE("row entropy: log(S) for a uniform row, 0 for one-hot, masked zeros count as nothing") {
  const float w[] = {0.25f, 0.25f, 0.25f, 0.25f, 1.0f, 0.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.0f};
  const std::vector<double> h = row_entropies(w, 3, 4);
  CHECK(h[0] == doctest::Approx(std::log(4.0)));
  CHECK(h[1] == 0.0);
  CHECK(h[2] == doctest::Approx(std::log(2.0)));
}
