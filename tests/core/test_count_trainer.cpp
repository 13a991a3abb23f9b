// The Count lab's trainer (issue 11): the notebook's figures on fixed seeds, the stuck seed and the
// reliable preset, the hand-built exact solution, the model's gradients by finite differences, the staged
// step's bits, and the records' checks.
#include <cmath>
#include <cstring>

#include "io/json.h"
#include "shard_runner.h"
#include "test_support.h"
#include "trainers/count_trainer.h"
#include "trainers/registry.h"
#include "trainers/staged_step.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr int S = 10;

// Found by benchmarks/count_native.cpp's scan of seeds 0..99 at lr 1e-4 (docs/count.md).
constexpr std::uint32_t kStuckSeed = 15;  // 0.73, the query's favourite digit an 8

CountConfig config(std::uint32_t seed, double lr = 1e-4, int batch = 100) {
  CountConfig c;
  c.seed = seed;
  c.lr = lr;
  c.batch = batch;
  return c;
}

CountEvaluation train(const CountConfig& c, int steps) {
  CountTrainer t(c);
  for (int i = 0; i < steps; ++i) t.step(Backend::simd128);
  return t.evaluate(10000, Backend::simd128);
}

std::vector<float> all_values(CountTrainer& t) {
  std::vector<float> out;
  for (Parameter* p : t.parameters()) out.insert(out.end(), p->value.data(), p->value.data() + p->size());
  return out;
}

Json parse(const std::string& text) {
  Json out;
  const std::string error = parse_json(text, out);
  REQUIRE_MESSAGE(error.empty(), error);
  return out;
}

// The hand-built exact solution (docs/count.md): values +1 for a 2, -1 for a 4, 0 otherwise; uniform
// attention (WK = 0), so the weighted value is (count(2) - count(4)) / 10; nn: a step between 0 and 0.1.
void set_hand_built(CountModel& m) {
  for (Parameter* p : m.parameters()) p->value.setZero();
  m.embed().weight.value(2, 0) = 1.0f;  // row d = [d == 2, d == 4, 0, 0, 0]
  m.embed().weight.value(4, 1) = 1.0f;
  m.wv().weight.value(0, 0) = 1.0f;     // WV.weight = [[1, -1, 0, 0, 0]], WV.bias = 0
  m.wv().weight.value(0, 1) = -1.0f;
  ParameterList p = m.parameters();
  p[6]->value(0, 0) = 1000.0f;   // nn.0.weight[0] = 1000
  p[7]->value(0, 0) = -50.0f;    // nn.0.bias[0] = -50: relu(1000 a - 50) is 0 for a <= 0, >= 50 for a >= 0.1
  p[8]->value(0, 0) = 1.0f;      // nn.2.weight[0][0] = 1
  p[9]->value(0, 0) = -5.0f;     // nn.2.bias = -5: p = sigmoid(-5) = 0.0067 for a <= 0, sigmoid(>= 45) for a >= 0.1
}

}  // namespace

// Seeds 10..14. Over seeds 0..99, 88 reach 0.95 (docs/count.md; PyTorch: 57 of 60), so any five pass
// this with probability ~0.9; seeds 0..4 happen to give 3 of 5 (0 sticks, 1 reaches 0.90).
TEST_CASE("count[lr=1e-4, 5001 steps, seeds 10..14]: >= 0.95 on 10,000 fresh sequences on at least 4 of 5") {
  int reached = 0;
  for (std::uint32_t seed = 10; seed <= 14; ++seed) {
    const CountEvaluation e = train(config(seed), 5001);
    INFO("seed " << seed << " accuracy " << e.accuracy);
    reached += e.accuracy >= 0.95;
    MESSAGE("count lr=1e-4 seed " << seed << ": accuracy " << e.accuracy << ", ties " << e.tie_accuracy);
  }
  CHECK(reached >= 4);
}

TEST_CASE("count[lr=1e-3, 1000 steps, seeds 1..5]: >= 0.99 on every seed") {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const CountEvaluation e = train(config(seed, 1e-3), 1000);
    INFO("seed " << seed << " accuracy " << e.accuracy);
    CHECK(e.accuracy >= 0.99);
  }
}

