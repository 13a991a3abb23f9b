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

// ---- the reference implementation's checks (huggingface/safetensors: read_metadata, Metadata::validate)

namespace {

// 8-byte length + header text + data_bytes bytes (0, 1, 2, ...).
std::vector<std::uint8_t> file_with(const std::string& header, std::size_t data_bytes) {
  std::vector<std::uint8_t> out(8, 0);
  for (int i = 0; i < 8; ++i) out[i] = std::uint8_t(std::uint64_t(header.size()) >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < data_bytes; ++i) out.push_back(std::uint8_t(i));
  return out;
}

std::string parse_error(const std::string& header, std::size_t data_bytes) {
  const auto bytes = file_with(header, data_bytes);
  SafeTensorsFile f;
  return parse_safetensors(bytes.data(), bytes.size(), f);
}

std::string f32(const std::string& name, const std::string& shape, const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("safetensors: shape [5, 5581, 8681, 49477, 384773] (2^62 + 1 elements, x4 bytes wraps to 4) is an error") {
  // The old code multiplied in int64 and size_t: the byte count wrapped to exactly 4, the file
  // parsed, and to_float() then asked for 2^62 floats (std::length_error; a WASM abort).
  CHECK(parse_error("{" + f32("w", "[5,5581,8681,49477,384773]", "[0,4]") + "}", 4) ==
        "tensor \"w\" has shape [5, 5581, 8681, 49477, 384773] whose byte size overflows 64 bits");
}

TEST_CASE("safetensors: shape [2^40, 2^40, 0] overflows before the 0, as in the reference's checked product") {
  CHECK(parse_error("{" + f32("w", "[1099511627776,1099511627776,0]", "[0,0]") + "}", 0) ==
        "tensor \"w\" has shape [1099511627776, 1099511627776, 0] whose byte size overflows 64 bits");
  CHECK(parse_error("{" + f32("w", "[9223372036854775807,2]", "[0,0]") + "}", 0) ==
        "tensor \"w\" has shape [9223372036854775807, 2] whose byte size overflows 64 bits");
}

TEST_CASE("safetensors: shape [-1], [1.5], [2^63], [18446744073709551616] are malformed shapes") {
  for (const char* shape : {"[-1]", "[1.5]", "[9223372036854775808]", "[18446744073709551616]", "{}", "[1,]", "[01]"}) {
    INFO(shape);
    CHECK(starts_with(parse_error("{" + f32("w", shape, "[0,4]") + "}", 4), "tensor \"w\" has a malformed shape"));
  }
}

TEST_CASE("safetensors: data_offsets near 2^64 ([0, 2^64 - 1], [2^64 - 4, 2^64 - 1]) lie outside, no arithmetic wraps") {
  CHECK(parse_error("{" + f32("w", "[1]", "[0,18446744073709551615]") + "}", 4) ==
        "tensor \"w\" data_offsets [0, 18446744073709551615] lie outside the 4-byte data section");
  CHECK(parse_error("{" + f32("w", "[1]", "[18446744073709551611,18446744073709551615]") + "}", 4) ==
        "tensor \"w\" data_offsets [18446744073709551611, 18446744073709551615] lie outside the 4-byte data section");
}

TEST_CASE("safetensors: data_offsets [-8, 0], [4, 0], [0], [0, 4, 8], 2^64 are malformed") {
  for (const char* offsets : {"[-8,0]", "[4,0]", "[0]", "[0,4,8]", "[0,18446744073709551616]", "{\"0\":0}", "\"x\""}) {
    INFO(offsets);
    CHECK(starts_with(parse_error("{" + f32("w", "[1]", offsets) + "}", 4), "tensor \"w\" has malformed data_offsets"));
  }
}

TEST_CASE("safetensors: header length 2^64 - 1 and 100000001 (over the reference's 100 MB cap) are errors") {
  std::vector<std::uint8_t> bytes(16, 0xff);
  SafeTensorsFile f;
  CHECK(parse_safetensors(bytes.data(), bytes.size(), f) ==
        "not a safetensors file: header length 18446744073709551615 exceeds the 100000000-byte limit");
  // A real 100 MB + 1 header (spaces inside an empty object), so only the cap can refuse it.
  const std::uint64_t n = kSafetensorsMaxHeaderBytes + 1;
  bytes.assign(8 + n, ' ');
  for (int i = 0; i < 8; ++i) bytes[i] = std::uint8_t(n >> (8 * i));
  bytes[8] = '{';
  bytes.back() = '}';
  CHECK(parse_safetensors(bytes.data(), bytes.size(), f) ==
        "not a safetensors file: header length 100000001 exceeds the 100000000-byte limit");
}

TEST_CASE("safetensors: overlap (a [0, 8], b [4, 8]), gap (a [0, 4], b [8, 12]) and trailing bytes (4 of 8) are errors") {
  CHECK(parse_error("{" + f32("a", "[2]", "[0,8]") + "," + f32("b", "[1]", "[4,8]") + "}", 8) ==
        "tensor \"b\" data_offsets [4, 8] overlap tensor \"a\" [0, 8]");
  CHECK(parse_error("{" + f32("a", "[1]", "[0,4]") + "," + f32("b", "[1]", "[8,12]") + "}", 12) ==
        "the data section has a gap: bytes [4, 8) belong to no tensor (before tensor \"b\")");
  CHECK(parse_error("{" + f32("a", "[1]", "[0,4]") + "}", 8) ==
        "the data section has 4 bytes after the last tensor (from 4 to 8)");
  CHECK(parse_error("{}", 3) == "the data section has 3 bytes after the last tensor (from 0 to 3)");
}

TEST_CASE("safetensors: tensors in any header order, stored in offset order, parse") {
  const auto bytes = file_with("{" + f32("late", "[1]", "[4,8]") + "," + f32("early", "[1]", "[0,4]") + "," +
                                   f32("none", "[0]", "[4,4]") + "}", 8);
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f) == "");
  CHECK(f.tensors.at("late").bytes == std::vector<std::uint8_t>{4, 5, 6, 7});
  CHECK(f.tensors.at("none").numel() == 0);
}

