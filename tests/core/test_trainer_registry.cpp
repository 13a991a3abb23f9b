// The one trainer interface (core/trainers/trainer.h) and its registry: a trainer made by id from a JSON
// config runs the same bits as one made directly; configs are checked with the binding's messages; the
// JSON codec (core/io/json.h) and declared records round trip.
#include <cmath>
#include <cstring>
#include <limits>

#include "io/json.h"
#include "io/record.h"
#include "lookup_support.h"
#include "test_support.h"
#include "trainers/alignment_trainer.h"
#include "trainers/lookup_trainer.h"
#include "trainers/registry.h"
#include "trainers/staged_step.h"

using namespace attnlab;
using attnlab::testing::synthetic_digit_asset;

namespace {

Json parse(const std::string& text) {
  Json out;
  const std::string error = parse_json(text, out);
  REQUIRE_MESSAGE(error.empty(), error);
  return out;
}

std::string config_error(const std::string& id, const std::string& config, const TrainerAssets& assets = {}) {
  return trainer_config_error(id, parse(config), assets);
}

template <class Direct>
void check_same_steps(Trainer& registered, Direct& direct, int steps) {
  for (int i = 0; i < steps; ++i) {
    const StepMetrics a = registered.step(Backend::simd128), b = direct.step(Backend::simd128);
    CHECK(a.step == b.step);
    CHECK(a.epoch == b.epoch);
    CHECK(std::memcmp(&a.loss, &b.loss, sizeof(float)) == 0);  // bits, not closeness
    CHECK(std::memcmp(&a.accuracy, &b.accuracy, sizeof(float)) == 0);
  }
  const ParameterList pa = registered.parameters(), pb = direct.parameters();
  REQUIRE(pa.size() == pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    CHECK(pa[i]->name == pb[i]->name);
    CHECK(std::memcmp(pa[i]->value.data(), pb[i]->value.data(), pa[i]->size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("registry: the ids, in the labs' order") {
  REQUIRE(trainer_kinds().size() == 4);
  CHECK(std::string(trainer_kinds()[0].id) == "alignment");
  CHECK(std::string(trainer_kinds()[1].id) == "lookup");
  CHECK(std::string(trainer_kinds()[2].id) == "count");
  CHECK(std::string(trainer_kinds()[3].id) == "induction");
  CHECK(find_trainer_kind("alignment") != nullptr);
  CHECK(find_trainer_kind("Alignment") == nullptr);
}

TEST_CASE("registry: an unknown id is named with the ids there are") {
  const std::string expected = "unknown trainer 'sort': the trainers are alignment, lookup, count, induction";
  CHECK(config_error("sort", "{}") == expected);
  std::string error;
  CHECK(create_trainer("sort", parse("{}"), {}, error) == nullptr);
  CHECK(error == expected);
}

TEST_CASE("registry[alignment, pointer, seed 3]: the same losses, accuracies and parameters, bit for bit, as direct construction") {
  AlignmentConfig c;
  c.task = AlignmentTaskKind::pointer;
  c.seed = 3;
  c.batch = 32;
  c.d_model = 16;
  AlignmentTrainer direct(c);
  std::string error;
  const std::unique_ptr<Trainer> registered =
      create_trainer("alignment", parse(R"({"task": "pointer", "seed": 3, "batch": 32, "dModel": 16})"), {}, error);
  REQUIRE_MESSAGE(registered, error);
  check_same_steps(*registered, direct, 5);
  CHECK(registered->config_record() == direct.config_record());
}

TEST_CASE("registry[lookup, synthetic digits, seed 2, B=16]: the same losses, accuracies and parameters, bit for bit, as direct construction") {
  const MnistAsset digits = synthetic_digit_asset();
  LookupConfig c;
  c.seed = 2;
  c.batch = 16;
  LookupData data;
  REQUIRE(make_lookup_data(digits, c.seed, data).empty());
  LookupTrainer direct(c, data);
  TrainerAssets assets;
  assets.digits = &digits;
  std::string error;
  const std::unique_ptr<Trainer> registered = create_trainer("lookup", parse(R"({"seed": 2, "batch": 16})"), assets, error);
  REQUIRE_MESSAGE(registered, error);
  check_same_steps(*registered, direct, 4);
  CHECK(registered->epoch() == 1);
  CHECK(registered->staged_step()->needs_weights());  // the retrieval reads the kernel's weights
}

TEST_CASE("registry: config messages as the binding gave them, in JS names") {
  CHECK(config_error("alignment", "null").empty());
  CHECK(config_error("alignment", "{}").empty());
  CHECK(config_error("alignment", "3") == "the trainer config must be an object");
  CHECK(config_error("alignment", R"({"task": 3})") == "task must be copy, reverse or pointer");
  CHECK(config_error("alignment", R"({"task": "sort"})") == "task must be copy, reverse or pointer, got 'sort'");
  CHECK(config_error("alignment", R"({"dModel": 8.5})") == "dModel must be an integer");
  CHECK(config_error("alignment", R"({"heads": "4"})") == "heads must be an integer");
  CHECK(config_error("alignment", R"({"batch": 2000000})") == "batch is too large");
  CHECK(config_error("alignment", R"({"seed": -1})") == "seed must be an integer in [0, 4294967295]");
  CHECK(config_error("alignment", R"({"lr": null})") == "lr must be a finite number");
  CHECK(config_error("alignment", R"({"lr": {"$number": "NaN"}})") == "lr must be a finite number");
  CHECK(config_error("alignment", R"({"uniqueKeys": 1})") == "uniqueKeys must be true or false");
  CHECK(config_error("alignment", R"({"heads": 5})").find("dModel (32) must be divisible by heads (5)") != std::string::npos);
  // validate_alignment_config's own text, with the JS names
  AlignmentConfig bad;
  bad.heads = 5;
  std::string cpp = validate_alignment_config(bad);
  CHECK(cpp.find("d_model") != std::string::npos);

  const MnistAsset digits = synthetic_digit_asset();
  TrainerAssets assets;
  assets.digits = &digits;
  CHECK(config_error("lookup", "{}") == "load the digit asset first (Digits.load)");
  CHECK(config_error("lookup", "{}", assets).empty());
  CHECK(config_error("lookup", R"({"heads": 3})", assets) == "embedDim (32) must be divisible by heads (3)");
  CHECK(config_error("lookup", R"({"seed": 4294967296})", assets) == "seed must be an integer in [0, 4294967295]");
  CHECK(config_error("lookup", R"({"seed": 4294967295})", assets).empty());
}

TEST_CASE("json: a config record round trips through the text, and defaults are the structs' own") {
  AlignmentConfig c;
  c.task = AlignmentTaskKind::reverse;
  c.seed = 4000000000u;
  c.lr = 0.1 + 0.2;  // not a short decimal: the text must keep every bit
  c.unique_keys = true;
  c.positional = false;
  const Json record = AlignmentTrainer::config_to_record(c);
  const std::string text = write_json(record);
  CHECK(parse(text) == record);
  CHECK(AlignmentTrainer::config_error(parse(text)).empty());
  const AlignmentConfig back = AlignmentTrainer::config_from(parse(text));
  CHECK(back.task == c.task);
  CHECK(back.seed == c.seed);
  CHECK(back.lr == c.lr);
  CHECK(back.unique_keys == c.unique_keys);
  CHECK(back.positional == c.positional);
  CHECK(back.d_model == c.d_model);

  const Json defaults = find_trainer_kind("alignment")->defaults("pointer");
  CHECK(defaults.find("task")->as_string() == "pointer");
  CHECK(defaults.find("steps")->as_number() == 350);
  CHECK(find_trainer_kind("lookup")->defaults("").find("steps")->as_number() == 9370);
}

TEST_CASE("json: the reader and writer") {
  const Json v = parse(R"( {"a": [1, -2.5e3, true, null, "x\"\u00e9\ud83d\ude00"], "b": {}, "n": {"$number": "-Infinity"},
                           "t": {"$type": "Map"}} )");
  CHECK(v.find("a")->items().size() == 5);
  CHECK(v.find("a")->items()[1].as_number() == -2500.0);
  CHECK(v.find("a")->items()[4].as_string() == "x\"\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(v.find("n")->as_number() == -std::numeric_limits<double>::infinity());
  CHECK(Json::js_type_name(v.find("t")) == "Map");
  CHECK(Json::js_typeof(v.find("t")) == "object");
  CHECK(Json::js_typeof(v.find("missing")) == "undefined");
  CHECK(parse(write_json(v)) == v);

  Json nan(std::numeric_limits<double>::quiet_NaN());
  CHECK(write_json(nan) == R"({"$number":"NaN"})");
  CHECK(write_json(Json(0.1f)) == "0.10000000149011612");  // a float's exact value
  CHECK(write_json(Json(4294967295u)) == "4294967295");

  // typed arrays: blobs beside the text, or numbers without a blob list
  Json rec = Json::object();
  rec.set("w", std::vector<float>{0.5f, 1.0f});
  rec.set("i", std::vector<std::int32_t>{-1, 7});
  std::vector<const Json*> blobs;
  CHECK(write_json(rec, &blobs) == R"({"w":{"$blob":0},"i":{"$blob":1}})");
  REQUIRE(blobs.size() == 2);
  CHECK(blobs[1]->ints()[1] == 7);
  CHECK(write_json(rec) == R"({"w":[0.5,1],"i":[-1,7]})");

  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\x01\"", "nul", "{} x", "\"\\q\""}) {
    Json out;
    CHECK_MESSAGE(!parse_json(bad, out).empty(), bad);
  }
  Json out;
  CHECK(parse_json(std::string(64, '[') + std::string(64, ']'), out).empty());
  CHECK(parse_json(std::string(65, '[') + std::string(65, ']'), out).find("nested more than 64 deep") != std::string::npos);
}

TEST_CASE("records: inspect inputs are checked with the binding's messages, the trainer unchanged") {
  std::string error;
  const std::unique_ptr<Trainer> copy = create_trainer("alignment", parse(R"({"batch": 8})"), {}, error);
  REQUIRE(copy);
  Json out;
  CHECK(copy->inspect_record(parse("3"), Backend::scalar, out) ==
        "inspect takes {tokens} (copy, reverse) or {keys, values, query} (pointer)");
  CHECK(copy->inspect_record(parse("{}"), Backend::scalar, out) ==
        "tokens must be a Float32Array (or an array of numbers), got undefined");
  CHECK(copy->inspect_record(parse(R"({"tokens": {"$type": "Map"}})"), Backend::scalar, out) ==
        "tokens must be a Float32Array (or an array of numbers), got Map");
  CHECK(copy->inspect_record(parse(R"({"tokens": [1, 2, 4294967301]})"), Backend::scalar, out) ==
        "tokens[2] must be a whole number in [-2147483648, 2147483647], got 4294967301");
  REQUIRE(copy->inspect_record(parse(R"({"tokens": [1, 2, 3]})"), Backend::scalar, out).empty());
  CHECK(out.find("weights")->floats().size() == 4 * 3 * 3);  // [H, T, S]
  CHECK(out.find("predictions")->ints().size() == 3);
  CHECK(copy->data_record("fixedSample", out).empty());
  CHECK(copy->data_record("images", out) == "the Alignment trainer's data has one part, 'fixedSample', got 'images'");

  const std::unique_ptr<Trainer> pointer = create_trainer("alignment", parse(R"({"task": "pointer", "batch": 8})"), {}, error);
  REQUIRE(pointer);
  CHECK(pointer->inspect_record(parse(R"({"keys": [1, 2], "values": [13, 14], "query": 1.9})"), Backend::scalar, out) ==
        "query must be a key (a whole number), got 1.9");
  CHECK(pointer->inspect_record(parse(R"({"keys": [1, 2], "values": [13, 14], "query": "2"})"), Backend::scalar, out) ==
        "query must be a key (a whole number), got a string");
  CHECK(pointer->inspect_record(parse(R"({"keys": [1, 2], "values": [13, 14], "query": 2})"), Backend::scalar, out).empty());
}