TEST_CASE("count[stuck seed 15]: below 0.8 after 5001 steps at lr 1e-4, its attention on a distractor; >= 0.99 at lr 1e-3") {
  CountTrainer t(config(kStuckSeed));
  for (int i = 0; i < 5001; ++i) t.step(Backend::simd128);
  const CountEvaluation stuck = t.evaluate(10000, Backend::simd128);
  CHECK(stuck.accuracy < 0.8);
  // The query's preferred digits: one that is neither 2 nor 4 outranks one of them.
  Json out;
  REQUIRE(t.inspect_record(parse(R"({"tokens": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]})"), Backend::simd128, out).empty());
  const std::vector<float>& w = out.find("weights")->floats();
  float distractor = 0.0f;
  for (int d = 0; d < 10; ++d)
    if (d != 2 && d != 4) distractor = std::max(distractor, w[d]);
  INFO("weights on the digits 0..9: 2 -> " << w[2] << ", 4 -> " << w[4] << ", best other " << distractor);
  CHECK(distractor > std::min(w[2], w[4]));
  CHECK(train(config(kStuckSeed, 1e-3), 5001).accuracy >= 0.99);
}

TEST_CASE("count: the hand-built solution scores 100% on 10,000 sequences, ties included, with uniform attention") {
  CountTrainer t(config(0));
  set_hand_built(t.model());
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    const CountEvaluation e = t.evaluate(10000, backend);
    CHECK(e.accuracy == 1.0);
    CHECK(e.ties > 2500);
    CHECK(e.tie_accuracy == 1.0);
    CHECK(e.mass_on_24 == doctest::Approx(e.uniform_mass_on_24).epsilon(1e-5));  // flat attention
    CHECK(e.uniform_mass_on_24 == doctest::Approx(0.2).epsilon(0.03));
    CHECK(e.loss < 0.01);
  }
  CountInspection in;
  REQUIRE(t.inspect({2, 2, 4, 7, 7, 7, 7, 7, 7, 7}, Backend::simd128, in).empty());
  CHECK(in.weighted[0] == doctest::Approx(0.1));
  CHECK(in.values == std::vector<float>{1, 1, -1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(in.probability[0] > 0.999f);
  CHECK(in.label[0] == 1);
}

TEST_CASE("count: the model's gradients by central differences (every parameter, random weights)") {
  Rng rng(11);
  CountModel m(rng);
  Rng data(5);
  std::vector<std::int32_t> tokens;
  std::vector<float> labels;
  sample_count_batch(data, 6, tokens, labels);
  CountKernelTensors tensors;
  tensors.resize(6, CountSizes{}.att_dim);
  m.attach(tensors, 0, 6);
  m.train_pass(tokens.data(), labels.data(), Backend::scalar, 6);
  std::vector<RowMatrix> grads;
  for (Parameter* p : m.parameters()) grads.push_back(p->grad);
  const auto loss = [&] {
    m.forward(tokens.data(), Backend::scalar);
    double sum = 0.0;
    for (int b = 0; b < 6; ++b) {
      const double p = m.probability(b);
      sum -= labels[b] ? std::log(p) : std::log(1.0 - p);
    }
    return sum / 6;
  };
  const ParameterList params = m.parameters();
  for (std::size_t i = 0; i < params.size(); ++i)
    check_gradient(params[i]->name, params[i]->value.data(), params[i]->size(), grads[i].data(), loss, 1e-2f, 2e-2);
}

TEST_CASE("count: a seed reproduces a run bit for bit; another seed does not; threads do not change the bits") {
  auto run = [](std::uint32_t seed, int workers) {
    const int was = shard_runner().active_workers();
    shard_runner().set_active_workers(workers);
    CountTrainer t(config(seed, 1e-3));
    std::vector<float> trace;
    for (int i = 0; i < 30; ++i) trace.push_back(t.step(Backend::simd128).loss);
    const std::vector<float> values = all_values(t);
    trace.insert(trace.end(), values.begin(), values.end());
    shard_runner().set_active_workers(was);
    return trace;
  };
  const auto a = run(7, 1), b = run(7, 1), c = run(8, 1), inline_ = run(7, 0);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a == inline_);
}

TEST_CASE("count: the staged step (one kernel call over the batch) gives step()'s bits, B=100 and B=7, scalar and simd128") {
  for (int batch : {100, 7}) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      INFO("B=" << batch << " " << backend_name(backend));
      CountTrainer a(config(3, 1e-3, batch)), b(config(3, 1e-3, batch));
      for (int i = 0; i < 4; ++i) {
        const StepMetrics sharded = a.step(backend);
        b.begin_step();
        const AttentionForward f = b.kernel_forward_args();
        CHECK(f.shape.B == batch);
        CHECK(f.shape.H == 1);
        CHECK(f.shape.T == 1);
        CHECK(f.shape.S == 10);
        CHECK(f.shape.D == 5);
        attention_forward(backend, f);
        b.middle_step();
        attention_backward(backend, b.kernel_backward_args());
        const StepMetrics staged = b.end_step();
        CHECK(std::memcmp(&staged.loss, &sharded.loss, sizeof(float)) == 0);
        CHECK(staged.accuracy == sharded.accuracy);
        CHECK(staged.step == sharded.step);
      }
      CHECK(all_values(a) == all_values(b));
    }
  }
}

