// The DistilBERT kind of the model registry (core/models/distilbert_checkpoint.*: a BertModel under
// DistilBERT's names) against a plain PyTorch DistilBERT (tests/fixtures/make_distilbert_fixtures.py):
// DistilBertForMaskedLM from model.safetensors ("distilbert." prefix, the MLM head, the projector tied)
// and DistilBertModel from pytorch_model.bin (no prefix, no head), both CPU backends; attentions, hidden
// states and the MLM logits within twice PyTorch's own float32 error against its float64 run (at least
// 1e-5; the fixture records it per tensor). Then its config.json and naming messages.
#include <fstream>
#include <iterator>
#include <memory>

#include "models/bert.h"
#include "models/checkpoint_loader.h"
#include "models/distilbert_checkpoint.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_bytes(const std::string& path) { return read_fixture_bytes(path, "make_distilbert_fixtures.py"); }

std::string folder(const std::string& variant) { return std::string(ATTNLAB_FIXTURES_DIR) + "/distilbert_tiny/" + variant + "/"; }

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("distilbert_tiny_reference.safetensors");
  return f;
}

std::string load(const std::string& variant, const std::string& file, std::unique_ptr<BertModel>& model, Json* summary = nullptr) {
  const std::string bytes = read_bytes(folder(variant) + file);
  return load_checkpoint_as("distilbert", read_bytes(folder(variant) + "config.json"), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                            bytes.size(), file, model, summary);
}

void expect_close(const std::string& name, const std::vector<float>& ours) {
  const std::vector<float> torch = tensor_f(reference(), name);
  const double tol = std::max(1e-5, 2 * std::stod(reference().metadata.at(name + ".f32_vs_f64")));
  REQUIRE(torch.size() == ours.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, double(std::fabs(ours[i] - torch[i])));
  INFO(name << ": max |ours - torch| = " << worst);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("DistilBERT (a BertModel under DistilBERT's names) matches PyTorch: attentions, hidden states, [MASK] logits") {
  for (const auto& [variant, file] : {std::pair<std::string, std::string>{"mlm", "model.safetensors"}, {"base", "pytorch_model.bin"}}) {
    std::unique_ptr<BertModel> model;
    Json summary;
    const std::string error = load(variant, file, model, &summary);
    REQUIRE_MESSAGE(error.empty(), error);
    CHECK(summary.find("kind")->as_string() == "distilbert");
    CHECK(model->has_mlm_head() == (variant == "mlm"));
    CHECK(summary.find("naming")->as_string() == (variant == "mlm" ? "\"distilbert.\" prefix, LayerNorm as weight/bias" : "no prefix, LayerNorm as weight/bias"));
    const BertConfig& c = model->config();
    for (const std::string input : {"single", "pair"}) {
      const auto ids = tensor_i(reference(), input + ".input_ids");
      const std::vector<std::int32_t> types(ids.size(), 0);
      const int T = int(ids.size());
      for (Backend backend : {Backend::scalar, Backend::simd128}) {
        INFO(variant << " " << input << " " << backend_name(backend));
        model->forward(backend, ids.data(), types.data(), T);
        std::vector<float> all;
        for (int l = 0; l < c.num_hidden_layers; ++l) all.insert(all.end(), model->attention(l).begin(), model->attention(l).end());
        expect_close(input + ".attentions", all);
        all.clear();
        for (int l = 0; l <= c.num_hidden_layers; ++l)
          all.insert(all.end(), model->hidden_state(l).data(), model->hidden_state(l).data() + model->hidden_state(l).size());
        expect_close(input + ".hidden_states", all);
        if (model->has_mlm_head()) {
          std::vector<float> logits(std::size_t(T) * c.vocab_size);
          for (int t = 0; t < T; ++t)
            for (const auto& p : model->predict(t, c.vocab_size)) logits[std::size_t(t) * c.vocab_size + p.id] = p.logit;
          expect_close(input + ".mlm_logits", logits);
        }
      }
    }
  }
}

TEST_CASE("DistilBERT config.json and checkpoint messages name the field and the tensor") {
  const std::string config = read_bytes(folder("mlm") + "config.json");
  BertConfig c;
  REQUIRE(parse_distilbert_config(config, c) == "");
  CHECK(c.hidden_size == 32);
  CHECK(c.num_hidden_layers == 2);
  CHECK(c.type_vocab_size == 2);  // zero embeddings: pairs add nothing, as in DistilBERT
  std::string edited = config;
  edited.replace(edited.find("\"dim\": 32"), 9, "\"dimm\": 32");
  CHECK(parse_distilbert_config(edited, c) == "config.json: \"dim\" is missing (is this a DistilBERT config?)");
  edited = config;
  edited.replace(edited.find("\"activation\": \"gelu\""), 20, "\"activation\": \"relu\"");
  CHECK(parse_distilbert_config(edited, c) == "config.json: \"activation\" is \"relu\"; DistilBERT here computes \"gelu\" (erf) only");
  // A BERT checkpoint given as DistilBERT names the first tensor it lacks under both spellings.
  const std::string bert = read_bytes(std::string(ATTNLAB_FIXTURES_DIR) + "/bert_tiny/modern/model.safetensors");
  std::unique_ptr<BertModel> model;
  const std::string error = load_checkpoint_as("distilbert", config, reinterpret_cast<const std::uint8_t*>(bert.data()), bert.size(),
                                               "safetensors", model);
  CHECK(error.rfind("model.safetensors: tensor \"bert.embeddings.word_embeddings.weight\"", 0) != 0);
  CHECK(error.find("has no tensor \"distilbert.embeddings.word_embeddings.weight\" (nor \"embeddings.word_embeddings.weight\")") != std::string::npos);
}
