// Weights at their file's precision (issue 37, item 3): a BF16 or F16 weight stays 16-bit in the
// panels of PackedLinear and in a decoder's embeddings, and is widened to float32 inside the products.
// Widening is exact, so a product over 16-bit weights must equal, bit for bit, the float32 product over
// the widened values (what PyTorch computes running those 16-bit values as float32: the tiny BF16
// Llama's logits against PyTorch are tests/core/test_llama_torch.cpp). Swept around the 8-wide panels,
// the 4-row tiles and the 768-deep blocks; every finite half and bfloat16 widened as the file reader
// decodes them; the loader's checks on 16-bit values; the bytes a 16-bit decoder holds.
#include <fstream>
#include <iterator>
#include <memory>

#include "io/safetensors.h"
#include "layers/packed_linear.h"
#include "models/checkpoint_loader.h"
#include "models/llama.h"
#include "rng.h"
#include "test_support.h"
#include "vec4.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_bytes(const std::string& path) { return read_fixture_bytes(path); }

// Random 16-bit weights of a format: bfloat16, the top half of a normal float's bits; half, any finite
// pattern (subnormals and signed zeros included).
std::vector<std::uint16_t> random_16(WeightFormat format, std::size_t n, Rng& rng) {
  std::vector<std::uint16_t> out(n);
  for (auto& h : out) {
    if (format == WeightFormat::bf16) {
      const float x = (rng.uniform() - 0.5f) * 4.0f;
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      h = std::uint16_t(bits >> 16);
    } else {
      do h = std::uint16_t(rng.next_u32()); while (((h >> 10) & 0x1F) == 0x1F || ((h >> 10) & 0x1F) > 17);  // finite, |x| < 8
    }
  }
  return out;
}

std::vector<float> widened(WeightFormat format, const std::vector<std::uint16_t>& h) {
  std::vector<float> out(h.size());
  REQUIRE(decode_floats(format == WeightFormat::bf16 ? "BF16" : "F16", reinterpret_cast<const std::uint8_t*>(h.data()), h.size(), out.data()));
  return out;
}

}  // namespace

TEST_CASE("widen_bf16_8 and widen_f16_8: every finite 16-bit pattern is the file reader's float32") {
  for (WeightFormat format : {WeightFormat::bf16, WeightFormat::f16}) {
    std::vector<std::uint16_t> all;
    for (std::uint32_t h = 0; h < 65536; ++h) {
      const bool finite = format == WeightFormat::bf16 ? ((h >> 7) & 0xFF) != 0xFF : ((h >> 10) & 0x1F) != 0x1F;
      if (finite) all.push_back(std::uint16_t(h));
    }
    while (all.size() % 8) all.push_back(0);
    const std::vector<float> expected = widened(format, all);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < all.size(); i += 8) {
      vec4::f32x4 lo, hi;
      if (format == WeightFormat::bf16) vec4::widen_bf16_8(all.data() + i, lo, hi);
      else vec4::widen_f16_8(all.data() + i, lo, hi);
      float got[8];
      vec4::store4(got, lo), vec4::store4(got + 4, hi);
      differ += std::memcmp(got, expected.data() + i, sizeof got) != 0;
    }
    INFO((format == WeightFormat::bf16 ? "bf16" : "f16"));
    CHECK(differ == 0);
  }
}