TEST_CASE("safetensors: a duplicate tensor, field or metadata key is an error") {
  CHECK(parse_error("{" + f32("w", "[1]", "[0,4]") + "," + f32("w", "[1]", "[0,4]") + "}", 4) ==
        "malformed safetensors header: duplicate tensor \"w\"");
  CHECK(parse_error("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"shape\":[1],\"data_offsets\":[0,4]}}", 4) ==
        "tensor \"w\" has a duplicate field \"shape\"");
  CHECK(parse_error("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0) ==
        "malformed safetensors header: duplicate key \"a\" in __metadata__");
}

TEST_CASE("safetensors: a missing field, an unknown field, text after the object, bad UTF-8 are errors") {
  CHECK(parse_error("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4) == "tensor \"w\" has no \"shape\"");
  CHECK(parse_error("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4) ==
        "tensor \"w\" has an unknown field \"x\"");
  CHECK(parse_error("{\"w\":[1]}", 0) == "tensor \"w\" must be an object with dtype, shape and data_offsets");
  CHECK(parse_error("{} x", 0) == "malformed safetensors header: unexpected text after the JSON object");
  CHECK(parse_error("{\"\xff\":1}", 0) == "malformed safetensors header: not UTF-8");
  CHECK(parse_error("{\"__metadata__\":{\"heads\":4}}", 0) ==
        "malformed safetensors header: __metadata__ must map strings to strings: \"heads\" is not a string");
}

TEST_CASE("safetensors: JSON escapes in names decode (\\u0041 -> A, \\ud83d\\ude00 -> U+1F600); control characters are refused") {
  const auto bytes = file_with("{" + f32("\\u0041\\n\\ud83d\\ude00", "[1]", "[0,4]") + "}", 4);
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f) == "");
  CHECK(f.tensors.count("A\n\xF0\x9F\x98\x80") == 1);
  CHECK(starts_with(parse_error("{\"a\nb\":1}", 0), "malformed safetensors header"));
  CHECK(starts_with(parse_error("{\"\\ud83d\":1}", 0), "malformed safetensors header"));
}

TEST_CASE("safetensors: a failed parse leaves the output empty") {
  const auto good = file_with("{\"__metadata__\":{\"k\":\"v\"}," + f32("a", "[1]", "[0,4]") + "}", 4);
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(good.data(), good.size(), f) == "");
  const auto bad = file_with("{\"__metadata__\":{\"k\":\"v\"}," + f32("a", "[1]", "[0,4]") + "," + f32("b", "[1]", "[8,12]") + "}", 12);
  CHECK(!parse_safetensors(bad.data(), bad.size(), f).empty());
  CHECK(f.tensors.empty());
  CHECK(f.metadata.empty());
}

TEST_CASE("safetensors: I8 reads signed (-128, 127), U8 unsigned (200)") {
  auto bytes = file_with("{\"i\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                         "\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}", 3);
  bytes[bytes.size() - 3] = 0x80;
  bytes[bytes.size() - 2] = 0x7f;
  bytes[bytes.size() - 1] = 200;
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f) == "");
  CHECK(f.tensors.at("i").to_float() == std::vector<float>{-128, 127});
  CHECK(f.tensors.at("i").to_int32() == std::vector<std::int32_t>{-128, 127});
  CHECK(f.tensors.at("u").to_float() == std::vector<float>{200});
}

TEST_CASE("safetensors: numel() of a hand-made shape [2^62, 4] or [-1] is -1, not a wrapped product") {
  SafeTensor t;
  t.shape = {std::int64_t(1) << 62, 4};
  CHECK(t.numel() == -1);
  t.shape = {-1};
  CHECK(t.numel() == -1);
  t.shape = {3, 0, std::int64_t(1) << 40};
  CHECK(t.numel() == 0);
}

TEST_CASE("safetensors: names with a quote, a backslash and a newline are written as JSON and read back") {
  const float a[] = {1};
  const auto bytes = write_safetensors({{"a\"b\\c\nd", {1}, a}}, {{"note", "say \"hi\""}});
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f) == "");
  CHECK(f.tensors.count("a\"b\\c\nd") == 1);
  CHECK(f.metadata.at("note") == "say \"hi\"");
}

TEST_CASE("safetensors: metadata and no tensors is written as valid JSON (no comma before '}')") {
  const auto bytes = write_safetensors({}, {{"format", "pt"}});
  SafeTensorsFile f;
  REQUIRE(parse_safetensors(bytes.data(), bytes.size(), f) == "");
  CHECK(f.metadata.at("format") == "pt");
  CHECK(f.tensors.empty());
}
