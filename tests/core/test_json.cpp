// The JSON value's objects: fields in insertion order, a repeated key's last value kept, and reading an
// object of many keys in linear time (issue 48: a shard index naming 40,000 tensors took 7.3 s, a
// config.json with 80,000 extra keys 6.6 s, when every key was looked up by walking the ones before it).
#include <string>

#include "io/json.h"
#include "test_support.h"

using namespace attnlab;

TEST_CASE("json objects: insertion order, the last of a repeated key, lookups on either side of the index") {
  for (int n : {1, 15, 16, 17, 40}) {  // around the size from which an object keeps an index of its keys
    std::string text = "{";
    for (int i = 0; i < n; ++i) text += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":" + std::to_string(i);
    text += ",\"k0\":-1}";  // k0 again: the last value wins, in the first place
    Json j;
    REQUIRE(parse_json(text, j) == "");
    INFO("an object of " << n << " keys");
    REQUIRE(j.keys().size() == std::size_t(n));
    CHECK(j.keys()[0] == "k0");
    CHECK(j.find("k0")->as_number() == -1);
    if (n > 1) CHECK(j.find("k" + std::to_string(n - 1))->as_number() == n - 1);
    CHECK(j.find("absent") == nullptr);
    j.set("added", Json(7));
    CHECK(j.keys().back() == "added");
    CHECK(j.find("added")->as_number() == 7);
    Json copy = j;  // a copy keeps its own index
    copy.set("k1", Json(100));
    CHECK(copy.find("k1")->as_number() == 100);
    if (n > 1) CHECK(j.find("k1")->as_number() == 1);
  }
}

TEST_CASE("json objects: 200,000 keys read and looked up (linear; the old walk was 2 x 10^10 comparisons)") {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? "," : "") + std::string("\"model.layers.") + std::to_string(i) + ".weight\":" + std::to_string(i);
  text += "}";
  Json j;
  REQUIRE(parse_json(text, j) == "");
  CHECK(j.keys().size() == 200000);
  long sum = 0;
  for (int i = 0; i < 200000; i += 997) sum += long(j.find("model.layers." + std::to_string(i) + ".weight")->as_number());
  long expected = 0;
  for (int i = 0; i < 200000; i += 997) expected += i;
  CHECK(sum == expected);
  CHECK(write_json(j).size() == text.size());
}