// out from 31 on: a single row (M = 1) runs four panels at a time (packed_linear.cpp, row_panels), with a
// ragged panel inside a group (31), a group exactly (32), a panel after a group (33, 41: ragged) and two groups (65).
TEST_CASE("PackedLinear 16-bit[M in {1,3,4,5}, in in {1,3,8,9,17,770}, out in {1,7,8,9,17,31,32,33,41,65}]: the float32 product over the widened weights, bit for bit") {
  Rng rng(37);
  for (WeightFormat format : {WeightFormat::bf16, WeightFormat::f16})
    for (int in : {1, 3, 8, 9, 17, 770})
      for (int out : {1, 7, 8, 9, 17, 31, 32, 33, 41, 65})
        for (int M : {1, 3, 4, 5}) {
          const std::vector<std::uint16_t> w = random_16(format, std::size_t(in) * out, rng);
          const std::vector<float> wide = widened(format, w);
          PackedLinear half(in, out, format), full(in, out);
          half.set_weight_16(w.data());
          full.set_weight(wide.data());
          for (int o = 0; o < out; ++o) half.bias_data()[o] = full.bias_data()[o] = rng.uniform() - 0.5f;
          RowMatrix x(M, in), y_half(M, out + 3), y_full(M, out);
          for (int i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform() * 2 - 1;
          y_half.setConstant(-7.0f);  // guard columns past `out`
          half.forward(x, y_half.leftCols(out));
          full.forward(x, y_full);
          INFO((format == WeightFormat::bf16 ? "bf16" : "f16") << " M=" << M << " in=" << in << " out=" << out);
          CHECK(std::memcmp(y_half.leftCols(out).eval().data(), y_full.data(), sizeof(float) * std::size_t(M) * out) == 0);
          CHECK((y_half.rightCols(3).array() == -7.0f).all());
          CHECK(half.weight(out - 1, in - 1) == wide.back());
        }
}

TEST_CASE("llama_tiny (BF16): held at 16 bits, half the float32 bytes; a NaN in its 16-bit embedding is named") {
  const std::string folder = std::string(ATTNLAB_FIXTURES_DIR) + "/llama_tiny/";
  const std::string config = read_bytes(folder + "config.json"), bytes = read_bytes(folder + "model.safetensors");
  std::unique_ptr<LlamaModel> model;
  Json summary;
  REQUIRE(load_checkpoint_as("llama", config, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "safetensors", model,
                             &summary) == "");
  CHECK(model->spec().weights == WeightFormat::bf16);
  CHECK(summary.find("weights")->as_string() == "BF16");
  const LlamaModel as_float(model->config());  // the same rows held as float32
  CHECK(2 * model->weight_bytes() == as_float.weight_bytes());
  // Every projection and both embeddings: 2 bytes a weight, as the file stores them (the norms aside).
  std::uint64_t stored = 0;
  std::uint64_t header = 0;
  REQUIRE(safetensors_header_length(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), header) == "");
  SafeTensorsIndex index;
  REQUIRE(parse_safetensors_index(reinterpret_cast<const std::uint8_t*>(bytes.data()) + 8, header, bytes.size(), index) == "");
  for (const auto& e : index.entries)
    if (e.shape.size() == 2) stored += e.end - e.begin;
  CHECK(model->weight_bytes() == stored);

  // A bfloat16 NaN (0x7FC0) at element 5 of the embedding, written in place: named with its index.
  std::string broken = bytes;
  const SafeTensorsEntry* embed = index.find("model.embed_tokens.weight");
  REQUIRE(embed != nullptr);
  broken[embed->begin + 10] = char(0xC0), broken[embed->begin + 11] = char(0x7F);
  CHECK(load_checkpoint_as("llama", config, reinterpret_cast<const std::uint8_t*>(broken.data()), broken.size(), "safetensors", model) ==
        "model.safetensors: tensor \"model.embed_tokens.weight\" holds NaN at element 5: the model would compute nothing but NaN");
  // And in a projection, past the first block of 1,024 widened values.
  broken = bytes;
  const SafeTensorsEntry* up = index.find("model.layers.1.mlp.up_proj.weight");
  REQUIRE(up != nullptr);
  broken[up->begin + 2 * 1100] = char(0x80), broken[up->begin + 2 * 1100 + 1] = char(0x7F);  // +infinity
  CHECK(load_checkpoint_as("llama", config, reinterpret_cast<const std::uint8_t*>(broken.data()), broken.size(), "safetensors", model) ==
        "model.safetensors: tensor \"model.layers.1.mlp.up_proj.weight\" holds an infinity (or a value past float32's range) at element 1100: "
        "the model would compute nothing but NaN");
}
