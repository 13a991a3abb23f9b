// The one memory rule (core/models/model_memory.h) on real configs: weights at their stored precision
// plus a run's work must fit the 4 GB heap less the module's 256 MB. TinyLlama-1.1B and Llama-3.2-1B fit
// in BF16 (issue 37's targets), TinyLlama in float32 and SmolLM2-1.7B in BF16 do not, each refused with
// the memory it needs. The numbers are docs/writing.md's table.
#include "models/llama_config.h"
#include "test_support.h"

using namespace attnlab;

namespace {

const char* kTinyLlama = R"({"model_type": "llama", "hidden_act": "silu", "torch_dtype": "bfloat16", "vocab_size": 32000,
  "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4,
  "max_position_embeddings": 2048})";

std::string with(std::string json, const std::string& from, const std::string& to) { return json.replace(json.find(from), from.size(), to); }

ModelMemory memory_of(const std::string& json) {
  LlamaConfig c;
  const std::string error = parse_llama_config(json, "llama", c);
  REQUIRE_MESSAGE(error.empty(), error);
  return model_memory(c.weight_count, c.stored_bytes, work_shape(c));
}

}  // namespace

TEST_CASE("model memory: TinyLlama-1.1B in BF16 fits the 4 GB heap (2,098 MB of weights + 406 MB of work); in float32 it is refused") {
  CHECK(kModelBudgetBytes == 3840 * kMiB);
  const ModelMemory m = memory_of(kTinyLlama);
  // TinyLlama's parameters counted from kTinyLlama's fields, as Hugging Face's LlamaForCausalLM holds them
  // (untied head): the embedding and the head V x E; per layer q_proj and o_proj E x E, k_proj and v_proj
  // E x Hkv*D, the gated MLP's three E x F and two RMSNorms of E; the final norm E. (1,100,048,384.)
  const std::uint64_t V = 32000, E = 2048, F = 5632, L = 22, Hkv = 4, D = E / 32;
  const std::uint64_t parameters = 2 * V * E + L * (2 * E * E + 2 * E * Hkv * D + 3 * E * F + 2 * E) + E;
  CHECK(m.weights == parameters * 2);  // BF16: 2 bytes each
  CHECK(m.work / kMiB == 406);
  CHECK(m.total() <= kModelBudgetBytes);
  LlamaConfig c;
  CHECK(parse_llama_config(with(kTinyLlama, "bfloat16", "float32"), "llama", c) ==
        "config.json describes a model that needs 4729 MB: 4197 MB of weights as float32 and 532 MB of work, more than the 3840 MB a "
        "browser tab's WebAssembly memory can hold (4 GB, less 256 MB for the module itself)");
}

TEST_CASE("model memory: Llama-3.2-1B in BF16 fits (3,184 MB), SmolLM2-1.7B in BF16 does not (3,869 MB)") {
  const std::string llama32 = R"({"model_type": "llama", "hidden_act": "silu", "torch_dtype": "bfloat16", "vocab_size": 128256,
    "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 64, "max_position_embeddings": 131072, "tie_word_embeddings": true})";
  CHECK(memory_of(llama32).total() / kMiB == 3184);
  const std::string smollm2 = R"({"model_type": "llama", "hidden_act": "silu", "torch_dtype": "bfloat16", "vocab_size": 49152,
    "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32,
    "max_position_embeddings": 8192, "tie_word_embeddings": true})";
  LlamaConfig c;
  CHECK(parse_llama_config(smollm2, "llama", c).rfind("config.json describes a model that needs 3869 MB: 3265 MB of weights as 16-bit", 0) == 0);
}
