// A sharded safetensors checkpoint (core/io/safetensors_shards.h, CheckpointLoader::open_sharded): the
// tiny llama cut into two shards by tests/fixtures/make_sharded_fixtures.py gives the single file's
// logits bit for bit (that file's are PyTorch's: test_llama_torch.cpp); hostile indexes (a shard's path
// with "..", a tensor in two shards, one placed in a shard that does not hold it, a shard missing) are
// each refused in one line naming the problem. And the writer's several end-of-text ids (Llama 3's
// generation_config.json names three): writing stops at any of them.
#include <map>
#include <memory>

#include "io/safetensors_shards.h"
#include "models/checkpoint_loader.h"
#include "models/llama.h"
#include "models/writer.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::string kFixtures = ATTNLAB_FIXTURES_DIR;
const std::string kShard1 = "model-00001-of-00002.safetensors", kShard2 = "model-00002-of-00002.safetensors";

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  const std::string s = read_fixture_bytes(path, "make_sharded_fixtures.py");
  return {s.begin(), s.end()};
}

std::string sharded(const std::string& name) { return kFixtures + "/llama_tiny_sharded/" + name; }

std::map<std::string, std::vector<std::uint8_t>> shards() { return {{kShard1, bytes_of(sharded(kShard1))}, {kShard2, bytes_of(sharded(kShard2))}}; }

std::string index_text() { return read_fixture_bytes(sharded(kShardIndexFile), "make_sharded_fixtures.py"); }
std::string config_text() { return read_fixture_bytes(sharded("config.json"), "make_sharded_fixtures.py"); }

// The index with one weight_map entry's shard replaced (or the entry removed: shard "").
std::string index_with(const std::string& tensor, const std::string& shard) {
  Json index;
  REQUIRE(parse_json(index_text(), index) == "");
  Json map = Json::object();
  const Json& old = *index.find("weight_map");
  for (std::size_t i = 0; i < old.keys().size(); ++i) {
    if (old.keys()[i] != tensor) map.set(old.keys()[i], old.values()[i]);
    else if (!shard.empty()) map.set(tensor, Json(shard));
  }
  index.set("weight_map", map);
  return write_json(index);
}

std::vector<float> prompt_logits(CheckpointModel& loaded) {
  auto& model = static_cast<LlamaModel&>(loaded);
  const std::vector<std::int32_t> ids = {1, 5, 9, 14, 3, 7};
  model.forward(Backend::scalar, ids.data(), int(ids.size()));
  return model.logits(int(ids.size()) - 1);
}

}  // namespace

TEST_CASE("sharded llama_tiny (2 shards + model.safetensors.index.json): the single file's logits bit for bit") {
  std::unique_ptr<CheckpointModel> one, two;
  Json summary;
  const std::vector<std::uint8_t> single = bytes_of(kFixtures + "/llama_tiny/model.safetensors");
  REQUIRE(load_checkpoint("llama", config_text(), single.data(), single.size(), "safetensors", one) == "");
  const std::string error = load_sharded_checkpoint("llama", config_text(), index_text(), shards(), two, &summary);
  REQUIRE_MESSAGE(error.empty(), error);
  CHECK(summary.find("file")->as_string() == kShardIndexFile);
  CHECK(prompt_logits(*one) == prompt_logits(*two));
}