TEST_CASE("count: evaluation is the same figure at every call; the majority baseline and uniform mass") {
  CountTrainer t(config(2));
  for (int i = 0; i < 50; ++i) t.step(Backend::simd128);
  const CountEvaluation a = t.evaluate(10000, Backend::simd128), b = t.evaluate(10000, Backend::simd128);
  CHECK(a.accuracy == b.accuracy);
  CHECK(a.loss == b.loss);
  CHECK(a.mass_on_24 == b.mass_on_24);
  CHECK(a.samples == 10000);
  CHECK(a.majority == doctest::Approx(0.647).epsilon(0.03));  // P(count(2) <= count(4)), issue 11
  CHECK(a.ties == doctest::Approx(2910).epsilon(0.05));      // P(count(2) == count(4)) ~ 0.29
  CHECK(a.uniform_mass_on_24 == doctest::Approx(0.2).epsilon(0.03));
}

TEST_CASE("count records: config checks, defaults, inspect inputs, fixed sample") {
  const auto error = [](const std::string& text) { return trainer_config_error("count", parse(text), {}); };
  CHECK(error("{}").empty());
  CHECK(error(R"({"batch": 0})") == "batch must be an integer in [1, 10000], got 0");
  CHECK(error(R"({"batch": 10001})") == "batch must be an integer in [1, 10000], got 10001");
  CHECK(error(R"({"batch": 10000})").empty());
  CHECK(error(R"({"batch": 2.5})") == "batch must be an integer");
  CHECK(error(R"({"lr": 0})") == "lr must be a number in (0, 1], got 0.000000");
  CHECK(error(R"({"lr": 1})").empty());
  CHECK(error(R"({"seed": -1})") == "seed must be an integer in [0, 4294967295]");
  const Json defaults = find_trainer_kind("count")->defaults("");
  CHECK(defaults.find("steps")->as_number() == 5001);
  CHECK(defaults.find("lr")->as_number() == 1e-4);
  CHECK(defaults.find("batch")->as_number() == 100);
  CHECK(defaults.find("seed")->as_number() == 2);

  std::string message;
  const std::unique_ptr<Trainer> t = create_trainer("count", parse(R"({"seed": 4, "batch": 16})"), {}, message);
  REQUIRE(t);
  CHECK(t->config_record().find("batch")->as_number() == 16);
  CHECK_FALSE(t->staged_step()->needs_weights());  // the kernel need not write its weights back
  Json out;
  CHECK(t->inspect_record(parse("3"), Backend::scalar, out) == "inspect takes {tokens: 10 digits} or {batch: N * 10 digits}");
  CHECK(t->inspect_record(parse("{}"), Backend::scalar, out) == "inspect takes {tokens: 10 digits} or {batch: N * 10 digits}");
  CHECK(t->inspect_record(parse(R"({"tokens": [1, 2, 3]})"), Backend::scalar, out) == "tokens must hold 10 digits, got 3");
  CHECK(t->inspect_record(parse(R"({"tokens": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]})"), Backend::scalar, out) ==
        "tokens[9] = 10 is not a digit: tokens must be in [0, 9]");
  CHECK(t->inspect_record(parse(R"({"tokens": [1, 2, 3, 4, 5, 6, 7, 8, 9, 0.5]})"), Backend::scalar, out) ==
        "tokens[9] must be a whole number in [-2147483648, 2147483647], got 0.5");
  CHECK(t->inspect_record(parse(R"({"tokens": "0123456789"})"), Backend::scalar, out) ==
        "tokens must be a Float32Array (or an array of numbers), got string");
  CHECK(t->inspect_record(parse(R"({"batch": [1, 2, 3]})"), Backend::scalar, out) ==
        "batch must hold N * 10 digits (N >= 1), got 3");
  CHECK(t->inspect_record(parse(R"({"batch": [0, 1, 2, 3, 4, 5, 6, 7, 8, -1]})"), Backend::scalar, out) ==
        "batch[9] = -1 is not a digit: batch must be in [0, 9]");
  CHECK(t->inspect_record(parse(R"({"tokens": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "gradients": 1})"), Backend::scalar, out) ==
        "gradients must be true or false");

  REQUIRE(t->inspect_record(parse(R"({"tokens": [2, 2, 4, 0, 0, 0, 0, 0, 0, 0]})"), Backend::scalar, out).empty());
  CHECK(out.find("N")->as_number() == 1);
  const std::vector<float>& w = out.find("weights")->floats();
  REQUIRE(w.size() == 10);
  double sum = 0.0;
  for (float x : w) sum += x;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(w[3] == w[9]);  // the same digit, the same key, the same weight
  const std::vector<float>& v = out.find("values")->floats();
  REQUIRE(v.size() == 10);
  CHECK(v[0] == v[1]);
  double weighted = 0.0;
  for (int s = 0; s < 10; ++s) weighted += double(w[s]) * v[s];
  CHECK(out.find("weighted")->floats()[0] == doctest::Approx(weighted).epsilon(1e-5));
  CHECK(out.find("label")->ints() == std::vector<std::int32_t>{1});
  CHECK(out.find("probability")->floats().size() == 1);

  REQUIRE(t->data_record("fixedSample", out).empty());
  const std::vector<std::int32_t> sample = out.find("tokens")->ints();
  REQUIRE(sample.size() == 50);
  Json again;
  const std::unique_ptr<Trainer> same = create_trainer("count", parse(R"({"seed": 4})"), {}, message);
  REQUIRE(same->data_record("fixedSample", again).empty());
  CHECK(again.find("tokens")->ints() == sample);  // the seed's, whatever the batch
  CHECK(t->data_record("images", out) == "the Count trainer's data has one part, 'fixedSample', got 'images'");

  Json batch = Json::object(), tokens = Json::array();
  for (std::int32_t x : sample) tokens.push(Json(x));
  batch.set("batch", tokens);
  REQUIRE(t->inspect_record(batch, Backend::simd128, out).empty());
  CHECK(out.find("N")->as_number() == 5);
  CHECK(out.find("weights")->floats().size() == 50);
  CHECK(out.find("values")->floats().size() == 50);
  CHECK(out.find("weighted")->floats().size() == 5);
  CHECK(out.find("probability")->floats().size() == 5);
  CHECK(out.find("label")->ints().size() == 5);
}

