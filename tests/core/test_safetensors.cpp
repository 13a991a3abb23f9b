#include <cstring>

#include "io/safetensors.h"
#include "test_support.h"

using namespace attnlab;

TEST_CASE("safetensors: write then read gives the same tensors and metadata") {
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {-0.5f};
  const auto bytes = write_safetensors({{"attn.in_proj_weight", {2, 3}, a}, {"out.bias", {1}, b}},
                                       {{"format", "pt"}});
  CHECK((bytes.size() - 8) % 4 == 0);
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f).empty());
  CHECK(f.metadata.at("format") == "pt");
  CHECK(f.tensors.at("attn.in_proj_weight").shape == std::vector<std::int64_t>{2, 3});
  CHECK(f.tensors.at("attn.in_proj_weight").to_float() == std::vector<float>(a, a + 6));
  CHECK(f.tensors.at("out.bias").to_float()[0] == -0.5f);
}

TEST_CASE("safetensors: malformed files get a message that says what is wrong") {
  SafeTensorsFile f;
  const std::uint8_t tiny[] = {1, 2, 3};
  CHECK(parse_safetensors(tiny, 3, f) == "not a safetensors file: 3 bytes, need at least 8");
  std::vector<std::uint8_t> big(16, 0);
  big[0] = 200;
  CHECK(parse_safetensors(big.data(), big.size(), f) ==
        "not a safetensors file: header length 200 exceeds the file size 16");
  auto with_header = [](const std::string& header, std::size_t data_bytes) {
    std::vector<std::uint8_t> out(8, 0);
    out[0] = std::uint8_t(header.size());
    out.insert(out.end(), header.begin(), header.end());
    out.resize(out.size() + data_bytes, 0);
    return out;
  };
  auto bad = with_header("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8);
  CHECK(parse_safetensors(bad.data(), bad.size(), f) ==
        "tensor \"w\" has 4 bytes but its shape and dtype need 8");
  bad = with_header("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4);
  CHECK(parse_safetensors(bad.data(), bad.size(), f) ==
        "tensor \"w\" data_offsets [0, 8] lie outside the 4-byte data section");
  bad = with_header("{\"w\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1);
  CHECK(parse_safetensors(bad.data(), bad.size(), f) == "tensor \"w\" has unsupported dtype \"Q4\"");
  bad = with_header("[1,2]", 0);
  CHECK(parse_safetensors(bad.data(), bad.size(), f) ==
        "malformed safetensors header: expected '{' at the start of the header");
}
