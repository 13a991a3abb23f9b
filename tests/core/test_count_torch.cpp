// Golden parity with PyTorch 1.13 for the Count lab: the course notebook's AttentionModel (05) on a fixed
// batch of 32 sequences (tests/fixtures/make_count_fixtures.py): attention weights, values, the weighted
// value, the probability, the loss, every parameter gradient, and two Adam steps through the trainer
// (two shards); the same for the notebook's alternative embedding, one-hot + Linear(10, 5)
// (count_one_hot_model.safetensors), and that it is an embedding lookup of W^T's rows plus b.
//
// Tolerance: 1e-5, or twice PyTorch's own float32-vs-float64 error where that is larger (the fixture
// stores it per tensor): our float32 sums run in another order than PyTorch's.
#include <cmath>

#include "io/json.h"
#include "test_support.h"
#include "trainers/count_trainer.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr int kBatch = 32, S = 10;

const SafeTensorsFile& lookup_fixture() {
  static const SafeTensorsFile f = load_fixture("count_attention_model.safetensors");
  return f;
}
const SafeTensorsFile& one_hot_fixture() {
  static const SafeTensorsFile f = load_fixture("count_one_hot_model.safetensors");
  return f;
}
// The fixture of the embedding under test (both files have the same keys).
CountEmbedding g_embedding = CountEmbedding::lookup;
const SafeTensorsFile& fixture() { return g_embedding == CountEmbedding::one_hot ? one_hot_fixture() : lookup_fixture(); }
const char* embedding_name(CountEmbedding e) { return e == CountEmbedding::one_hot ? "one-hot" : "embedding"; }

double tolerance(const std::string& key) { return std::max(1e-5, 2.0 * double(tensor_f(fixture(), "err/" + key)[0])); }

void expect_close(const std::string& name, const float* ours, std::size_t n, const std::string& tag,
                  double tol = -1.0) {
  const std::vector<float> torch = tensor_f(fixture(), name);
  REQUIRE(torch.size() == n);
  if (tol < 0) tol = tolerance(name);
  const double diff = max_abs_diff(ours, torch.data(), n);
  INFO(tag << " " << name << ": max |ours - torch| " << diff << ", tolerance " << tol);
  CHECK(diff <= tol);
}

void load_init(ParameterList params) {
  for (Parameter* p : params) {
    const std::vector<float> v = tensor_f(fixture(), "init/" + p->name);
    REQUIRE(v.size() == p->size());
    std::copy(v.begin(), v.end(), p->value.data());
  }
}

std::vector<std::int32_t> fixture_tokens() {
  const auto it = fixture().tensors.find("tokens");
  REQUIRE(it != fixture().tensors.end());
  const std::vector<float> as_float = it->second.to_float();
  std::vector<std::int32_t> tokens(as_float.begin(), as_float.end());
  REQUIRE(tokens.size() == std::size_t(kBatch) * S);
  return tokens;
}

}  // namespace

TEST_CASE("count: parameters in PyTorch's state_dict order (query first: a module's own parameters come before its children's)") {
  Rng rng(0);
  CountModel m(rng);
  std::vector<std::string> names;
  for (Parameter* p : m.parameters()) names.push_back(p->name);
  CHECK(names == std::vector<std::string>{"query", "embed.weight", "WK.weight", "WK.bias", "WV.weight", "WV.bias",
                                          "nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"});
  for (Parameter* p : m.parameters()) {
    const auto it = fixture().tensors.find("init/" + p->name);
    REQUIRE(it != fixture().tensors.end());
    CHECK(it->second.to_float().size() == p->size());
  }
}

namespace {

// Forward, loss and every gradient of one model against its fixture, on both CPU kernels.
void check_forward(CountEmbedding embedding) {
  g_embedding = embedding;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  const std::vector<float> labels = tensor_f(fixture(), "labels");
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    const std::string tag = std::string(backend_name(backend)) + " " + embedding_name(embedding);
    for (int i = 0; i < kBatch; ++i) CHECK(count_label(&tokens[std::size_t(i) * S]) == labels[i]);
    Rng rng(0);
    CountModel m(rng, embedding);
    load_init(m.parameters());
    CountKernelTensors tensors;
    tensors.resize(kBatch);
    m.attach(tensors, 0, kBatch);
    const double loss = m.train_pass(tokens.data(), labels.data(), backend, kBatch) / kBatch;
    std::vector<float> weights, values, weighted, probability;
    for (int b = 0; b < kBatch; ++b) {
      weights.insert(weights.end(), m.weights(b), m.weights(b) + S);
      for (int s = 0; s < S; ++s) values.push_back(m.value(b, s));
      weighted.push_back(m.weighted(b));
      probability.push_back(m.probability(b));
    }
    expect_close("weights", weights.data(), weights.size(), tag);
    expect_close("values", values.data(), values.size(), tag);
    expect_close("weighted", weighted.data(), weighted.size(), tag);
    expect_close("probability", probability.data(), probability.size(), tag);
    const float loss_f = float(loss);
    expect_close("loss", &loss_f, 1, tag);
    for (Parameter* p : m.parameters()) expect_close("grad/" + p->name, p->grad.data(), p->size(), tag);
  }
  g_embedding = CountEmbedding::lookup;
}

