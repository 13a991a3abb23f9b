// Golden parity with a plain PyTorch BERT (tests/fixtures/make_bert_fixtures.py, bert_reference.py):
// three tiny checkpoints in the Hugging Face layout (fp32 with the "bert." prefix and the MLM head; fp16
// without prefix and LayerNorm as gamma/beta; bf16 with an explicit decoder), two inputs (a sentence; a
// pair with [MASK]), on both CPU backends. Attentions, hidden states, queries, keys and the [MASK]
// logits match to 1e-4 (the tolerance; PyTorch's own float32-vs-float64 error is below 2e-5).
// Then the checkpoint checks: each malformed case has its message.
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "models/bert.h"
#include "models/checkpoint_loader.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path << " (run tests/fixtures/make_bert_fixtures.py)");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string folder(const std::string& variant) { return std::string(ATTNLAB_FIXTURES_DIR) + "/bert_tiny/" + variant + "/"; }

// What the loader's summary says of a load, as the checks below read it.
struct LoadSummary {
  std::string naming;
  bool mlm_head = false;
  std::vector<std::string> skipped;
};

std::string load_bert(const std::string& config, const std::uint8_t* data, std::size_t size, std::unique_ptr<BertModel>& model,
                      LoadSummary& plan) {
  Json summary;
  const std::string error = load_checkpoint_as("bert", config, data, size, "safetensors", model, &summary);
  plan = LoadSummary{};
  if (!error.empty()) return error;
  plan.naming = summary.find("naming")->as_string();
  plan.mlm_head = summary.find("mlm")->as_bool();
  for (const Json& s : summary.find("skipped")->items()) plan.skipped.push_back(s.as_string());
  return error;
}

struct Checkpoint {
  std::string config;
  std::vector<std::uint8_t> weights;
};

Checkpoint checkpoint(const std::string& variant) {
  const std::string bytes = read_text(folder(variant) + "model.safetensors");
  return {read_text(folder(variant) + "config.json"), std::vector<std::uint8_t>(bytes.begin(), bytes.end())};
}

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("bert_tiny_reference.safetensors");
  return f;
}

std::string load(const Checkpoint& c, std::unique_ptr<BertModel>& model) {
  LoadSummary plan;
  return load_bert(c.config, c.weights.data(), c.weights.size(), model, plan);
}

void expect_close(const std::string& name, const float* ours, std::size_t n, double tol = 1e-4) {
  const std::vector<float> torch = tensor_f(reference(), name);
  REQUIRE(torch.size() == n);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::fabs(ours[i] - torch[i])));
  INFO(name << ": max |ours - torch| = " << worst);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("BERT forward matches PyTorch: attentions, hidden states, queries, keys, [MASK] logits") {
  for (const std::string variant : {"modern", "legacy", "bf16"}) {
    std::unique_ptr<BertModel> model;
    REQUIRE(load(checkpoint(variant), model) == "");
    const BertConfig& c = model->config();
    CHECK(model->has_mlm_head() == (variant != "legacy"));
    for (const std::string input : {"single", "pair"}) {
      const auto ids = tensor_i(reference(), input + ".input_ids");
      const auto types = tensor_i(reference(), input + ".token_type_ids");
      const int T = int(ids.size());
      for (Backend backend : {Backend::scalar, Backend::simd128}) {
        SUBCASE((variant + " " + input + " " + backend_name(backend)).c_str()) {
          REQUIRE(model->check_input(ids.data(), types.data(), T) == "");
          model->forward(backend, ids.data(), types.data(), T);
          const std::string key = variant + "." + input + ".";
          std::vector<float> all;
          for (int l = 0; l < c.num_hidden_layers; ++l) all.insert(all.end(), model->attention(l).begin(), model->attention(l).end());
          expect_close(key + "attentions", all.data(), all.size());
          all.clear();
          for (int l = 0; l <= c.num_hidden_layers; ++l)
            all.insert(all.end(), model->hidden_state(l).data(), model->hidden_state(l).data() + model->hidden_state(l).size());
          expect_close(key + "hidden_states", all.data(), all.size());
          all.clear();
          for (int l = 0; l < c.num_hidden_layers; ++l) all.insert(all.end(), model->queries(l).begin(), model->queries(l).end());
          expect_close(key + "queries", all.data(), all.size());
          all.clear();
          for (int l = 0; l < c.num_hidden_layers; ++l) all.insert(all.end(), model->keys(l).begin(), model->keys(l).end());
          expect_close(key + "keys", all.data(), all.size());
          if (model->has_mlm_head()) {
            // Every position's logits through predict(): the top V of V gives each token's logit.
            const std::vector<float> torch = tensor_f(reference(), key + "mlm_logits");
            std::vector<float> ours(torch.size());
            for (int t = 0; t < T; ++t)
              for (const auto& p : model->predict(t, c.vocab_size)) ours[std::size_t(t) * c.vocab_size + p.id] = p.logit;
            expect_close(key + "mlm_logits", ours.data(), ours.size());
          }
        }
      }
    }
  }
}

