// The registry's decoder kinds `llama` and `qwen2` (core/models/llama*) against plain PyTorch
// (tests/fixtures/make_llama_fixtures.py): a tiny Llama with grouped-query attention (4 over 2), a given
// head_dim wider than hidden_size / heads, llama3 rope_scaling, BF16 weights and an untied head, from
// model.safetensors; a tiny Qwen2 with q/k/v biases, one key/value head, tied embeddings and a vocabulary
// padded past its tokenizer's, from pytorch_model.bin. Logits, every layer's attention and residuals
// within twice PyTorch's own float32 error against its float64 run (at least 1e-5), cached steps, greedy
// writing, head roles and the logit lens; then config.json's and the checkpoint's messages.
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "models/checkpoint_loader.h"
#include "models/decoder_probes.h"
#include "models/llama.h"
#include "models/writer.h"
#include "shard_runner.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_bytes(const std::string& path) { return read_fixture_bytes(path, "make_llama_fixtures.py"); }

std::string folder(const std::string& kind) { return std::string(ATTNLAB_FIXTURES_DIR) + "/" + kind + "_tiny/"; }
std::string weights_file(const std::string& kind) { return kind == "llama" ? "model.safetensors" : "pytorch_model.bin"; }

const SafeTensorsFile& reference(const std::string& kind) {
  static const SafeTensorsFile llama = load_fixture("llama_tiny_reference.safetensors");
  static const SafeTensorsFile qwen2 = load_fixture("qwen2_tiny_reference.safetensors");
  return kind == "llama" ? llama : qwen2;
}

std::string load(const std::string& kind, const std::string& config, std::unique_ptr<LlamaModel>& model, Json* summary = nullptr,
                 LoadPlan* plan = nullptr) {
  const std::string bytes = read_bytes(folder(kind) + weights_file(kind));
  return load_checkpoint_as(kind, config, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), weights_file(kind), model,
                            summary, plan);
}

std::unique_ptr<LlamaModel> tiny(const std::string& kind, Json* summary = nullptr, LoadPlan* plan = nullptr) {
  std::unique_ptr<LlamaModel> model;
  const std::string error = load(kind, read_bytes(folder(kind) + "config.json"), model, summary, plan);
  REQUIRE_MESSAGE(error.empty(), error);
  return model;
}

double tolerance(const std::string& kind, const std::string& name) {
  return std::max(1e-5, 2 * std::stod(reference(kind).metadata.at(name + ".f32_vs_f64")));
}

void expect_close(const std::string& kind, const std::string& name, const std::vector<float>& ours, std::size_t offset = 0) {
  const std::vector<float> torch = tensor_f(reference(kind), name);
  REQUIRE(offset + ours.size() <= torch.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, double(std::fabs(ours[i] - torch[offset + i])));
  INFO(kind << " " << name << ": max |ours - torch| = " << worst << " (tolerance " << tolerance(kind, name) << ")");
  CHECK(worst <= tolerance(kind, name));
}