// Two Adam steps through the trainer (two shards of 16) against the fixture, lr 1e-4 and 1e-2.
void check_adam(CountEmbedding embedding) {
  g_embedding = embedding;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  for (const auto& [lr_name, lr] : {std::pair{"1e-4", 1e-4}, std::pair{"1e-2", 1e-2}}) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      const std::string tag = std::string(backend_name(backend)) + " " + embedding_name(embedding) + " lr=" + lr_name,
                        prefix = std::string("lr") + lr_name;
      CountConfig c;
      c.batch = kBatch;
      c.lr = lr;
      c.embedding = embedding;
      CountTrainer t(c);
      REQUIRE(t.model().parameters().size() == (embedding == CountEmbedding::one_hot ? 11u : 10u));
      load_init(t.parameters());
      const std::vector<float> losses = tensor_f(fixture(), prefix + "/losses");
      for (int i = 0; i < 2; ++i) {
        const StepMetrics m = t.step_on(tokens, backend);
        INFO(tag << " step " << i << ": ours " << m.loss << " torch " << losses[i]);
        CHECK(std::fabs(m.loss - losses[i]) <= tolerance(prefix + "/losses"));
      }
      for (Parameter* p : t.parameters()) {
        // WK.bias's gradient is 0 in exact arithmetic (softmax ignores a shift common to a row's scores, and
        // q . bias is common to all ten), so both sides hold rounding noise there, which Adam's
        // g / (sqrt(v) + eps) scales into a step of up to lr: allow lr per step.
        const double tol = p->name == "WK.bias" ? 2 * lr + 1e-5 : -1.0;
        expect_close(prefix + "/after/" + p->name, p->value.data(), p->size(), tag, tol);
      }
    }
  }
  g_embedding = CountEmbedding::lookup;
}

}  // namespace

TEST_CASE("count vs PyTorch: forward (weights, values, weighted, probability), loss and every gradient") { check_forward(CountEmbedding::lookup); }
TEST_CASE("count[one-hot] vs PyTorch: forward, loss and every gradient (embed.weight [5, 10], embed.bias [5])") { check_forward(CountEmbedding::one_hot); }
TEST_CASE("count vs PyTorch: two Adam steps through the trainer (two shards of 16), lr 1e-4 and 1e-2") { check_adam(CountEmbedding::lookup); }
TEST_CASE("count[one-hot] vs PyTorch: two Adam steps through the trainer (two shards of 16), lr 1e-4 and 1e-2") { check_adam(CountEmbedding::one_hot); }

// The notebook's "Alternatively": one_hot(d) through Linear(10, 5) is column d of its weight plus the
// bias, i.e. row d of W^T + b: an Embedding holding those rows (the fixture's lookup_equivalent, made
// and asserted in PyTorch) is the same function of the digits. So the two models differ in their
// parameters (one bias shared by all ten digits) and their initial values, not in what they can embed.
TEST_CASE("count: one-hot + Linear embeds each digit as an Embedding lookup of W^T + b (bit for bit), and gives its numbers") {
  g_embedding = CountEmbedding::one_hot;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  const std::vector<float> labels = tensor_f(fixture(), "labels");
  const std::vector<float> rows = tensor_f(fixture(), "lookup_equivalent/embed.weight");
  REQUIRE(rows.size() == std::size_t(CountShape::V) * CountShape::E);
  Rng rng_a(0), rng_b(0);
  CountModel one_hot(rng_a, CountEmbedding::one_hot), lookup(rng_b, CountEmbedding::lookup);
  load_init(one_hot.parameters());
  for (Parameter* p : lookup.parameters()) {
    if (p->name == "embed.weight") std::copy(rows.begin(), rows.end(), p->value.data());
    else std::copy_n(tensor_f(fixture(), "init/" + p->name).data(), p->size(), p->value.data());
  }
  CHECK(one_hot.one_hot_embed().weight.value.rows() == CountShape::E);  // torch's Linear(10, 5).weight: [5, 10]
  CHECK(one_hot.one_hot_embed().weight.value.cols() == CountShape::V);
  CountKernelTensors ta, tb;
  ta.resize(kBatch);
  tb.resize(kBatch);
  one_hot.attach(ta, 0, kBatch);
  lookup.attach(tb, 0, kBatch);
  one_hot.forward(tokens.data(), Backend::scalar);
  lookup.forward(tokens.data(), Backend::scalar);
  for (int d = 0; d < CountShape::V; ++d)
    for (int e = 0; e < CountShape::E; ++e) {
      INFO("digit " << d << " dim " << e);
      CHECK(one_hot.digit_vectors()(d, e) == lookup.digit_vectors()(d, e));  // the same float
      CHECK(one_hot.digit_vectors()(d, e) == rows[std::size_t(d) * CountShape::E + e]);
    }
  for (int b = 0; b < kBatch; ++b) CHECK(one_hot.probability(b) == lookup.probability(b));
  g_embedding = CountEmbedding::lookup;
}

TEST_CASE("count: the embedding setting in records ('embedding' or 'one-hot'), and a clear error for another") {
  Json config;
  REQUIRE(parse_json(R"({"embedding": "one-hot"})", config).empty());
  CHECK(CountTrainer::config_error(config).empty());
  CHECK(CountTrainer::config_from(config).embedding == CountEmbedding::one_hot);
  CHECK(CountTrainer::config_to_record(CountConfig{}).find("embedding")->as_string() == "embedding");
  REQUIRE(parse_json(R"({"embedding": "onehot"})", config).empty());
  CHECK(CountTrainer::config_error(config) == "embedding must be embedding or one-hot, got 'onehot'");
}
