// Golden parity with PyTorch 1.13 for the Induction lab's model (tests/fixtures/make_induction_fixtures.py:
// a transformer written in plain PyTorch to TransformerLens's conventions): from the same weights and
// batch, the loss, every layer's attention pattern and every parameter's gradient, on both CPU backends,
// for an attention-only model (2 layers), one with the MLP and LayerNorm (3 layers, H D != d_model) and
// a one-layer model with LayerNorm and no MLP.
//
// Tolerance: 1e-5, or twice PyTorch's own float32-vs-float64 error where that is larger (the fixture
// stores it per tensor): our float32 sums run in another order than PyTorch's.
#include <map>

#include "io/json.h"
#include "test_support.h"
#include "trainers/induction_model.h"
#include "trainers/induction_trainer.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("induction_reference.safetensors");
  return f;
}

double tolerance(const std::string& key) { return std::max(1e-5, 2.0 * double(tensor_f(reference(), key)[0])); }

// The case's settings from the fixture's metadata.
InductionConfig case_config(const std::string& name) {
  Json cases;
  REQUIRE(parse_json(reference().metadata.at("cases"), cases).empty());
  const Json& c = *cases.find(name);
  InductionConfig config;
  config.layers = int(c.find("layers")->as_number());
  config.heads = int(c.find("heads")->as_number());
  config.d_model = int(c.find("dModel")->as_number());
  config.d_head = int(c.find("dHead")->as_number());
  config.mlp = c.find("mlp")->as_bool();
  config.layer_norm = c.find("layerNorm")->as_bool();
  config.vocab = int(c.find("vocab")->as_number());
  config.context = int(c.find("context")->as_number());
  config.batch = int(c.find("batch")->as_number());
  return config;
}

void load_init(const std::string& prefix, ParameterList params) {
  for (Parameter* p : params) {
    const std::vector<float> v = tensor_f(reference(), prefix + "init/" + p->name);
    REQUIRE_MESSAGE(v.size() == p->size(), p->name);
    std::copy(v.begin(), v.end(), p->value.data());
  }
}

void check_case(const std::string& name, Backend backend) {
  const InductionConfig c = case_config(name);
  Rng rng(0, 1);
  InductionModel model(c, c.vocab, rng);
  const std::string prefix = name + "/";
  load_init(prefix, model.parameters());
  InductionBatch batch;
  batch_of_sequences(tensor_i(reference(), prefix + "tokens"), c.batch, c.context, batch);
  const double targets = double(c.batch) * (c.context - 1);
  model.begin_training(batch, targets);
  model.run(backend);
  REQUIRE(model.done());
  const std::string tag = name + " " + backend_name(backend);
  const double loss = model.loss_sum() / targets;
  INFO(tag << " loss " << loss << " torch " << tensor_f(reference(), prefix + "loss")[0]);
  CHECK(std::fabs(loss - tensor_f(reference(), prefix + "loss")[0]) <= tolerance(prefix + "err/loss"));
  for (int l = 0; l < c.layers; ++l) {
    const std::vector<float> torch = tensor_f(reference(), prefix + "pattern/" + std::to_string(l));
    REQUIRE(torch.size() == model.pattern(l).size());
    const double diff = max_abs_diff(model.pattern(l).data(), torch.data(), torch.size());
    INFO(tag << " pattern " << l << ": max |ours - torch| " << diff);
    CHECK(diff <= tolerance(prefix + "err/pattern/" + std::to_string(l)));
  }
  for (Parameter* p : model.parameters()) {
    const std::vector<float> torch = tensor_f(reference(), prefix + "grad/" + p->name);
    REQUIRE(torch.size() == p->size());
    const double diff = max_abs_diff(p->grad.data(), torch.data(), torch.size());
    const double tol = tolerance(prefix + "err/grad/" + p->name);
    INFO(tag << " grad " << p->name << ": max |ours - torch| " << diff << ", tolerance " << tol);
    CHECK(diff <= tol);
  }
}

}  // namespace

TEST_CASE("induction model[attn2: 2 layers, attention only] gradients against PyTorch") {
  check_case("attn2", Backend::scalar);
  check_case("attn2", Backend::simd128);
}

TEST_CASE("induction model[full3: 3 layers, MLP, LayerNorm, HD != E] gradients against PyTorch") {
  check_case("full3", Backend::scalar);
  check_case("full3", Backend::simd128);
}

TEST_CASE("induction model[ln1: 1 layer, LayerNorm, no MLP] gradients against PyTorch") {
  check_case("ln1", Backend::scalar);
  check_case("ln1", Backend::simd128);
}

namespace {

// 40 torch.optim.Adam steps from the same weights on the same sequences (induction_adam_<case>.*): every
// step's loss within 1e-5 relative of PyTorch's float64 run, and the weights after, within 1e-4, b_K
// included (its gradient is exactly 0: induction_model.cpp keeps it so, as the float64 run does). The
// trainer runs as the CLI does (two shards, SIMD128).
void check_adam(const std::string& name) {
  const SafeTensorsFile adam = load_fixture("induction_adam_" + name + ".safetensors");
  const SafeTensorsFile init = load_fixture("induction_adam_" + name + "_init.safetensors");
  Json settings, data;
  REQUIRE(parse_json(adam.metadata.at("settings"), settings).empty());
  REQUIRE(parse_json(read_fixture_bytes(std::string(ATTNLAB_FIXTURES_DIR) + "/induction_adam_" + name + ".json"), data).empty());
  InductionConfig c = case_config(name);
  c.batch = int(settings.find("batch")->as_number());
  c.lr = settings.find("lr")->as_number();
  const int steps = int(settings.find("steps")->as_number());
  REQUIRE(validate_induction_config(c).empty());
  InductionTrainer trainer(c);
  for (Parameter* p : trainer.parameters()) {
    const std::vector<float> v = tensor_f(init, p->name);
    REQUIRE(v.size() == p->size());
    std::copy(v.begin(), v.end(), p->value.data());
  }
  REQUIRE(trainer.set_sequences(data) == "");
  const std::vector<float> losses = tensor_f(adam, "losses");
  double worst = 0.0;
  for (int k = 0; k < steps; ++k) {
    const float loss = trainer.step(Backend::simd128).loss;
    worst = std::max(worst, std::fabs(double(loss) - losses[std::size_t(k)]) / std::fabs(double(losses[std::size_t(k)])));
  }
  INFO(name << ": the largest relative difference of a step's loss " << worst);
  CHECK(worst <= 1e-5);
  for (Parameter* p : trainer.parameters()) {
    const std::vector<float> torch = tensor_f(adam, "after/" + p->name);
    const double diff = max_abs_diff(p->value.data(), torch.data(), torch.size());
    INFO(name << " after " << steps << " steps: " << p->name << " max |ours - torch| " << diff);
    CHECK(diff <= 1e-4);
  }
}

}  // namespace

TEST_CASE("induction trainer[attn2]: 40 Adam steps against PyTorch's float64 run") { check_adam("attn2"); }
TEST_CASE("induction trainer[full3: MLP, LayerNorm]: 40 Adam steps against PyTorch's float64 run") { check_adam("full3"); }