template <class F>
std::vector<float> per_layer(int layers, F f) {
  std::vector<float> out;
  for (int l = 0; l < layers; ++l) {
    const auto& v = f(l);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("llama[4 over 2 heads, head_dim 12, llama3 rope_scaling, BF16, own lm_head] and qwen2[3 over 1, q/k/v biases, tied, V padded]: the prompt against PyTorch") {
  for (const std::string kind : {"llama", "qwen2"}) {
    Json summary;
    LoadPlan plan;
    auto model = tiny(kind, &summary, &plan);
    const DecoderSpec& s = model->spec();
    INFO(kind);
    CHECK(summary.find("kind")->as_string() == kind);
    if (kind == "llama") {
      CHECK((s.n_head == 4 && s.n_kv_head == 2 && s.head_dim == 12 && s.q_width() == 48 && s.n_embd == 32));
      CHECK((!s.tied_unembedding && !s.qkv_bias && !s.out_bias && !s.mlp_bias));
      CHECK(s.rope_scaling.type == RopeScaling::Type::llama3);
      CHECK(plan.skipped.empty());
    } else {
      CHECK((s.n_head == 3 && s.n_kv_head == 1 && s.vocab_size == 416));
      CHECK((s.tied_unembedding && s.qkv_bias && !s.out_bias && !s.mlp_bias));
    }
    // The rotary frequencies after rope_scaling (llama3's three bands: kept, blended, divided).
    Rotary rotary(s.head_dim, s.rope_theta, s.rope_scaling);
    const auto inv_freq = tensor_f(reference(kind), "rotary.inv_freq");
    REQUIRE(rotary.inv_freq().size() == inv_freq.size());
    for (std::size_t i = 0; i < inv_freq.size(); ++i) CHECK(rotary.inv_freq()[i] == doctest::Approx(inv_freq[i]).epsilon(1e-6));
    const auto prompt = tensor_i(reference(kind), "prompt.input_ids");
    const int T = int(prompt.size());
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      INFO(backend_name(backend));
      model->forward(backend, prompt.data(), T);
      expect_close(kind, "prompt.attentions", per_layer(s.n_layer, [&](int l) { return model->attention(l); }));
      std::vector<float> residuals;
      for (int l = 0; l <= s.n_layer; ++l) {
        const RowMatrix& r = model->residual(l);
        residuals.insert(residuals.end(), r.data(), r.data() + r.size());
      }
      expect_close(kind, "prompt.residuals", residuals);
      expect_close(kind, "prompt.logits", per_layer(T, [&](int t) { return model->logits(t); }));
    }
    // The logit lens: each layer's residual through the final RMSNorm and the (tied or own) head.
    const auto lens = logit_lens(*model);
    std::vector<std::int32_t> ours;
    for (const auto& row : lens)
      for (const auto& cell : row) ours.push_back(cell.id);
    CHECK(ours == tensor_i(reference(kind), "prompt.lens"));
  }
}

TEST_CASE("llama and qwen2: cached steps give PyTorch's full recompute, greedy writing its continuation, head roles its scores") {
  for (const std::string kind : {"llama", "qwen2"}) {
    INFO(kind);
    auto model = tiny(kind);
    const auto prompt = tensor_i(reference(kind), "prompt.input_ids");
    const auto greedy = tensor_i(reference(kind), "greedy.ids");
    const int T = int(prompt.size()), V = model->spec().vocab_size;
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      INFO(backend_name(backend));
      WritingSettings settings;
      settings.sampling.temperature = 0;
      settings.max_new_tokens = int(greedy.size());
      Writing w;
      REQUIRE(generate(*model, backend, prompt.data(), T, settings, w) == "");
      CHECK(w.ids == std::vector<int>(greedy.begin(), greedy.end()));
      model->forward(backend, prompt.data(), T);
      expect_close(kind, "greedy.logits", model->logits(T - 1), std::size_t(T - 1) * V);
      for (std::size_t i = 0; i + 1 < greedy.size(); ++i) {
        REQUIRE(model->check_step(greedy[i]) == "");
        model->step(backend, greedy[i]);  // rotary at position T + i, grouped heads reading the cache
        expect_close(kind, "greedy.logits", model->logits(0), (T + i) * std::size_t(V));
      }
    }
    // The page's and the CLI's model: limited to the tokenizer's 407 ids (openCheckpoint), so the
    // random tokens are drawn from those and the padded ids take no probability (the script's roles).
    REQUIRE(model->limit_vocabulary(407) == "");
    HeadRoles roles;
    REQUIRE(head_roles(*model, Backend::simd128, 20, 7, {}, roles) == "");
    const auto ids = tensor_i(reference(kind), "roles.input_ids");
    CHECK(roles.tokens == std::vector<std::int32_t>(ids.begin(), ids.end()));
    expect_close(kind, "roles.previous", roles.previous);
    expect_close(kind, "roles.first", roles.first);
    expect_close(kind, "roles.induction", roles.induction);
    expect_close(kind, "roles.loss", {roles.first_copy_loss, roles.second_copy_loss});
  }
}

TEST_CASE("qwen2[V 416 padded past the tokenizer's 407]: limited to the tokenizer's ids, no padded id is chosen and the rest is unchanged") {
  auto model = tiny("qwen2");
  const auto prompt = tensor_i(reference("qwen2"), "prompt.input_ids");
  const int T = int(prompt.size());
  model->forward(Backend::simd128, prompt.data(), T);
  const std::vector<float> before = model->logits(T - 1);
  CHECK(model->limit_vocabulary(417) == "a tokenizer of 417 tokens cannot write this model's vocabulary of 416");
  CHECK(model->limit_vocabulary(0) == "a tokenizer of 0 tokens cannot write this model's vocabulary of 416");
  REQUIRE(model->limit_vocabulary(407) == "");
  const std::vector<float> after = model->logits(T - 1);
  for (int v = 0; v < 416; ++v) {
    if (v < 407) CHECK(after[std::size_t(v)] == before[std::size_t(v)]);
    else CHECK(after[std::size_t(v)] == -std::numeric_limits<float>::infinity());
  }
  for (const auto& row : logit_lens(*model))
    for (const auto& cell : row) CHECK(cell.id < 407);
  // Sampling at a high temperature over every id: none past the tokenizer's.
  WritingSettings settings;
  settings.sampling.temperature = 5;
  settings.max_new_tokens = 30;
  settings.stop_at_eos = false;
  Writing w;
  REQUIRE(generate(*model, Backend::simd128, prompt.data(), T, settings, w) == "");
  for (int id : w.ids) CHECK(id < 407);
}

