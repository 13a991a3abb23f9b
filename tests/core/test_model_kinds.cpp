// The model registry's rows (core/models/model_kinds.cpp) and what a decoder kind is made of besides its
// row: every decoder row has a table of tensor names (decoder_names.cpp), and a kind without one is
// refused with a message, never dereferenced; config.json's fields with defaults read from their rows
// (config_json.h); the weight count taken from the tensor table (decoder.h); and an architecture this
// core does not compute (Mistral's sliding window) refused by name.
#include <memory>
#include <string>

#include "models/checkpoint_loader.h"
#include "models/config_json.h"
#include "models/decoder.h"
#include "models/decoder_names.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "models/model_kinds.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string fixture_text(const std::string& path) { return read_fixture_bytes(std::string(ATTNLAB_FIXTURES_DIR) + "/" + path); }

// Mistral-7B-v0.1's config.json (MistralConfig): Llama's sizes and names, attention over the last 4096 keys.
const char* kMistral = R"({"architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 32000})";

std::string with(std::string json, const std::string& from, const std::string& to) {
  const std::size_t at = json.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return json.replace(at, from.size(), to);
}

// A record of every kind of row, for the reader's own messages.
struct Fields {
  int size = 0, inner = -1, positions = -1;
  double eps = -1;
  bool tied = true;
};

template <class F, class C>
void fields_of(F& f, C& c) {
  f("size", c.size, FileInt{"size", 1, 100});
  f("inner", c.inner, FileIntOr{"inner", 1, 1000, 4 * c.size});
  f("positions", c.positions, FileIntOr{"positions", 1, 1000, 1024, "n_ctx"});
  f(kNotShown, c.eps, FilePositiveOr{"eps", 1, 1e-5});
  f("tied", c.tied, FileBoolOr{"tied", false});
}

std::string read_fields(const std::string& text, Fields& out) {
  Json config;
  REQUIRE(parse_json(text, config) == "");
  out = Fields{};
  return read_config_fields(config, "Test", out, [](auto& f, auto& c) { fields_of(f, c); });
}

}  // namespace

TEST_CASE("model kinds: every decoder row has its table of tensor names, and every row makes its kind") {
  int decoders = 0;
  for (const ModelKindRow& row : model_kind_rows()) {
    const std::unique_ptr<ModelKind> kind = row.make();
    REQUIRE(kind);
    CHECK(std::string(kind->id()) == row.id);
    if (std::string(row.binding) != "decoder") continue;
    ++decoders;
    const DecoderNames* names = nullptr;
    CHECK_MESSAGE(find_decoder_names(row.id, names) == "", row.id);
    REQUIRE_MESSAGE(names, row.id);
    CHECK(std::string(names->kind) == row.id);
    // The roles every decoder reads, whatever its options.
    for (DecoderTensor t : {DecoderTensor::token_embd, DecoderTensor::attn_norm, DecoderTensor::attn_out, DecoderTensor::ffn_norm,
                            DecoderTensor::ffn_up, DecoderTensor::ffn_down, DecoderTensor::output_norm})
      CHECK_MESSAGE(names->has(t), row.id);
  }
  CHECK(decoders == 4);  // gpt2, llama, qwen2, hooked_transformer
}

TEST_CASE("model kinds: a decoder kind without a table of names is refused by name, not dereferenced") {
  const DecoderNames* names = decoder_names("llama");
  CHECK(find_decoder_names("mistral", names) ==
        "the decoder kind \"mistral\" has no table of tensor names (core/models/decoder_names.cpp), so its checkpoints cannot be read");
  CHECK(names == nullptr);
  // A Llama-style kind made for such an id (a row of model_kinds.cpp added before its names) stops at its config.
  LlamaConfig c;
  CHECK(parse_llama_config(kMistral, "mistral", c).rfind("the decoder kind \"mistral\" has no table of tensor names", 0) == 0);
}

