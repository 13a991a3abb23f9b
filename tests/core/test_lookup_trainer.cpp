// The Lookup lab's data, trainer and evaluation: the digit asset's parser, the seeded split, epochs,
// one seed one run bit for bit (threads or not), config and input checks, the baselines, and a short
// training run on the real digits.
#include <algorithm>
#include <cmath>
#include <set>

#include "io/json.h"
#include "lookup_support.h"
#include "shard_runner.h"
#include "trainers/lookup_trainer.h"
#include "trainers/staged_step.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string parse(const std::vector<std::uint8_t>& bytes, MnistAsset& out) {
  return parse_mnist_asset(bytes.data(), bytes.size(), out);
}

LookupConfig config(std::uint32_t seed = 0, int heads = 1) {
  LookupConfig c;
  c.seed = seed;
  c.heads = heads;
  return c;
}

std::vector<float> run_trace(const LookupConfig& c, const LookupData& data, int steps) {
  LookupTrainer t(c, data);
  std::vector<float> trace;
  for (int i = 0; i < steps; ++i) {
    const LookupStepMetrics m = t.step(Backend::simd128);
    trace.push_back(m.loss);
    trace.push_back(m.accuracy);
  }
  for (Parameter* p : t.parameters()) trace.insert(trace.end(), p->value.data(), p->value.data() + p->size());
  return trace;
}

}  // namespace

TEST_CASE("digit asset: a round trip, and each malformed input gets its own message") {
  MnistAsset a;
  a.count = 3;
  a.rows = 2;
  a.cols = 2;
  a.pixels = {0, 1, 2, 3, 10, 11, 12, 13, 250, 251, 252, 255};
  a.labels = {7, 0, 9};
  std::vector<std::uint8_t> bytes = write_mnist_asset(a);
  CHECK(bytes.size() == 16 + 12 + 3);
  MnistAsset b;
  REQUIRE(parse(bytes, b).empty());
  CHECK(b.count == 3);
  CHECK(b.rows == 2);
  CHECK(b.cols == 2);
  CHECK(b.pixels == a.pixels);
  CHECK(b.labels == a.labels);
  CHECK(b.image(2)[3] == 255);

  CHECK(parse({}, b) == "digit asset: 0 bytes is shorter than its 16-byte header");
  CHECK(b.count == 0);
  std::vector<std::uint8_t> bad = bytes;
  bad[0] = 0x1f, bad[1] = 0x8b;
  CHECK(parse(bad, b) ==
        "digit asset: bad magic (expected \"MNST\"; a gzip file starts with 1f 8b and must be inflated first)");
  bad = bytes;
  bad[4] = 2;
  CHECK(parse(bad, b) == "digit asset: version 2 is not supported (expected 1)");
  bad = bytes;
  bad.pop_back();
  CHECK(parse(bad, b) == "digit asset: 30 bytes, expected 31 for 3 images of 2x2 pixels and their labels");
  bad = bytes;
  bad.back() = 10;
  CHECK(parse(bad, b) == "digit asset: label 2 is 10 (labels are 0..9)");
  bad = bytes;
  bad[8] = 0;
  CHECK(parse(bad, b) == "digit asset: empty (count 0, 2x2 pixels)");
  bad = bytes;
  bad[11] = 0x7f;  // count ~2e9: refused before any size arithmetic could overflow
  CHECK(parse(bad, b) == "digit asset: count 2130706435 is more than 1,000,000 images");
}