// The prompt's pass and a cached step on one thread and on two (the threads split the products'
// columns, the attention's heads and the unembedding's rows: core/shard_runner.h): the same bits.
TEST_CASE("llama and qwen2: the same logits and attention bits on one thread and on two") {
  ShardRunner& runner = shard_runner();
  const int active = runner.active_workers();
  for (const char* kind : {"llama", "qwen2"}) {
    CAPTURE(kind);
    auto model = tiny(kind);
    const auto prompt = tensor_i(reference(kind), "prompt.input_ids");
    const int T = int(prompt.size());
    std::vector<std::vector<float>> seen[2];
    for (int threads : {1, 2}) {
      runner.set_active_workers(threads - 1);
      model->forward(Backend::simd128, prompt.data(), T);
      seen[threads - 1].push_back(model->logits(T - 1));
      model->step(Backend::simd128, prompt[0]);
      seen[threads - 1].push_back(model->logits(0));
      for (int l = 0; l < model->spec().n_layer; ++l) seen[threads - 1].push_back(model->attention(l));
    }
    runner.set_active_workers(active);
    REQUIRE(seen[0].size() == seen[1].size());
    for (std::size_t i = 0; i < seen[0].size(); ++i) CHECK(seen[0][i] == seen[1][i]);
  }
}