TEST_CASE("BERT from pytorch_model.bin (torch.save, the decoder tied to the embeddings) computes what model.safetensors does, bit for bit") {
  std::unique_ptr<BertModel> from_safetensors, from_bin;
  REQUIRE(load(checkpoint("modern"), from_safetensors) == "");
  const std::string bin = read_text(folder("bin") + "pytorch_model.bin");
  Json summary;
  const std::string error = load_checkpoint_as("bert", read_text(folder("bin") + "config.json"), reinterpret_cast<const std::uint8_t*>(bin.data()),
                                               bin.size(), "bin", from_bin, &summary);
  REQUIRE_MESSAGE(error.empty(), error);
  CHECK(summary.find("file")->as_string() == "pytorch_model.bin");
  CHECK(summary.find("separateDecoder")->as_bool());  // stored under its own name (a copy of the tied storage)
  const auto ids = tensor_i(reference(), "pair.input_ids");
  const auto types = tensor_i(reference(), "pair.token_type_ids");
  for (BertModel* m : {from_safetensors.get(), from_bin.get()}) m->forward(Backend::simd128, ids.data(), types.data(), int(ids.size()));
  for (int l = 0; l < from_bin->config().num_hidden_layers; ++l) {
    CHECK(from_bin->attention(l) == from_safetensors->attention(l));
    CHECK(from_bin->hidden_state(l + 1) == from_safetensors->hidden_state(l + 1));
  }
  const int mask = std::stoi(reference().metadata.at("pair.mask_index"));
  const auto a = from_bin->predict(mask, 5), b = from_safetensors->predict(mask, 5);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK((a[i].id == b[i].id && a[i].logit == b[i].logit));
}

TEST_CASE("BERT [MASK] fill-in: the top five tokens and their probabilities") {
  std::unique_ptr<BertModel> model;
  REQUIRE(load(checkpoint("modern"), model) == "");
  const auto ids = tensor_i(reference(), "pair.input_ids");
  const auto types = tensor_i(reference(), "pair.token_type_ids");
  model->forward(Backend::simd128, ids.data(), types.data(), int(ids.size()));
  const int mask = std::stoi(reference().metadata.at("pair.mask_index"));
  const auto top = model->predict(mask, 5);
  REQUIRE(top.size() == 5);
  // vocab.txt's lines for the reference's top five: "see", "##w", "no", "by", "want".
  const std::string vocab = read_text(folder("modern") + "vocab.txt");
  std::vector<std::string> words;
  for (std::size_t a = 0, b; a < vocab.size(); a = b + 1) {
    b = vocab.find('\n', a);
    if (b == std::string::npos) b = vocab.size();
    words.push_back(vocab.substr(a, b - a));
  }
  std::string got;
  for (const auto& p : top) got += (got.empty() ? "" : ", ") + std::string("\"") + words.at(std::size_t(p.id)) + "\"";
  CHECK("[" + got + "]" == reference().metadata.at("modern.pair.mask_top5"));
  double previous = 1.0, sum = 0.0;
  for (const auto& p : top) {
    CHECK(p.probability <= previous);
    previous = p.probability;
    sum += p.probability;
  }
  CHECK(sum < 1.0);
  CHECK(top[0].probability > 0.0f);
}

namespace {

// The header of a checkpoint with one tensor's entry edited, data unchanged.
std::vector<std::uint8_t> with_header(const std::vector<std::uint8_t>& file, const std::string& from, const std::string& to) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file[std::size_t(i)];
  std::string header(file.begin() + 8, file.begin() + 8 + long(n));
  const auto at = header.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  header.replace(at, from.size(), to);
  while (header.size() < n) header += ' ';
  REQUIRE(header.size() == n);  // the edits keep the length or shorten it
  std::vector<std::uint8_t> out(file.begin(), file.begin() + 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), file.begin() + 8 + long(n), file.end());
  return out;
}

