// The GPT-2 kind of the model registry (core/models/gpt2*) against a plain PyTorch GPT-2
// (tests/fixtures/make_gpt2_fixtures.py, gpt2_reference.py): the tiny checkpoint in both namings and both
// formats; attentions, residuals and logits within twice PyTorch's own float32 error against its
// float64 run (at least 1e-5; the fixture records it per tensor); the cached decode against a full
// recompute; greedy writing against PyTorch's; sampling reproduced by its seed; head roles and the logit
// lens against the script's numbers. Then config.json's and the checkpoint's messages.
#include <fstream>
#include <iterator>
#include <memory>
#include <numeric>
#include <set>

#include "models/checkpoint_loader.h"
#include "models/gpt2.h"
#include "models/gpt2_config.h"
#include "models/decoder_probes.h"
#include "models/writer.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_bytes(const std::string& path) { return read_fixture_bytes(path, "make_gpt2_fixtures.py"); }

std::string folder(const std::string& variant) { return std::string(ATTNLAB_FIXTURES_DIR) + "/gpt2_tiny/" + variant + "/"; }

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("gpt2_tiny_reference.safetensors");
  return f;
}

const std::vector<std::pair<std::string, std::string>> kVariants = {
    {"hub", "model.safetensors"}, {"hub_bin", "pytorch_model.bin"}, {"lm", "model.safetensors"}, {"lm_bin", "pytorch_model.bin"}};

std::string load(const std::string& variant, const std::string& file, std::unique_ptr<Gpt2Model>& model, Json* summary = nullptr,
                 LoadPlan* plan = nullptr) {
  const std::string bytes = read_bytes(folder(variant) + file);
  return load_checkpoint_as("gpt2", read_bytes(folder(variant) + "config.json"), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                            bytes.size(), file, model, summary, plan);
}

std::unique_ptr<Gpt2Model> hub_model() {
  std::unique_ptr<Gpt2Model> model;
  const std::string error = load("hub", "model.safetensors", model);
  REQUIRE_MESSAGE(error.empty(), error);
  return model;
}

double tolerance(const std::string& name) { return std::max(1e-5, 2 * std::stod(reference().metadata.at(name + ".f32_vs_f64"))); }

void expect_close(const std::string& name, const std::vector<float>& ours, std::size_t offset = 0) {
  const std::vector<float> torch = tensor_f(reference(), name);
  REQUIRE(offset + ours.size() <= torch.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, double(std::fabs(ours[i] - torch[offset + i])));
  INFO(name << ": max |ours - torch| = " << worst << " (tolerance " << tolerance(name) << ")");
  CHECK(worst <= tolerance(name));
}

std::vector<float> all_logits(const Gpt2Model& m) {
  std::vector<float> out;
  for (int t = 0; t < m.pass_length(); ++t) {
    const auto z = m.logits(t);
    out.insert(out.end(), z.begin(), z.end());
  }
  return out;
}

}  // namespace

TEST_CASE("gpt2: both namings and both formats load and match PyTorch (attentions, residuals, logits; scalar and simd128)") {
  const auto ids = tensor_i(reference(), "prompt.input_ids");
  const int T = int(ids.size());
  for (const auto& [variant, file] : kVariants) {
    std::unique_ptr<Gpt2Model> model;
    Json summary;
    LoadPlan plan;
    const std::string error = load(variant, file, model, &summary, &plan);
    REQUIRE_MESSAGE(error.empty(), error);
    CHECK(summary.find("kind")->as_string() == "gpt2");
    const bool prefixed = variant.rfind("lm", 0) == 0;
    CHECK(summary.find("naming")->as_string() == (prefixed ? "\"transformer.\" prefix" : "no prefix"));
    // The buffers and the tied lm_head are skipped, never read.
    std::set<std::string> skipped(plan.skipped.begin(), plan.skipped.end());
    if (variant == "hub") CHECK(skipped == std::set<std::string>{"h.0.attn.bias", "h.1.attn.bias"});
    if (variant == "hub_bin")
      CHECK(skipped == std::set<std::string>{"h.0.attn.bias", "h.0.attn.masked_bias", "h.1.attn.bias", "h.1.attn.masked_bias"});
    if (variant == "lm") CHECK(skipped.empty());
    if (variant == "lm_bin") CHECK(skipped == std::set<std::string>{"lm_head.weight"});
    const Gpt2Config& c = model->config();
    CHECK(c.n_inner == 4 * c.n_embd);  // config.json's null
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      INFO(variant << " " << backend_name(backend));
      model->forward(backend, ids.data(), T);
      std::vector<float> all;
      for (int l = 0; l < c.n_layer; ++l) all.insert(all.end(), model->attention(l).begin(), model->attention(l).end());
      expect_close("prompt.attentions", all);
      all.clear();
      for (int l = 0; l <= c.n_layer; ++l) all.insert(all.end(), model->residual(l).data(), model->residual(l).data() + model->residual(l).size());
      expect_close("prompt.residuals", all);
      expect_close("prompt.logits", all_logits(*model));
    }
  }
}