TEST_CASE("config.json rows with a default: absent or null reads the default, a wrong value is named") {
  Fields f;
  REQUIRE(read_fields(R"({"size": 8})", f) == "");
  CHECK((f.inner == 32 && f.positions == 1024 && f.eps == 1e-5 && !f.tied));  // the defaults; inner's from size
  REQUIRE(read_fields(R"({"size": 8, "inner": null, "positions": null, "eps": null, "tied": null})", f) == "");
  CHECK((f.inner == 32 && f.positions == 1024 && f.eps == 1e-5 && !f.tied));
  REQUIRE(read_fields(R"({"size": 8, "inner": 7, "n_ctx": 64, "eps": 0.5, "tied": true})", f) == "");
  CHECK((f.inner == 7 && f.positions == 64 && f.eps == 0.5 && f.tied));
  // Both spellings: the newer wins; the older is still checked.
  REQUIRE(read_fields(R"({"size": 8, "n_ctx": 64, "positions": 96})", f) == "");
  CHECK(f.positions == 96);
  CHECK(read_fields(R"({"size": 8, "n_ctx": 0, "positions": 96})", f) == "config.json: \"n_ctx\" must be a whole number in [1, 1000], got 0");
  CHECK(read_fields(R"({"size": 8, "inner": "wide"})", f) == "config.json: \"inner\" must be a number or null, got string");
  CHECK(read_fields(R"({"size": 8, "inner": 2.5})", f) == "config.json: \"inner\" must be a whole number in [1, 1000], got 2.5");
  CHECK(read_fields(R"({"size": 8, "eps": 1})", f) == "config.json: \"eps\" must be a number in (0, 1), got 1");
  CHECK(read_fields(R"({"size": 8, "eps": "small"})", f) == "config.json: \"eps\" must be a number in (0, 1), got \"small\"");
  CHECK(read_fields(R"({"size": 8, "tied": 1})", f) == "config.json: \"tied\" must be true or false, got 1");
  CHECK(read_fields(R"({"inner": 7})", f) == "config.json: \"size\" is missing (is this a Test config?)");
  // The summary writes the same rows under their record names, less those not shown.
  REQUIRE(read_fields(R"({"size": 8, "tied": true})", f) == "");
  CHECK(write_json(config_record(f, [](auto& w, auto& c) { fields_of(w, c); })) ==
        R"({"size":8,"inner":32,"positions":1024,"tied":true})");
}

TEST_CASE("decoder weight count[gpt2, qwen2 with q/k/v biases]: the tensor table's sizes, the loader's parameters") {
  // GPT-2: what its hand formula said, (V + P) E + L (4E + 3E^2 + 3E + E^2 + E + 2EF + F + E) + 2E.
  Gpt2Config g;
  REQUIRE(parse_gpt2_config(fixture_text("gpt2_tiny/hub/config.json"), g) == "");
  const std::uint64_t E = 16, F = 64, V = 407, P = 48, L = 2;
  const std::uint64_t count = decoder_weight_count(gpt2_spec(g), *decoder_names("gpt2"));
  CHECK(count == (V + P) * E + L * (4 * E + 3 * E * E + 3 * E + E * E + E + 2 * E * F + F + E) + 2 * E);
  CHECK(count == 13872);  // the loader's summary of the fixture ("parameters")
  // Qwen2: the biases on q, k and v are counted (Llama's old formula left every bias out).
  LlamaConfig q;
  REQUIRE(parse_llama_config(fixture_text("qwen2_tiny/config.json"), "qwen2", q) == "");
  const std::string bin = fixture_text("qwen2_tiny/pytorch_model.bin");
  std::unique_ptr<CheckpointModel> model;
  Json summary;
  REQUIRE(load_checkpoint("qwen2", fixture_text("qwen2_tiny/config.json"), reinterpret_cast<const std::uint8_t*>(bin.data()), bin.size(),
                          "bin", model, &summary) == "");
  CHECK(double(q.weight_count) == summary.find("parameters")->as_number());
  const std::uint64_t qE = 24, qF = 40, qV = 416, QD = 3 * 8, KD = 1 * 8;  // H 3, Hkv 1, D 8; tied
  const std::uint64_t without_biases = qV * qE + L * (2 * qE + qE * (QD + 2 * KD) + QD * qE + 3 * qE * qF) + qE;
  CHECK(q.weight_count == without_biases + L * (QD + 2 * KD));
}

TEST_CASE("config.json of model_type mistral: refused by name with its sliding window, by every kind's check") {
  CHECK(make_model_kind("llama")->read_config(kMistral) ==
        "config.json's model_type is \"mistral\": Mistral's sliding-window attention (sliding_window 4096) is not read here; this lab "
        "reads Llama checkpoints (model_type \"llama\")");
  CHECK(make_model_kind("qwen2")->read_config(kMistral) ==
        "config.json's model_type is \"mistral\": Mistral's sliding-window attention (sliding_window 4096) is not read here; this lab "
        "reads Qwen2 checkpoints (model_type \"qwen2\")");
  CHECK(make_model_kind("gpt2")->read_config(kMistral).rfind("config.json's model_type is \"mistral\": Mistral's sliding-window", 0) == 0);
  // Mistral v0.2's config has no window (null): still not a kind of this registry.
  CHECK(make_model_kind("llama")->read_config(with(kMistral, "\"sliding_window\": 4096", "\"sliding_window\": null")) ==
        "config.json's model_type is \"mistral\": Mistral checkpoints are not read here; this lab reads Llama checkpoints (model_type \"llama\")");
  // Any other model_type keeps the sentence it had.
  CHECK(make_model_kind("llama")->read_config(with(kMistral, "\"mistral\"", "\"falcon\"")) ==
        "config.json: model_type is \"falcon\"; this lab reads Llama checkpoints (model_type \"llama\")");
}
