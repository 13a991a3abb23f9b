// Golden parity with PyTorch 1.13 for the Count lab: the course notebook's AttentionModel (05) on a fixed
// batch of 32 sequences (tests/fixtures/make_count_fixtures.py): attention weights, values, the weighted
// value, the probability, the loss, every parameter gradient, and two Adam steps through the trainer
// (two shards); the same for the notebook's alternative embedding, one-hot + Linear(10, 5)
// (count_one_hot_model.safetensors), and that it is an embedding lookup of W^T's rows plus b; and the
// same for the model with the notebook's sizes changed, embed_dim 8, att_dim 3, 18 hidden units
// (count_sizes_model.safetensors: the lab's settings embedDim, attDim and hidden).
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

// A model under test and its fixture (the files have the same keys).
struct Case {
  const char* name;
  const char* file;
  CountEmbedding embedding;
  CountSizes sizes;
};
const Case kLookup{"embedding", "count_attention_model.safetensors", CountEmbedding::lookup, {}};
const Case kOneHot{"one-hot", "count_one_hot_model.safetensors", CountEmbedding::one_hot, {}};
const Case kResized{"embedDim 8, attDim 3, hidden 18", "count_sizes_model.safetensors", CountEmbedding::lookup, {8, 3, 18}};

const Case* g_case = &kLookup;
const SafeTensorsFile& fixture() {
  static const SafeTensorsFile lookup = load_fixture(kLookup.file), one_hot = load_fixture(kOneHot.file),
                               resized = load_fixture(kResized.file);
  return g_case == &kOneHot ? one_hot : g_case == &kResized ? resized : lookup;
}

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
void check_forward(const Case& c) {
  g_case = &c;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  const std::vector<float> labels = tensor_f(fixture(), "labels");
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    const std::string tag = std::string(backend_name(backend)) + " " + c.name;
    for (int i = 0; i < kBatch; ++i) CHECK(count_label(&tokens[std::size_t(i) * S]) == labels[i]);
    Rng rng(0);
    CountModel m(rng, c.embedding, c.sizes);
    load_init(m.parameters());
    CountKernelTensors tensors;
    tensors.resize(kBatch, c.sizes.att_dim);
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
  g_case = &kLookup;
}

// Two Adam steps through the trainer (two shards of 16) against the fixture, lr 1e-4 and 1e-2.
void check_adam(const Case& c) {
  g_case = &c;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  for (const auto& [lr_name, lr] : {std::pair{"1e-4", 1e-4}, std::pair{"1e-2", 1e-2}}) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      const std::string tag = std::string(backend_name(backend)) + " " + c.name + " lr=" + lr_name,
                        prefix = std::string("lr") + lr_name;
      CountConfig config;
      config.batch = kBatch;
      config.lr = lr;
      config.embedding = c.embedding;
      config.sizes = c.sizes;
      CountTrainer t(config);
      REQUIRE(t.model().parameters().size() == (c.embedding == CountEmbedding::one_hot ? 11u : 10u));
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
  g_case = &kLookup;
}

}  // namespace

TEST_CASE("count vs PyTorch: forward (weights, values, weighted, probability), loss and every gradient") { check_forward(kLookup); }
TEST_CASE("count[one-hot] vs PyTorch: forward, loss and every gradient (embed.weight [5, 10], embed.bias [5])") { check_forward(kOneHot); }
TEST_CASE("count[embedDim 8, attDim 3, hidden 18] vs PyTorch: forward, loss and every gradient") { check_forward(kResized); }
TEST_CASE("count vs PyTorch: two Adam steps through the trainer (two shards of 16), lr 1e-4 and 1e-2") { check_adam(kLookup); }
TEST_CASE("count[one-hot] vs PyTorch: two Adam steps through the trainer (two shards of 16), lr 1e-4 and 1e-2") { check_adam(kOneHot); }
TEST_CASE("count[embedDim 8, attDim 3, hidden 18] vs PyTorch: two Adam steps through the trainer, lr 1e-4 and 1e-2") { check_adam(kResized); }