TEST_CASE("gpt2: the cached decode gives the full recompute's logits, and greedy writing is PyTorch's continuation") {
  auto model = hub_model();
  const auto prompt = tensor_i(reference(), "prompt.input_ids");
  const auto greedy = tensor_i(reference(), "greedy.ids");
  const int T = int(prompt.size()), V = model->config().vocab_size;
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    INFO(backend_name(backend));
    WritingSettings settings;
    settings.sampling.temperature = 0;
    settings.max_new_tokens = int(greedy.size());
    Writing w;
    REQUIRE(generate(*model, backend, prompt.data(), T, settings, w) == "");
    CHECK(w.ids == std::vector<int>(greedy.begin(), greedy.end()));
    CHECK(w.stop_reason == "max_new_tokens");
    // Step by step: each cached step's logits are the fixture's full-sequence row at that position.
    model->forward(backend, prompt.data(), T);
    expect_close("greedy.logits", model->logits(T - 1), std::size_t(T - 1) * V);
    std::vector<float> cached_rows;
    for (std::size_t i = 0; i + 1 < greedy.size(); ++i) {
      REQUIRE(model->check_step(greedy[i]) == "");
      model->step(backend, greedy[i]);
      expect_close("greedy.logits", model->logits(0), (T + i) * std::size_t(V));
      // The step's attention row is the full pass's row for that position (every layer and head).
      const int S = model->cached();
      cached_rows = model->attention(0);
      REQUIRE(int(cached_rows.size()) == model->config().n_head * S);
    }
    // And the whole sequence in one pass gives the same rows as the cache did.
    std::vector<std::int32_t> all(prompt.begin(), prompt.end());
    all.insert(all.end(), greedy.begin(), greedy.end() - 1);
    const auto last_row = cached_rows;
    model->forward(backend, all.data(), int(all.size()));
    const int S = int(all.size());
    const std::vector<float>& a = model->attention(0);
    double worst = 0;
    for (int h = 0; h < model->config().n_head; ++h)
      for (int s = 0; s < S; ++s)
        worst = std::max(worst, double(std::fabs(a[(std::size_t(h) * S + S - 1) * S + s] - last_row[std::size_t(h) * S + s])));
    CHECK(worst <= 1e-6);
  }
}

TEST_CASE("gpt2: sampling (temperature, top-k, top-p) follows its formula and a seed reproduces a run bit for bit") {
  auto model = hub_model();
  const auto prompt = tensor_i(reference(), "prompt.input_ids");
  WritingSettings settings;
  settings.sampling = {0.8, 40, 0.9};
  settings.max_new_tokens = 20;
  settings.seed = 1234;
  settings.stop_at_eos = false;
  Writing a, b, simd, other;
  REQUIRE(generate(*model, Backend::scalar, prompt.data(), int(prompt.size()), settings, a) == "");
  REQUIRE(generate(*model, Backend::scalar, prompt.data(), int(prompt.size()), settings, b) == "");
  REQUIRE(generate(*model, Backend::simd128, prompt.data(), int(prompt.size()), settings, simd) == "");
  CHECK(a.ids.size() == 20);
  CHECK(a.ids == b.ids);
  // The SIMD128 kernel sums in another order (last bits of the weights differ): the same tokens here.
  CHECK(a.ids == simd.ids);
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].probability == b.steps[i].probability);  // bit for bit on one backend
    CHECK(a.steps[i].attention == b.steps[i].attention);
    CHECK(a.steps[i].probability == doctest::Approx(simd.steps[i].probability).epsilon(1e-5));
    CHECK(a.steps[i].top.size() == 10);
    CHECK(a.steps[i].top[0].probability >= a.steps[i].top[9].probability);
  }
  settings.seed = 1235;
  REQUIRE(generate(*model, Backend::scalar, prompt.data(), int(prompt.size()), settings, other) == "");
  CHECK(other.ids != a.ids);

  // The distribution itself, on made-up logits.
  const std::vector<float> z = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  auto p = next_token_distribution(z.data(), 5, {1.0, 0, 1.0});
  double sum = 0;
  for (float v : z) sum += std::exp(double(v));
  for (int i = 0; i < 5; ++i) CHECK(p[std::size_t(i)] == doctest::Approx(std::exp(double(z[std::size_t(i)])) / sum).epsilon(1e-12));
  p = next_token_distribution(z.data(), 5, {0.5, 2, 1.0});  // top-2: the tied 3s (ids 1 and 3)
  CHECK(p[1] == doctest::Approx(0.5));
  CHECK(p[3] == doctest::Approx(0.5));
  CHECK(p[0] + p[2] + p[4] == 0.0);
  p = next_token_distribution(z.data(), 5, {1.0, 0, 0.5});  // ids 1 and 3 hold 0.67: the nucleus is id 1 and 3
  CHECK(p[1] + p[3] == doctest::Approx(1.0));
  p = next_token_distribution(z.data(), 5, {1.0, 0, 0.2});  // id 1 alone passes 0.2
  CHECK(p[1] == 1.0);
  p = next_token_distribution(z.data(), 5, {0.0, 0, 1.0});  // greedy: the first maximum
  CHECK(p[1] == 1.0);
  CHECK(check_sampling({-1, 0, 1}) == "temperature must be in [0, 100], got -1.000000");
  CHECK(check_sampling({1, 0, 0}) == "top-p must be in (0, 1], got 0.000000");
}