TEST_CASE("the committed digit asset: 10,000 real 28x28 digits, 863..1127 of each") {
  MnistAsset a;
  const std::string why = load_digit_asset(a);
  if (!why.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  CHECK(a.count == 10000);
  CHECK(a.rows == 28);
  CHECK(a.cols == 28);
  int per_label[10] = {};
  for (std::uint8_t l : a.labels) ++per_label[l];
  CHECK(*std::min_element(per_label, per_label + 10) == 863);
  CHECK(*std::max_element(per_label, per_label + 10) == 1127);
  // real digits: mostly background, some full ink
  const long ink = std::count_if(a.pixels.begin(), a.pixels.end(), [](std::uint8_t p) { return p > 127; });
  CHECK(ink > long(a.pixels.size()) / 20);
  CHECK(ink < long(a.pixels.size()) / 4);
}

TEST_CASE("lookup data[seed=0,1]: 100/2000/7900, disjoint, covering the asset; same seed same split") {
  const MnistAsset asset = synthetic_digit_asset();
  LookupData a, b, c;
  REQUIRE(make_lookup_data(asset, 0, a).empty());
  REQUIRE(make_lookup_data(asset, 0, b).empty());
  REQUIRE(make_lookup_data(asset, 1, c).empty());
  CHECK(a.database.count() == 100);
  CHECK(a.held_out.count() == 2000);
  CHECK(a.training.count() == 7900);
  CHECK(validate_lookup_data(a).empty());
  std::set<int> all;
  for (const LookupImages* part : {&a.database, &a.held_out, &a.training})
    all.insert(part->asset_index.begin(), part->asset_index.end());
  CHECK(all.size() == 10000);  // disjoint and covering: 10,000 distinct indices
  CHECK(*all.begin() == 0);
  CHECK(*all.rbegin() == 9999);
  CHECK(a.database.asset_index == b.database.asset_index);
  CHECK(a.held_out.asset_index == b.held_out.asset_index);
  CHECK(a.training.pixels == b.training.pixels);
  CHECK(a.database.asset_index != c.database.asset_index);
  // pixels and labels travel with their index
  const int i = a.training.asset_index[17];
  CHECK(a.training.labels[17] == asset.labels[i]);
  CHECK(std::equal(asset.image(i), asset.image(i) + 784, &a.training.pixels[17 * 784]));

  MnistAsset small = synthetic_digit_asset(2100);
  LookupData d;
  CHECK(make_lookup_data(small, 0, d) ==
        "the digit asset has 2100 images; the lookup lab needs more than 2100 (100 for the database, 2000 held "
        "out, the rest to train on)");
}

TEST_CASE("normalising pixels is torchvision's ToTensor + Normalize([0.5], [0.5]) in float32") {
  CHECK(normalise_pixel(0) == -1.0f);
  CHECK(normalise_pixel(255) == 1.0f);
  CHECK(normalise_pixel(51) == (51.0f / 255.0f - 0.5f) / 0.5f);
}

TEST_CASE("lookup config validation names the setting") {
  CHECK(validate_lookup_config(config()).empty());
  auto c = config();
  c.heads = 5;
  CHECK(validate_lookup_config(c) == "embed_dim (32) must be divisible by heads (5)");
  c = config();
  c.heads = 0;
  CHECK(validate_lookup_config(c) == "heads must be a positive integer, got 0");
  c = config();
  c.embed_dim = 512;
  CHECK(validate_lookup_config(c) == "embed_dim must be at most 256, got 512");
  c = config();
  c.batch = 2000;
  CHECK(validate_lookup_config(c) == "batch must be at most 1024, got 2000");
  c.batch = 9;
  CHECK(validate_lookup_config(c, 8) == "batch must be at most 8, got 9");
  c = config();
  c.lr = 0.0;
  CHECK(validate_lookup_config(c) == "lr must be a number in (0, 1], got 0.000000");
  c.lr = std::nan("");
  CHECK(validate_lookup_config(c).rfind("lr must be a number in (0, 1]", 0) == 0);

  LookupData d = synthetic_lookup_data();
  d.training.labels.pop_back();
  CHECK(validate_lookup_data(d) == "lookup data: the training set has 6193600 pixels for 7899 labels of 784 pixels");
  d = synthetic_lookup_data();
  d.database.labels[3] = 12;
  CHECK(validate_lookup_data(d) == "lookup data: database label 3 is 12 (labels are 0..9)");
}

TEST_CASE("lookup baselines on a hand-made set: chance, mean image, nearest neighbour") {
  LookupData d;
  d.pixels = 2;
  d.database.pixels = {0, 0, /**/ 255, 255, /**/ 255, 0};
  d.database.labels = {1, 2, 2};
  d.held_out.pixels = {0, 51, /**/ 255, 204};
  d.held_out.labels = {1, 2};
  d.training = d.held_out;
  REQUIRE(validate_lookup_data(d).empty());
  const LookupBaselines b = lookup_baselines(d);
  CHECK(b.chance == doctest::Approx((1.0 / 3 + 2.0 / 3) / 2));
  CHECK(b.nearest_neighbour_top1 == 1.0);  // [0, 51] is nearest [0, 0]; [255, 204] nearest [255, 255]
  const double p = 0.4;                    // 51 / 255 * 2: each query is one pixel 0.4 from its neighbour
  CHECK(b.nearest_neighbour_mse == doctest::Approx(p * p / 2).epsilon(1e-6));
  // mean image (-1/3, -1/3); queries (-1, -0.6) and (1, 0.6)
  const double m = -1.0 / 3;
  const double expected = ((m + 1) * (m + 1) + (m + 0.6) * (m + 0.6) + (m - 1) * (m - 1) + (m - 0.6) * (m - 0.6)) / 4;
  CHECK(b.mean_image_mse == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("lookup epochs[B=64]: 7900 queries make 123 batches, each query at most once an epoch") {
  LookupTrainer t(config(), synthetic_lookup_data());
  CHECK(t.steps_per_epoch() == 123);
  CHECK(t.epoch() == 0);
  std::set<int> seen;
  for (int i = 0; i < 123; ++i) {
    const LookupStepMetrics m = t.step(Backend::simd128);
    CHECK(m.epoch == 1);
    seen.insert(t.batch_index().begin(), t.batch_index().end());
  }
  CHECK(seen.size() == 123 * 64);  // 28 of the 7,900 dropped (drop_last)
  const LookupStepMetrics m = t.step(Backend::simd128);
  CHECK(m.epoch == 2);
  CHECK(m.step == 124);
}

TEST_CASE("lookup[heads=2] a seed reproduces a run bit for bit; another seed does not") {
  const LookupData d0 = synthetic_lookup_data(7), d1 = synthetic_lookup_data(8);
  const auto a = run_trace(config(7, 2), d0, 12), b = run_trace(config(7, 2), d0, 12),
             c = run_trace(config(8, 2), d1, 12);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("lookup[heads=2] a step gives the same bits with its two shards on two threads or one after the other") {
  REQUIRE(threads_available());
  REQUIRE(shard_runner().workers() == 1);
  const int was_active = shard_runner().active_workers();
  const LookupData d = synthetic_lookup_data(3);
  shard_runner().set_active_workers(1);
  const auto threaded = run_trace(config(3, 2), d, 10);
  shard_runner().set_active_workers(0);
  const auto inline_ = run_trace(config(3, 2), d, 10);
  shard_runner().set_active_workers(was_active);
  CHECK(threaded == inline_);
}

TEST_CASE("lookup[heads=4] the staged step (whole batch, kernel in between) matches step() up to float sums") {
  const LookupData d = synthetic_lookup_data(5);
  LookupTrainer a(config(5, 4), d), b(config(5, 4), d);
  for (int i = 0; i < 3; ++i) {
    const LookupStepMetrics sharded = a.step(Backend::scalar);
    b.begin_step();
    attention_forward(Backend::scalar, b.mha().kernel_forward_args());
    b.middle_step();
    attention_backward(Backend::scalar, b.mha().kernel_backward_args());
    const LookupStepMetrics staged = b.end_step();
    CHECK(staged.loss == doctest::Approx(sharded.loss).epsilon(1e-6));
    CHECK(staged.accuracy == sharded.accuracy);
  }
  // Adam normalises each step, so float-sum differences in a gradient near zero can grow to ~lr
  for (std::size_t i = 0; i < a.parameters().size(); ++i)
    CHECK(max_abs_diff(a.parameters()[i]->value.data(), b.parameters()[i]->value.data(), a.parameters()[i]->size()) <=
          2 * 3 * a.config().lr);
}

TEST_CASE("lookup: the staged step through the staged-call protocol (the weights given back: the loss reads them) gives the hand-run staged step's bits") {
  const LookupData d = synthetic_lookup_data(5);
  LookupTrainer a(config(5, 2), d), b(config(5, 2), d);
  StagedTrainerStep protocol(b);
  CHECK(protocol.needs_weights());
  for (int i = 0; i < 3; ++i) {
    a.begin_step();
    attention_forward(Backend::scalar, a.kernel_forward_args());
    a.middle_step();
    attention_backward(Backend::scalar, a.kernel_backward_args());
    const LookupStepMetrics by_hand = a.end_step();
    protocol.begin();
    run_staged(Backend::scalar, protocol);
    const StepMetrics staged = protocol.end();
    CHECK(std::memcmp(&staged.loss, &by_hand.loss, sizeof(float)) == 0);
  }
  for (std::size_t i = 0; i < a.parameters().size(); ++i)
    CHECK(max_abs_diff(a.parameters()[i]->value.data(), b.parameters()[i]->value.data(), a.parameters()[i]->size()) == 0.0);
}

TEST_CASE("lookup inspect: bad input names the problem; a held-out query's weights, retrieval and top 10") {
  LookupTrainer t(config(0, 2), synthetic_lookup_data());
  LookupInspection out;
  std::vector<float> query(783, 0.0f);
  CHECK(t.inspect(query.data(), query.size(), Backend::simd128, out) == "query must have 784 elements [P=784], got 783");
  query.assign(784, 0.0f);
  query[5] = std::nanf("");
  CHECK(t.inspect(query.data(), query.size(), Backend::simd128, out) == "query contains NaN at index 5");
  CHECK(t.inspect_held_out(2000, Backend::simd128, out) == "held-out index must be in [0, 2000), got 2000");
  for (int i = 0; i < 20; ++i) t.step(Backend::simd128);
  REQUIRE(t.inspect_held_out(3, Backend::simd128, out).empty());
  CHECK(out.label == t.data().held_out.labels[3]);
  CHECK(out.H == 2);
  CHECK(out.S == 100);
  REQUIRE(out.weights.size() == 200);
  REQUIRE(out.weights_mean.size() == 100);
  double sum = 0.0;
  for (int s = 0; s < 100; ++s) {
    CHECK(out.weights_mean[s] == doctest::Approx((out.weights[s] + out.weights[100 + s]) / 2).epsilon(1e-6));
    sum += out.weights_mean[s];
  }
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  REQUIRE(out.top_index.size() == 10);
  for (int i = 0; i < 10; ++i) {
    CHECK(out.top_weight[i] == out.weights_mean[out.top_index[i]]);
    CHECK(out.top_label[i] == t.database().labels[out.top_index[i]]);
    if (i > 0) CHECK(out.top_weight[i] <= out.top_weight[i - 1]);
  }
  // the retrieval is the weighted sum of the database's images
  REQUIRE(out.retrieval.size() == 784);
  for (int p : {0, 300, 783}) {
    double r = 0.0;
    for (int s = 0; s < 100; ++s) r += double(out.weights_mean[s]) * t.database().images(s, p);
    CHECK(out.retrieval[p] == doctest::Approx(r).epsilon(1e-5));
  }
  // a query of your own has no label
  query[5] = 0.0f;
  REQUIRE(t.inspect(query.data(), 784, Backend::simd128, out).empty());
  CHECK(out.label == -1);
}

TEST_CASE("lookup[heads=1] on synthetic digits: 150 steps at lr=1e-3 find the class (top-1 >> chance)") {
  auto c = config(0, 1);
  c.lr = 1e-3;
  LookupTrainer t(c, synthetic_lookup_data());
  const LookupEvaluation before = t.evaluate(Backend::simd128);
  for (int i = 0; i < 150; ++i) t.step(Backend::simd128);
  const LookupEvaluation after = t.evaluate(Backend::simd128);
  INFO("top1 " << before.top1 << " -> " << after.top1 << ", mse " << before.mse << " -> " << after.mse << ", chance "
               << after.chance);
  CHECK(after.queries == 2000);
  CHECK(after.mse < before.mse);
  CHECK(after.top1 >= 0.9);
  CHECK(after.chance == doctest::Approx(0.1).epsilon(0.2));
  CHECK(after.nearest_neighbour_top1 == 1.0);  // the bars do not overlap between classes
}

TEST_CASE("lookup[heads=1,lr=1e-4,seed=0] on the real digits: 300 steps lower the held-out MSE and beat chance") {
  MnistAsset asset;
  const std::string why = load_digit_asset(asset);
  if (!why.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  LookupData data;
  REQUIRE(make_lookup_data(asset, 0, data).empty());
  LookupTrainer t(config(0, 1), data);
  const LookupEvaluation before = t.evaluate(Backend::simd128);
  float first_loss = 0.0f, last_loss = 0.0f;
  for (int i = 0; i < 300; ++i) {
    const LookupStepMetrics m = t.step(Backend::simd128);
    if (i == 0) first_loss = m.loss;
    last_loss = m.loss;
  }
  const LookupEvaluation after = t.evaluate(Backend::simd128);
  INFO("mse " << before.mse << " -> " << after.mse << ", top1 " << before.top1 << " -> " << after.top1 << ", top10 "
              << after.top10 << ", chance " << after.chance << ", mean image " << after.mean_image_mse
              << ", nearest neighbour " << after.nearest_neighbour_top1 << " / " << after.nearest_neighbour_mse);
  CHECK(after.mse < before.mse);
  CHECK(last_loss < first_loss);
  CHECK(after.top1 > after.chance + 0.1);
  CHECK(after.chance > 0.09);
  CHECK(after.chance < 0.12);
  CHECK(after.nearest_neighbour_top1 > 0.6);
}

// The database size (issue 39, item 5): the notebook's num_of_examples = 100, "which can change".
TEST_CASE("lookup data[database=10,100,1000]: the split takes the database's size; 100 is the old split, bit for bit") {
  const MnistAsset asset = synthetic_digit_asset();
  LookupData base, d;
  REQUIRE(make_lookup_data(asset, 0, base).empty());
  for (int S : {10, 100, 1000}) {
    REQUIRE(make_lookup_data(asset, 0, d, S).empty());
    INFO("database " << S);
    CHECK(d.database.count() == S);
    CHECK(d.held_out.count() == 2000);
    CHECK(d.training.count() == 10000 - 2000 - S);
    std::set<int> all;
    for (const LookupImages* part : {&d.database, &d.held_out, &d.training})
      all.insert(part->asset_index.begin(), part->asset_index.end());
    CHECK(all.size() == 10000);  // disjoint and covering
    // one shuffle: the database is its first S, so a larger database holds a smaller one
    CHECK(std::equal(d.database.asset_index.begin(), d.database.asset_index.begin() + 10, base.database.asset_index.begin()));
  }
  REQUIRE(make_lookup_data(asset, 0, d, 100).empty());
  CHECK(d.database.asset_index == base.database.asset_index);
  CHECK(d.held_out.asset_index == base.held_out.asset_index);
  CHECK(d.training.asset_index == base.training.asset_index);
}

TEST_CASE("lookup config[databaseSize]: the record's range, named as JS names it; a trainer of 20 images looks up 20") {
  const MnistAsset asset = synthetic_digit_asset();
  Json record;
  REQUIRE(parse_json(R"({"databaseSize": 20})", record).empty());
  CHECK(LookupTrainer::config_error(record, asset).empty());
  const LookupConfig c = LookupTrainer::config_from(record);
  CHECK(c.database == 20);
  CHECK(LookupTrainer::config_to_record(LookupConfig{}).find("databaseSize")->as_number() == 100);
  for (const char* bad : {R"({"databaseSize": 9})", R"({"databaseSize": 1001})"}) {
    REQUIRE(parse_json(bad, record).empty());
    CHECK(LookupTrainer::config_error(record, asset).rfind("databaseSize must be an integer in [10, 1000], got ", 0) == 0);
  }
  LookupData data;
  REQUIRE(make_lookup_data(asset, 0, data, c.database).empty());
  LookupTrainer t(c, std::move(data));
  t.step(Backend::simd128);
  LookupInspection out;
  REQUIRE(t.inspect_held_out(0, Backend::simd128, out).empty());
  CHECK(out.S == 20);
  CHECK(out.weights_mean.size() == 20u);
  CHECK(t.evaluate(Backend::simd128).queries == 2000);
}

TEST_CASE("lookup memory: the bound grows with the database; the largest settings of every range fit the 512 MB budget") {
  LookupConfig c;
  double last = 0;
  for (int S : {10, 100, 500, 1000}) {
    c.database = S;
    const double bytes = lookup_training_bytes(c, 10000 - 2000 - S);
    CHECK(bytes > last);
    last = bytes;
  }
  c.database = kLookupMaxDatabaseImages;
  c.batch = 1024;
  c.heads = 16;
  c.embed_dim = 256;
  const double most = lookup_training_bytes(c, 10000 - 2000 - c.database);
  MESSAGE("lookup: the largest settings need at most " << most / (1 << 20) << " MB");
  CHECK(most <= kLookupMemoryBudget);
  CHECK(validate_lookup_config(c, 7000).empty());
  // Over the budget (a larger digit set would need it), the message names the estimate and what to lower.
  CHECK(validate_lookup_config(c, 60000).rfind("these settings need about ", 0) == 0);
  CHECK(validate_lookup_config(c, 60000).find("lower batch (1024), database (1000), heads (16) or embed_dim (256)") != std::string::npos);
}