// The notebook's "Alternatively": one_hot(d) through Linear(10, 5) is column d of its weight plus the
// bias, i.e. row d of W^T + b: an Embedding holding those rows (the fixture's lookup_equivalent, made
// and asserted in PyTorch) is the same function of the digits. So the two models differ in their
// parameters (one bias shared by all ten digits) and their initial values, not in what they can embed.
TEST_CASE("count: one-hot + Linear embeds each digit as an Embedding lookup of W^T + b (bit for bit), and gives its numbers") {
  g_case = &kOneHot;
  const std::vector<std::int32_t> tokens = fixture_tokens();
  const std::vector<float> labels = tensor_f(fixture(), "labels");
  const std::vector<float> rows = tensor_f(fixture(), "lookup_equivalent/embed.weight");
  REQUIRE(rows.size() == std::size_t(CountShape::V) * CountSizes{}.embed_dim);
  Rng rng_a(0), rng_b(0);
  CountModel one_hot(rng_a, CountEmbedding::one_hot), lookup(rng_b, CountEmbedding::lookup);
  load_init(one_hot.parameters());
  for (Parameter* p : lookup.parameters()) {
    if (p->name == "embed.weight") std::copy(rows.begin(), rows.end(), p->value.data());
    else std::copy_n(tensor_f(fixture(), "init/" + p->name).data(), p->size(), p->value.data());
  }
  CHECK(one_hot.one_hot_embed().weight.value.rows() == CountSizes{}.embed_dim);  // torch's Linear(10, 5).weight: [5, 10]
  CHECK(one_hot.one_hot_embed().weight.value.cols() == CountShape::V);
  CountKernelTensors ta, tb;
  ta.resize(kBatch, CountSizes{}.att_dim);
  tb.resize(kBatch, CountSizes{}.att_dim);
  one_hot.attach(ta, 0, kBatch);
  lookup.attach(tb, 0, kBatch);
  one_hot.forward(tokens.data(), Backend::scalar);
  lookup.forward(tokens.data(), Backend::scalar);
  for (int d = 0; d < CountShape::V; ++d)
    for (int e = 0; e < CountSizes{}.embed_dim; ++e) {
      INFO("digit " << d << " dim " << e);
      CHECK(one_hot.digit_vectors()(d, e) == lookup.digit_vectors()(d, e));  // the same float
      CHECK(one_hot.digit_vectors()(d, e) == rows[std::size_t(d) * CountSizes{}.embed_dim + e]);
    }
  for (int b = 0; b < kBatch; ++b) CHECK(one_hot.probability(b) == lookup.probability(b));
  g_case = &kLookup;
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

TEST_CASE("count: the sizes in records (embedDim, attDim, hidden), each range, and the memory they need together") {
  Json config;
  REQUIRE(parse_json(R"({"embedDim": 8, "attDim": 3, "hidden": 18})", config).empty());
  CHECK(CountTrainer::config_error(config).empty());
  const CountConfig c = CountTrainer::config_from(config);
  CHECK(c.sizes.embed_dim == 8);
  CHECK(c.sizes.att_dim == 3);
  CHECK(c.sizes.hidden == 18);
  const Json defaults = CountTrainer::config_to_record(CountConfig{});
  CHECK(defaults.find("embedDim")->as_number() == 5);  // the notebook's self.embed_dim = 5
  CHECK(defaults.find("attDim")->as_number() == 5);
  CHECK(defaults.find("hidden")->as_number() == 200);  // its Linear(1, 200)
  REQUIRE(parse_json(R"({"attDim": 0})", config).empty());
  CHECK(CountTrainer::config_error(config) == "attDim must be an integer in [1, 64], got 0");
  REQUIRE(parse_json(R"({"hidden": 5000})", config).empty());
  CHECK(CountTrainer::config_error(config) == "hidden must be an integer in [1, 1024], got 5000");
  // Each in range, the product not: 10,000 sequences of 10 keys 64 wide.
  REQUIRE(parse_json(R"({"batch": 10000, "attDim": 64})", config).empty());
  const std::string error = CountTrainer::config_error(config);
  CHECK(error.find("these settings need about ") == 0);
  CHECK(error.find(": lower batch (10000) or attDim (64)") != std::string::npos);
  REQUIRE(parse_json(R"({"batch": 10000})", config).empty());
  CHECK(CountTrainer::config_error(config).empty());  // the notebook's sizes train at the largest batch
}