std::string load_error(const std::string& config, const std::vector<std::uint8_t>& weights) {
  std::unique_ptr<BertModel> model;
  LoadSummary plan;
  return load_bert(config, weights.data(), weights.size(), model, plan);
}

}  // namespace

TEST_CASE("BERT checkpoints: every spelling loads; each malformed case is named") {
  const Checkpoint modern = checkpoint("modern"), legacy = checkpoint("legacy");
  LoadSummary plan;
  std::unique_ptr<BertModel> model;
  REQUIRE(load_bert(modern.config, modern.weights.data(), modern.weights.size(), model, plan) == "");
  CHECK(plan.naming == "\"bert.\" prefix, LayerNorm as weight/bias");
  CHECK(plan.mlm_head);
  CHECK(std::find(plan.skipped.begin(), plan.skipped.end(), "bert.pooler.dense.weight") != plan.skipped.end());
  REQUIRE(load_bert(legacy.config, legacy.weights.data(), legacy.weights.size(), model, plan) == "");
  CHECK(plan.naming == "no prefix, LayerNorm as gamma/beta");
  CHECK_FALSE(plan.mlm_head);

  SUBCASE("a missing tensor") {
    CHECK(load_error(modern.config, with_header(modern.weights, "\"bert.encoder.layer.1.output.dense.weight\"",
                                                "\"bert.encoder.layer.1.output.dense.WEIGHT\"")) ==
          "model.safetensors has no tensor \"bert.encoder.layer.1.output.dense.weight\" (nor \"encoder.layer.1.output.dense.weight\"): "
          "is it a BERT checkpoint with config.json's 2 layers?");
  }
  SUBCASE("a shape that config.json does not allow") {
    std::string config = modern.config;
    config.replace(config.find("\"intermediate_size\": 64"), 23, "\"intermediate_size\": 65");
    CHECK(load_error(config, modern.weights) ==
          "model.safetensors: tensor \"bert.encoder.layer.0.intermediate.dense.weight\" has shape [64, 32] but config.json "
          "(hidden_size 32, intermediate_size 65, vocab_size 179) needs [65, 32]");
  }
  SUBCASE("an integer tensor where a weight belongs") {
    const auto file = with_header(modern.weights, "\"bert.embeddings.LayerNorm.bias\":{\"dtype\":\"F32\"",
                                  "\"bert.embeddings.LayerNorm.bias\":{\"dtype\":\"I32\"");
    CHECK(load_error(modern.config, file) == "model.safetensors: tensor \"bert.embeddings.LayerNorm.bias\" has dtype I32; a weight must be F32, F16 or BF16");
  }
  SUBCASE("part of the MLM head") {
    const auto file = with_header(modern.weights, "\"cls.predictions.bias\"", "\"cls.predictions.BIAS\"");
    CHECK(load_error(modern.config, file) == "model.safetensors has no tensor \"cls.predictions.bias\", though it has the rest of the masked-language-model head");
  }
  SUBCASE("a truncated file") {
    std::vector<std::uint8_t> cut(modern.weights.begin(), modern.weights.end() - 100);
    CHECK(load_error(modern.config, cut).rfind("model.safetensors: ", 0) == 0);
    CHECK(load_error(modern.config, cut).find("lie outside the") != std::string::npos);
  }
  SUBCASE("NaN in a weight") {
    std::vector<std::uint8_t> bad = modern.weights;
    SafeTensorsIndex index;
    std::uint64_t n = 0;
    REQUIRE(safetensors_header_length(bad.data(), bad.size(), n) == "");
    REQUIRE(parse_safetensors_index(bad.data() + 8, n, bad.size(), index) == "");
    const auto* e = index.find("bert.encoder.layer.0.attention.self.key.weight");
    REQUIRE(e);
    const float nan = std::nanf("");
    std::memcpy(&bad[std::size_t(e->begin) + 4 * 7], &nan, 4);
    CHECK(load_error(modern.config, bad) ==
          "model.safetensors: tensor \"bert.encoder.layer.0.attention.self.key.weight\" holds NaN at element 7: the model would compute nothing but NaN");
  }
  SUBCASE("config.json") {
    CHECK(load_error("{", modern.weights).rfind("config.json is not JSON: ", 0) == 0);
    CHECK(load_error("[1]", modern.weights) == "config.json must hold a JSON object");
    CHECK(load_error("{\"model_type\": \"gpt2\"}", modern.weights) ==
          "config.json: model_type is \"gpt2\"; this lab reads BERT checkpoints (model_type \"bert\")");
    std::string c = modern.config;
    c.replace(c.find("\"num_attention_heads\": 2"), 24, "\"num_attention_heads\": 3");
    CHECK(load_error(c, modern.weights) == "config.json: hidden_size 32 is not a multiple of num_attention_heads 3");
    c = modern.config;
    c.replace(c.find("\"hidden_size\": 32"), 17, "\"hidden_size\": 2.5");
    CHECK(load_error(c, modern.weights) == "config.json: \"hidden_size\" must be a whole number in [1, 8192], got 2.5");
    c = modern.config;
    c.replace(c.find("\"hidden_act\": \"gelu\""), 20, "\"hidden_act\": \"relu\"");
    CHECK(load_error(c, modern.weights) == "config.json: \"hidden_act\" is \"relu\"; this lab implements BERT's \"gelu\" (erf) only");
    c = modern.config;
    c.replace(c.find("\"vocab_size\": 179"), 17, "\"vocab_size\": 999999");
    c.replace(c.find("\"hidden_size\": 32"), 17, "\"hidden_size\": 8192");
    // 8.2 G weights: more than the 4 GB heap holds (core/models/model_memory.h), said with what it needs.
    CHECK(load_error(c, modern.weights).find("of weights as float32 and ") != std::string::npos);
    CHECK(load_error(c, modern.weights).find("MB of work, more than the 3840 MB") != std::string::npos);
  }
  SUBCASE("inputs") {
    REQUIRE(load_bert(modern.config, modern.weights.data(), modern.weights.size(), model, plan) == "");
    const std::int32_t ids[] = {2, 179, 3}, types[] = {0, 0, 2};
    CHECK(model->check_input(ids, types, 3) == "token id 179 at position 1 is outside the vocabulary [0, 179)");
    const std::int32_t ok[] = {2, 5, 3};
    CHECK(model->check_input(ok, types, 3) == "token type 2 at position 2 is outside [0, 2)");
    std::vector<std::int32_t> long_ids(65, 5), long_types(65, 0);
    CHECK(model->check_input(long_ids.data(), long_types.data(), 65) == "65 tokens: this model has position embeddings for 64");
  }
}