TEST_CASE("gpt2: head roles and the logit lens match the script's") {
  auto model = hub_model();
  HeadRoles roles;
  REQUIRE(head_roles(*model, Backend::scalar, 20, 7, {}, roles) == "");
  const auto ids = tensor_i(reference(), "roles.input_ids");
  CHECK(roles.tokens == std::vector<std::int32_t>(ids.begin(), ids.end()));
  expect_close("roles.previous", roles.previous);
  expect_close("roles.first", roles.first);
  expect_close("roles.induction", roles.induction);
  expect_close("roles.loss", {roles.first_copy_loss, roles.second_copy_loss});
  CHECK(head_roles(*model, Backend::scalar, 30, 7, {}, roles) == "1 + 2 x 30 tokens: this model has position embeddings for 48");

  const auto prompt = tensor_i(reference(), "prompt.input_ids");
  model->forward(Backend::scalar, prompt.data(), int(prompt.size()));
  const auto lens = logit_lens(*model);
  const auto expected = tensor_i(reference(), "prompt.lens");
  REQUIRE(lens.size() == std::size_t(model->config().n_layer + 1));
  std::vector<std::int32_t> ours;
  for (const auto& row : lens)
    for (const auto& cell : row) ours.push_back(cell.id);
  CHECK(ours == expected);
}

TEST_CASE("gpt2: config.json and checkpoint messages name the field and the tensor") {
  const std::string config = read_bytes(folder("hub") + "config.json");
  Gpt2Config c;
  REQUIRE(parse_gpt2_config(config, c) == "");
  CHECK(c.n_positions == 48);
  CHECK(c.eos_token_id == c.vocab_size - 1);
  std::string edited = config;
  edited.replace(edited.find("\"n_inner\": null"), 15, "\"n_inner\": 40");
  REQUIRE(parse_gpt2_config(edited, c) == "");
  CHECK(c.n_inner == 40);
  // n_positions, or the older n_ctx without it, or GPT2Config's 1024 without either (config_json.h's rows).
  edited = config;
  edited.replace(edited.find("\"n_positions\": 48"), 17, "\"n_positions\": null");
  edited.replace(edited.find("\"n_ctx\": 48"), 11, "\"n_ctx\": 40");
  REQUIRE(parse_gpt2_config(edited, c) == "");
  CHECK(c.n_positions == 40);
  edited.replace(edited.find("\"n_ctx\": 40"), 11, "\"n_ctx\": 0.5");
  CHECK(parse_gpt2_config(edited, c) == "config.json: \"n_ctx\" must be a whole number in [1, 65536], got 0.5");
  edited = config;
  edited.replace(edited.find("\"eos_token_id\": 406"), 19, "\"eos_token_id\": 407");
  REQUIRE(parse_gpt2_config(edited, c) == "");
  CHECK(c.eos_token_id == -1);  // past the vocabulary: no end
  edited = config;
  edited.replace(edited.find("\"layer_norm_epsilon\": 1e-05"), 27, "\"layer_norm_epsilon\": 0");
  CHECK(parse_gpt2_config(edited, c) == "config.json: \"layer_norm_epsilon\" must be a number in (0, 1), got 0");
  edited = config;
  edited.replace(edited.find("\"n_embd\": 16"), 12, "\"n_emb\": 16");
  CHECK(parse_gpt2_config(edited, c) == "config.json: \"n_embd\" is missing (is this a GPT-2 config?)");
  edited = config;
  edited.replace(edited.find("\"activation_function\": \"gelu_new\""), 33, "\"activation_function\": \"relu\"");
  CHECK(parse_gpt2_config(edited, c) == "config.json: \"activation_function\" is \"relu\"; GPT-2 here computes \"gelu_new\" (tanh) only");
  edited = config;
  edited.replace(edited.find("\"n_head\": 2"), 11, "\"n_head\": 3");
  CHECK(parse_gpt2_config(edited, c) == "config.json: n_embd 16 is not a multiple of n_head 3");

  // A config with wider n_inner than the file: the first tensor whose shape differs is named.
  edited = config;
  edited.replace(edited.find("\"n_inner\": null"), 15, "\"n_inner\": 40");
  const std::string bytes = read_bytes(folder("lm") + "model.safetensors");
  std::unique_ptr<Gpt2Model> model;
  std::string error = load_checkpoint_as("gpt2", edited, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "safetensors", model);
  CHECK(error == "model.safetensors: tensor \"transformer.h.0.mlp.c_fc.weight\" has shape [16, 64] but config.json (n_embd 16, "
                 "n_inner 40, vocab_size 407, n_positions 48) needs [16, 40]");
  // A BERT checkpoint given as GPT-2.
  const std::string bert = read_bytes(std::string(ATTNLAB_FIXTURES_DIR) + "/bert_tiny/modern/model.safetensors");
  error = load_checkpoint_as("gpt2", config, reinterpret_cast<const std::uint8_t*>(bert.data()), bert.size(), "safetensors", model);
  CHECK(error == "model.safetensors has no tensor \"wte.weight\": is it a GPT-2 checkpoint with config.json's 2 layers?");

  // Input checks.
  model = hub_model();
  const std::int32_t bad[] = {1, 407};
  CHECK(model->check_prompt(bad, 2) == "token id 407 at position 1 is outside the vocabulary [0, 407)");
  CHECK(model->check_prompt(bad, 0) == "the text has no tokens");
  CHECK(model->check_step(1) == "no text yet: run the prompt first");
}