TEST_CASE("sharded checkpoints: a hostile index is refused in one line naming the problem") {
  std::unique_ptr<CheckpointModel> model;
  auto refused = [&](const std::string& index, std::map<std::string, std::vector<std::uint8_t>> files) {
    const std::string error = load_sharded_checkpoint("llama", config_text(), index, files, model);
    CHECK(model == nullptr);
    CHECK(error.find('\n') == std::string::npos);
    return error;
  };
  // A shard named by a path: refused before any file is looked up.
  CHECK(refused(index_with("lm_head.weight", "../" + kShard1), shards()) ==
        "model.safetensors.index.json: shard \"../model-00001-of-00002.safetensors\" names a folder: a shard is a plain file name beside the index");
  CHECK(refused(index_with("lm_head.weight", "/etc/passwd.safetensors"), shards()).find("names a folder") != std::string::npos);
  CHECK(refused(index_with("lm_head.weight", ".." ), shards()).find("not a plain file name") != std::string::npos);
  CHECK(refused(index_with("lm_head.weight", "model.bin"), shards()).find("is not a .safetensors file") != std::string::npos);
  // A shard the index names that is not there.
  auto missing = shards();
  missing.erase(kShard2);
  CHECK(refused(index_text(), missing) == "model.safetensors.index.json names model-00002-of-00002.safetensors, which is not among the files given");
  // The index places a tensor in a shard that does not hold it.
  CHECK(refused(index_with("lm_head.weight", kShard2), shards()) ==
        "model.safetensors.index.json places tensor \"lm_head.weight\" in model-00002-of-00002.safetensors, but model-00001-of-00002.safetensors holds it");
  // A tensor in two shards: the second shard made a copy of the first.
  auto twice = shards();
  twice[kShard2] = twice[kShard1];
  CHECK(refused(index_text(), twice).find("is in two shards, model-00001-of-00002.safetensors and model-00002-of-00002.safetensors") !=
        std::string::npos);
  // A shard's tensor the index does not name, and a name in the index no shard holds.
  CHECK(refused(index_with("lm_head.weight", ""), shards()) ==
        "model-00001-of-00002.safetensors holds tensor \"lm_head.weight\", which model.safetensors.index.json does not name");
  {
    Json index;
    REQUIRE(parse_json(index_text(), index) == "");
    Json map = *index.find("weight_map");
    map.set("model.extra.weight", Json(kShard2));
    index.set("weight_map", map);
    CHECK(refused(write_json(index), shards()) ==
          "model.safetensors.index.json places tensor \"model.extra.weight\" in model-00002-of-00002.safetensors, which does not hold it");
  }
  CHECK(refused("{\"weight_map\": []}", shards()) == "model.safetensors.index.json: has no \"weight_map\" object (tensor name -> shard file)");
  CHECK(refused("not json", shards()).rfind("model.safetensors.index.json: not JSON", 0) == 0);
  // Each shard once, in the order of first mention.
  SafetensorsShardIndex parsed;
  REQUIRE(parse_safetensors_shard_index(index_text(), parsed) == "");
  CHECK(parsed.shards == std::vector<std::string>{kShard1, kShard2});
}

TEST_CASE("writer: several end-of-text ids (eos_ids), writing stops at the first of them it writes") {
  const std::vector<std::uint8_t> single = bytes_of(kFixtures + "/llama_tiny/model.safetensors");
  std::unique_ptr<CheckpointModel> loaded;
  REQUIRE(load_checkpoint("llama", config_text(), single.data(), single.size(), "safetensors", loaded) == "");
  auto& model = static_cast<LlamaModel&>(*loaded);
  const std::vector<std::int32_t> prompt = {1, 5, 9, 14, 3, 7};
  WritingSettings settings;
  settings.sampling.temperature = 0;
  settings.max_new_tokens = 8;
  Writing free_run;
  REQUIRE(generate(model, Backend::scalar, prompt.data(), int(prompt.size()), settings, free_run) == "");
  REQUIRE(free_run.ids.size() == 8);
  // An end list with an id the run never writes and its third token: it stops there, the token kept.
  const int third = free_run.ids[2];
  const int first_at = int(std::find(free_run.ids.begin(), free_run.ids.end(), third) - free_run.ids.begin());
  int unused = 0;
  while (std::find(free_run.ids.begin(), free_run.ids.end(), unused) != free_run.ids.end() || unused == model.spec().eos_token_id) ++unused;
  settings.eos_ids = {unused, third};
  Writing stopped;
  REQUIRE(generate(model, Backend::scalar, prompt.data(), int(prompt.size()), settings, stopped) == "");
  CHECK(stopped.stop_reason == "eos");
  CHECK(stopped.ids == std::vector<int>(free_run.ids.begin(), free_run.ids.begin() + first_at + 1));
  settings.stop_at_eos = false;
  REQUIRE(generate(model, Backend::scalar, prompt.data(), int(prompt.size()), settings, stopped) == "");
  CHECK(stopped.ids == free_run.ids);
  settings.eos_ids = {-1};
  CHECK(generate(model, Backend::scalar, prompt.data(), int(prompt.size()), settings, stopped) == "an end-of-text id must be 0 or more, got -1");
}