TEST_CASE("16-bit floats widen exactly: F16 subnormals, infinities; BF16 is the top half of F32") {
  const std::uint8_t half[] = {0x01, 0x00, 0x00, 0x3c, 0x00, 0x7c, 0x00, 0xfc, 0xff, 0x7b, 0x00, 0x80};
  float out[6];
  REQUIRE(decode_floats("F16", half, 6, out));
  CHECK(out[0] == std::ldexp(1.0f, -24));
  CHECK(out[1] == 1.0f);
  CHECK(std::isinf(out[2]));
  CHECK(out[3] == -INFINITY);
  CHECK(out[4] == 65504.0f);
  CHECK((out[5] == 0.0f && std::signbit(out[5])));
  const std::uint8_t bf[] = {0x80, 0x3f, 0x49, 0x40};  // 1.0, 3.140625
  REQUIRE(decode_floats("BF16", bf, 2, out));
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 3.140625f);
  CHECK_FALSE(decode_floats("I32", bf, 1, out));
}

TEST_CASE("BERT checkpoints: a finite weight too large for float32's forward is refused with its value") {
  const std::string bytes = read_text(folder("modern") + "model.safetensors");
  std::vector<std::uint8_t> bad(bytes.begin(), bytes.end());
  SafeTensorsIndex index;
  std::uint64_t n = 0;
  REQUIRE(safetensors_header_length(bad.data(), bad.size(), n) == "");
  REQUIRE(parse_safetensors_index(bad.data() + 8, n, bad.size(), index) == "");
  const auto* e = index.find("bert.embeddings.LayerNorm.weight");
  REQUIRE(e);
  const float huge = 3e38f;
  std::memcpy(&bad[std::size_t(e->begin) + 4 * 2], &huge, 4);
  std::unique_ptr<BertModel> model;
  LoadSummary plan;
  const std::string config = read_text(folder("modern") + "config.json");
  CHECK(load_bert(config, bad.data(), bad.size(), model, plan).rfind(
            "model.safetensors: tensor \"bert.embeddings.LayerNorm.weight\" holds 3e+38 at element 2: ", 0) == 0);
  CHECK(load_bert(config, bad.data(), bad.size(), model, plan).find(
            " at element 2: weights beyond ±1e6 overflow float32 in the forward") != std::string::npos);
}