// next_token_distribution sorts only what a setting needs (nothing for a temperature alone, the top k
// for top-k) and top_tokens keeps the best k in one pass: both against plain full sorts, on logits
// with many ties (eight distinct values over 3,000 ids), where the order's tie rules decide.
TEST_CASE("gpt2: the partial orders of sampling equal full sorts, ties included") {
  Rng rng(99);
  const int V = 3000;
  std::vector<float> z(V);
  for (float& v : z) v = float(int(rng.uniform() * 8.0f)) * 0.5f;
  for (const Sampling s : {Sampling{1.0, 0, 1.0}, Sampling{0.7, 5, 1.0}, Sampling{1.3, 0, 0.6}, Sampling{0.9, 100, 0.8}, Sampling{0.0, 0, 1.0}}) {
    INFO("temperature " << s.temperature << " top-k " << s.top_k << " top-p " << s.top_p);
    // The reference: every id stably sorted by logit, then the formula of sampling.h.
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return z[std::size_t(a)] > z[std::size_t(b)]; });
    std::vector<double> want(V, 0.0);
    if (s.temperature == 0) {
      want[std::size_t(order[0])] = 1.0;
    } else {
      const int kept = s.top_k > 0 ? s.top_k : V;
      double sum = 0;
      for (int i = 0; i < kept; ++i) sum += want[std::size_t(order[std::size_t(i)])] = std::exp((double(z[std::size_t(order[std::size_t(i)])]) - z[std::size_t(order[0])]) / s.temperature);
      double mass = 0, nucleus = 0;
      for (int i = 0; i < kept; ++i) {
        double& p = want[std::size_t(order[std::size_t(i)])];
        p /= sum;
        if (mass >= s.top_p) p = 0;
        else nucleus = mass += p;
      }
      for (double& p : want) p /= nucleus;
    }
    const std::vector<double> p = next_token_distribution(z.data(), V, s);
    for (int v = 0; v < V; ++v) REQUIRE(p[std::size_t(v)] == doctest::Approx(want[std::size_t(v)]).epsilon(1e-12));
    // top_tokens against a full sort with its own rule: more likely, larger logit, lower id.
    std::vector<int> all(V);
    std::iota(all.begin(), all.end(), 0);
    std::sort(all.begin(), all.end(), [&](int a, int b) {
      if (p[std::size_t(a)] != p[std::size_t(b)]) return p[std::size_t(a)] > p[std::size_t(b)];
      if (z[std::size_t(a)] != z[std::size_t(b)]) return z[std::size_t(a)] > z[std::size_t(b)];
      return a < b;
    });
    for (int k : {0, 1, 10, 37}) {
      const std::vector<TokenChance> top = top_tokens(p, z.data(), k);
      REQUIRE(int(top.size()) == k);
      for (int i = 0; i < k; ++i) CHECK(top[std::size_t(i)].id == all[std::size_t(i)]);
    }
  }
}