TEST_CASE("llama and qwen2: config.json's choices are read or refused by name") {
  const std::string llama = read_bytes(folder("llama") + "config.json"), qwen2 = read_bytes(folder("qwen2") + "config.json");
  LlamaConfig c;
  REQUIRE(parse_llama_config(llama, "llama", c) == "");
  CHECK((c.kv_heads == 2 && c.head_dim == 12 && c.eos_token_id == 406 && !c.tie_word_embeddings));
  // rope_scaling: null and "linear" are read; other types refused by name.
  std::string edited = replaced(llama, "\"rope_type\": \"llama3\"", "\"rope_type\": \"linear\"");
  REQUIRE(parse_llama_config(edited, "llama", c) == "");
  CHECK((c.rope_scaling.type == RopeScaling::Type::linear && c.rope_scaling.factor == 8.0));
  Rotary plain(12, 10000.0), linear(12, 10000.0, c.rope_scaling);
  for (int i = 0; i < 6; ++i) CHECK(linear.inv_freq()[std::size_t(i)] == plain.inv_freq()[std::size_t(i)] / 8.0f);
  edited = replaced(llama, "\"rope_type\": \"llama3\"", "\"rope_type\": \"yarn\"");
  CHECK(parse_llama_config(edited, "llama", c) ==
        "config.json: rope_scaling's rope_type is \"yarn\"; this decoder computes rotary positions unscaled, \"linear\" or \"llama3\" only");
  edited = replaced(llama, "\"low_freq_factor\": 1.0,", "");
  CHECK(parse_llama_config(edited, "llama", c) == "config.json: rope_scaling (\"llama3\") has no \"low_freq_factor\"");
  // num_key_value_heads absent: multi-head; head_dim absent: E / H.
  edited = replaced(replaced(llama, "\"num_key_value_heads\": 2,", ""), "\"head_dim\": 12,", "");
  REQUIRE(parse_llama_config(edited, "llama", c) == "");
  CHECK((c.kv_heads == 4 && c.head_dim == 8));
  edited = replaced(llama, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3");
  CHECK(parse_llama_config(edited, "llama", c) == "config.json: num_attention_heads 4 is not a multiple of num_key_value_heads 3");
  edited = replaced(llama, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"");
  CHECK(parse_llama_config(edited, "llama", c) == "config.json: \"hidden_act\" is \"gelu\"; this decoder's gated MLP computes \"silu\" only");
  edited = replaced(llama, "\"eos_token_id\": 406", "\"eos_token_id\": [500, 406, 2]");
  REQUIRE(parse_llama_config(edited, "llama", c) == "");
  CHECK(c.eos_token_id == 406);  // the first inside the vocabulary
  CHECK(parse_llama_config(llama, "qwen2", c) ==
        "config.json: model_type is \"llama\"; this lab reads Qwen2 checkpoints (model_type \"qwen2\")");
  // Qwen2: the sliding window refused by name, with its width (the fixture's sliding_window is 64).
  REQUIRE(parse_llama_config(qwen2, "qwen2", c) == "");
  CHECK((c.attention_bias && c.tie_word_embeddings && c.vocab_size == 416 && c.rope_scaling.type == RopeScaling::Type::none));
  edited = replaced(qwen2, "\"use_sliding_window\": false", "\"use_sliding_window\": true");
  CHECK(parse_llama_config(edited, "qwen2", c) ==
        "config.json: \"use_sliding_window\" is true and \"sliding_window\" is 64; this decoder attends to every earlier token (no sliding window)");
  CHECK(parse_llama_config(replaced(edited, "\"sliding_window\": 64", "\"sliding_window\": null"), "qwen2", c) ==
        "config.json: \"use_sliding_window\" is true; this decoder attends to every earlier token (no sliding window)");
  // A Llama config that turns a window on (a Mistral relabelled) is refused the same way.
  edited = replaced(llama, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"silu\", \"use_sliding_window\": true, \"sliding_window\": 4096");
  CHECK(parse_llama_config(edited, "llama", c) ==
        "config.json: \"use_sliding_window\" is true and \"sliding_window\" is 4096; this decoder attends to every earlier token (no sliding window)");
  // Its window without the switch is Llama's to ignore (LlamaConfig has none).
  edited = replaced(llama, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"silu\", \"sliding_window\": 4096");
  CHECK(parse_llama_config(edited, "llama", c) == "");
  // Too large for the tab: the size is said before anything is read.
  edited = replaced(llama, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 200");
  edited = replaced(edited, "\"hidden_size\": 32", "\"hidden_size\": 4096");
  edited = replaced(edited, "\"intermediate_size\": 48", "\"intermediate_size\": 11008");
  const std::string error = parse_llama_config(edited, "llama", c);
  CHECK(error.rfind("config.json describes a model that needs ", 0) == 0);
  CHECK(error.find("MB of weights as 16-bit and ") != std::string::npos);
}

TEST_CASE("llama and qwen2: a checkpoint that disagrees with config.json is named by its tensor") {
  std::unique_ptr<LlamaModel> model;
  // An untied config on the tied Qwen2 file: lm_head is missing.
  std::string config = replaced(read_bytes(folder("qwen2") + "config.json"), "\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false");
  CHECK(load("qwen2", config, model) ==
        "pytorch_model.bin has no tensor \"lm_head.weight\", and config.json's tie_word_embeddings is false: is the unembedding tied?");
  // A tied config on the untied Llama file: lm_head.weight would be ignored, so it is named.
  config = replaced(read_bytes(folder("llama") + "config.json"), "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
  CHECK(load("llama", config, model) == "");  // a tied file may carry lm_head (from_pretrained ties it): skipped
  // attention_bias on a file without biases.
  config = replaced(read_bytes(folder("llama") + "config.json"), "\"attention_bias\": false", "\"attention_bias\": true");
  CHECK(load("llama", config, model) ==
        "model.safetensors has no tensor \"model.layers.0.self_attn.q_proj.bias\": is it a llama checkpoint with config.json's 2 layers and these biases?");
  // Qwen2's biases read as a Llama without attention_bias: the extra tensors are named.
  config = replaced(replaced(read_bytes(folder("qwen2") + "config.json"), "\"model_type\": \"qwen2\"", "\"model_type\": \"llama\""),
                    "\"use_sliding_window\": false,", "");
  const std::string bytes = read_bytes(folder("qwen2") + "pytorch_model.bin");
  std::unique_ptr<CheckpointModel> loaded;
  CHECK(load_checkpoint("llama", config, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "bin", loaded) ==
        "pytorch_model.bin has tensor \"model.layers.0.self_attn.q_proj.bias\", which a llama decoder of this config.json does not have "
        "(attention_bias, mlp_bias or tie_word_embeddings set wrong?)");
  // A wrong head_dim: the first projection is named with its shape.
  config = replaced(read_bytes(folder("llama") + "config.json"), "\"head_dim\": 12", "\"head_dim\": 8");
  CHECK(load("llama", config, model) ==
        "model.safetensors: tensor \"model.layers.0.self_attn.q_proj.weight\" has shape [48, 32] but config.json (hidden_size 32, 4 heads over "
        "2 key/value heads of 8, intermediate_size 48, vocab_size 407) needs [32, 32]");
}