// The staged-call protocol over a trainer (staged_step.h), as the page's driver runs it: the forward
// call's weights are given back or not (Count never reads them; a GPU kernel keeps them), and then the
// backward call recomputes them. Either way the step is step()'s, bit for bit.
TEST_CASE("count: the staged step through the staged-call protocol gives step()'s bits, weights given back or not") {
  for (bool give_weights : {true, false}) {
    INFO("weights given back: " << give_weights);
    CountTrainer a(config(5, 1e-3, 7)), b(config(5, 1e-3, 7));
    StagedTrainerStep protocol(b);
    CHECK_FALSE(protocol.needs_weights());
    CHECK(protocol.check_pending() == "no training step is under way: begin one first");
    for (int i = 0; i < 3; ++i) {
      const StepMetrics direct = a.step(Backend::simd128);
      protocol.begin();
      CHECK(protocol.check_finished() == "the step's forward call is still pending");
      if (give_weights) {
        run_staged(Backend::simd128, protocol);
      } else {
        AttentionForward f;
        REQUIRE(protocol.next_call(f));
        std::vector<float> weights(f.shape.weights_size()), out(f.shape.q_size());
        f.weights = weights.data(), f.out = out.data();
        attention_forward(Backend::simd128, f);
        protocol.finish_call(nullptr, out.data());
        AttentionBackward back;
        REQUIRE(protocol.next_backward(back));
        CHECK(back.weights == nullptr);  // not kept: recomputed by the driver
        run_staged(Backend::simd128, protocol);
      }
      CHECK(protocol.check_finished() == "");
      AttentionForward none;
      CHECK_FALSE(protocol.next_call(none));
      const StepMetrics staged = protocol.end();
      CHECK(std::memcmp(&staged.loss, &direct.loss, sizeof(float)) == 0);
      CHECK(staged.step == direct.step);
    }
    const auto pa = a.parameters(), pb = b.parameters();
    for (std::size_t i = 0; i < pa.size(); ++i) CHECK(std::memcmp(pa[i]->value.data(), pb[i]->value.data(), pa[i]->size() * sizeof(float)) == 0);
  }
}
