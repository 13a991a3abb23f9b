// Heads switched off (core/layers/head_ablation.h; issue 39, item 4) against PyTorch with the same heads'
// z zeroed before the output projection (tests/fixtures/make_ablation_fixtures.py, on the plain references
// gpt2_reference.py, bert_reference.py, marian_reference.py): the tiny GPT-2's logits and greedy
// continuation (through the one writer), the tiny BERT's [MASK] logits, the tiny Marian's greedy ids and
// cross-attention and its beam ids; within 1e-5 (or twice PyTorch's own float32-vs-float64 error where
// that is larger), on scalar and simd128. Switching every head back on gives the bits of a model that
// never had any off; a refused list names the head and leaves the one before.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>

#include "models/bert.h"
#include "models/checkpoint_loader.h"
#include "models/gpt2.h"
#include "models/marian.h"
#include "models/writer.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("ablation_reference.safetensors");
  return f;
}

template <class Model>
std::unique_ptr<Model> load(const std::string& kind, const std::string& folder) {
  const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/" + folder + "/";
  const std::string bytes = read_file(dir + "model.safetensors");
  std::unique_ptr<Model> model;
  const std::string error = load_checkpoint_as(kind, read_file(dir + "config.json"), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               bytes.size(), "safetensors", model);
  REQUIRE_MESSAGE(error.empty(), error);
  return model;
}

const std::vector<std::string> kCases = {"none", "l0h1", "l1h0", "l0h0_l1h1"};

// A decoder's heads go with each pass (intervention.h).
Intervention off_in_pass(const std::vector<LayerHead>& heads) {
  Intervention iv;
  REQUIRE(iv.heads_off.set(heads, 2, 2) == "");
  return iv;
}

std::vector<LayerHead> heads_of(const std::string& c) {
  const auto pairs = tensor_i(reference(), c + ".heads");
  std::vector<LayerHead> out;
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) out.push_back({pairs[i], pairs[i + 1]});
  return out;
}

double tolerance(const std::string& name) {
  const auto it = reference().metadata.find(name + ".f32_vs_f64");
  return std::max(1e-5, it == reference().metadata.end() ? 0.0 : 2 * std::stod(it->second));
}

void expect_close(const std::string& name, const std::vector<float>& ours) {
  const std::vector<float> torch = tensor_f(reference(), name);
  REQUIRE_MESSAGE(torch.size() == ours.size(), name << ": " << ours.size() << " values, torch " << torch.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, double(std::fabs(ours[i] - torch[i])));
  INFO(name << ": max |ours - torch| = " << worst << " (tolerance " << tolerance(name) << ")");
  CHECK(worst <= tolerance(name));
}

std::vector<float> all_logits(const Decoder& m) {
  std::vector<float> out;
  for (int t = 0; t < m.pass_length(); ++t) {
    const auto z = m.logits(t);
    out.insert(out.end(), z.begin(), z.end());
  }
  return out;
}

}  // namespace

TEST_CASE("head ablation: the list is checked (range, duplicates) and a refused one leaves the one before") {
  HeadAblation a;
  CHECK(a.set({{0, 1}, {1, 0}}, 2, 2) == "");
  CHECK(a.off(0, 1));
  CHECK(a.off(1, 0));
  CHECK_FALSE(a.off(0, 0));
  CHECK(a.set({{2, 0}}, 2, 2) == "head 2.0: this model's layers are 0 to 1");
  CHECK(a.set({{0, 2}}, 2, 2) == "head 0.2: this model's heads are 0 to 1 in each layer");
  CHECK(a.set({{0, 1}, {0, 1}}, 2, 2) == "head 0.1 is given twice");
  CHECK(a.set({{-1, 0}}, 2, 2) == "head -1.0: this model's layers are 0 to 1");
  CHECK(a.heads().size() == 2);  // the refused lists changed nothing
  CHECK(a.off(0, 1));
  // apply zeroes exactly the columns of the heads off in that layer.
  RowMatrix merged = RowMatrix::Constant(3, 6, 2.0f);  // H = 3 heads of D = 2
  REQUIRE(a.set({{0, 1}, {1, 2}}, 2, 3) == "");
  a.apply(0, merged, 2);
  for (int t = 0; t < 3; ++t)
    for (int c = 0; c < 6; ++c) CHECK(merged(t, c) == (c == 2 || c == 3 ? 0.0f : 2.0f));
}

TEST_CASE("head ablation: GPT-2's logits and greedy continuation match PyTorch with the same heads zeroed") {
  auto model = load<Gpt2Model>("gpt2", "gpt2_tiny/hub");
  const auto ids = tensor_i(load_fixture("gpt2_tiny_reference.safetensors"), "prompt.input_ids");
  const int T = int(ids.size());
  for (const std::string& c : kCases) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      SUBCASE((c + " " + backend_name(backend)).c_str()) {
        const Intervention off = off_in_pass(heads_of(c));
        model->forward(backend, ids.data(), T, off);
        expect_close("gpt2." + c + ".logits", all_logits(*model));
        // Greedy through the one writer (the CLI's and the page's), cached steps.
        WritingSettings s;
        s.sampling.temperature = 0;
        s.max_new_tokens = 12;
        s.stop_at_eos = true;
        s.heads_off = off.heads_off;
        Writing w;
        REQUIRE(generate(*model, backend, ids.data(), T, s, w) == "");
        const auto want = tensor_i(reference(), "gpt2." + c + ".greedy.ids");
        CHECK(std::vector<std::int32_t>(w.ids.begin(), w.ids.end()) == want);
        // The whole text's logits in one pass, as PyTorch's recompute.
        std::vector<std::int32_t> full(ids.begin(), ids.end());
        full.insert(full.end(), want.begin(), want.end() - 1);
        model->forward(backend, full.data(), int(full.size()), off);
        expect_close("gpt2." + c + ".greedy.logits", all_logits(*model));
      }
    }
  }
}

TEST_CASE("head ablation: a decoder's heads hold for one pass; the next pass without them gives the bits of a model that never had any off; the writer starts again") {
  auto model = load<Gpt2Model>("gpt2", "gpt2_tiny/hub");
  auto fresh = load<Gpt2Model>("gpt2", "gpt2_tiny/hub");
  const auto ids = tensor_i(load_fixture("gpt2_tiny_reference.safetensors"), "prompt.input_ids");
  const int T = int(ids.size());
  model->forward(Backend::simd128, ids.data(), T, off_in_pass({{0, 1}}));
  const std::vector<float> off = all_logits(*model);
  model->forward(Backend::simd128, ids.data(), T);
  fresh->forward(Backend::simd128, ids.data(), T);
  CHECK(all_logits(*model) == all_logits(*fresh));
  CHECK(off != all_logits(*fresh));

  // The page's writer: heads switched off between steps forget what was written, and it is written again.
  WritingSettings s;
  s.sampling.temperature = 0;
  s.max_new_tokens = 12;
  Writer writer(*model);
  REQUIRE(writer.begin(Backend::scalar, ids.data(), T, s) == "");
  REQUIRE(writer.write_to(s, 12) == "");
  std::vector<int> before;
  for (const auto& step : writer.steps()) before.push_back(step.id);
  CHECK(std::vector<std::int32_t>(before.begin(), before.end()) == tensor_i(reference(), "gpt2.none.greedy.ids"));
  writer.take_first_changed();
  s.heads_off = off_in_pass(heads_of("l1h0")).heads_off;
  REQUIRE(writer.write_to(s, 12) == "");
  CHECK(writer.take_first_changed() == 0);
  std::vector<std::int32_t> after;
  for (const auto& step : writer.steps()) after.push_back(step.id);
  CHECK(after == tensor_i(reference(), "gpt2.l1h0.greedy.ids"));
}

TEST_CASE("head ablation: BERT's [MASK] logits match PyTorch with the same heads zeroed") {
  auto model = load<BertModel>("bert", "bert_tiny/modern");
  const SafeTensorsFile bert = load_fixture("bert_tiny_reference.safetensors");
  const auto ids = tensor_i(bert, "pair.input_ids");
  const auto types = tensor_i(bert, "pair.token_type_ids");
  const int T = int(ids.size()), V = model->config().vocab_size;
  for (const std::string& c : kCases) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      SUBCASE((c + " " + backend_name(backend)).c_str()) {
        model->forward(backend, ids.data(), types.data(), T, off_in_pass(heads_of(c)).heads_off);
        std::vector<float> ours(std::size_t(T) * V);
        for (int t = 0; t < T; ++t)
          for (const auto& p : model->predict(t, V)) ours[std::size_t(t) * V + p.id] = p.logit;
        expect_close("bert." + c + ".mlm_logits", ours);
      }
    }
  }
}

TEST_CASE("head ablation: BERT's and Marian's heads hold for one pass; the next pass without them gives the bits of a model that never had any off") {
  auto bert = load<BertModel>("bert", "bert_tiny/modern");
  auto fresh_bert = load<BertModel>("bert", "bert_tiny/modern");
  const SafeTensorsFile b = load_fixture("bert_tiny_reference.safetensors");
  const auto ids = tensor_i(b, "pair.input_ids");
  const auto types = tensor_i(b, "pair.token_type_ids");
  const int T = int(ids.size());
  const auto logits = [&](const BertModel& m) {
    std::vector<float> out;
    for (int t = 0; t < T; ++t)
      for (const auto& p : m.predict(t, 8)) out.push_back(p.logit);
    return out;
  };
  bert->forward(Backend::simd128, ids.data(), types.data(), T, off_in_pass({{0, 1}}).heads_off);
  const std::vector<float> off = logits(*bert);
  bert->forward(Backend::simd128, ids.data(), types.data(), T);
  fresh_bert->forward(Backend::simd128, ids.data(), types.data(), T);
  CHECK(logits(*bert) == logits(*fresh_bert));
  CHECK(off != logits(*fresh_bert));

  auto marian = load<MarianModel>("marian", "marian_tiny");
  auto fresh_marian = load<MarianModel>("marian", "marian_tiny");
  const auto src = tensor_i(load_fixture("marian_tiny_reference.safetensors"), "cat.input_ids");
  const int max_length = marian->config().max_length;
  for (MarianModel* m : {marian.get(), fresh_marian.get()}) m->encode(Backend::simd128, src.data(), int(src.size()));
  const auto cross_of = [](const MarianModel::Generation& g) {
    std::vector<float> out;
    for (const auto& step : g.cross) out.insert(out.end(), step.begin(), step.end());
    return out;
  };
  const auto switched = marian->generate(Backend::simd128, 1, max_length, off_in_pass(heads_of("l0h0_l1h1")).heads_off);
  const auto after = marian->generate(Backend::simd128, 1, max_length);
  const auto whole = fresh_marian->generate(Backend::simd128, 1, max_length);
  CHECK(after.ids == whole.ids);
  CHECK(cross_of(after) == cross_of(whole));
  CHECK(cross_of(switched) != cross_of(whole));
  // A teacher-forced decode after a generation with heads off: every head on again.
  const std::vector<std::int32_t> target(whole.ids.begin(), whole.ids.end());
  marian->decode(Backend::simd128, target.data(), int(target.size()));
  fresh_marian->decode(Backend::simd128, target.data(), int(target.size()));
  CHECK(marian->cross_attention(1) == fresh_marian->cross_attention(1));
  CHECK(std::equal(marian->logits().data(), marian->logits().data() + marian->logits().size(), fresh_marian->logits().data()));
}

TEST_CASE("head ablation: Marian's greedy ids and cross-attention, and its beam ids, match PyTorch with the same cross heads zeroed") {
  auto model = load<MarianModel>("marian", "marian_tiny");
  const auto src = tensor_i(load_fixture("marian_tiny_reference.safetensors"), "cat.input_ids");
  const MarianConfig& cfg = model->config();
  for (const std::string& c : kCases) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      SUBCASE((c + " " + backend_name(backend)).c_str()) {
        const HeadAblation off = off_in_pass(heads_of(c)).heads_off;
        model->encode(backend, src.data(), int(src.size()));
        const auto g = model->generate(backend, 1, cfg.max_length, off);
        const auto want = tensor_i(reference(), "marian." + c + ".greedy.ids");
        REQUIRE(std::vector<std::int32_t>(g.ids.begin(), g.ids.end()) == want);
        std::vector<float> cross;
        for (const auto& step : g.cross) cross.insert(cross.end(), step.begin(), step.end());
        expect_close("marian." + c + ".greedy.cross_attentions", cross);
        const auto beam = model->generate(backend, cfg.num_beams, cfg.max_length, off);
        CHECK(std::vector<std::int32_t>(beam.ids.begin(), beam.ids.end()) == tensor_i(reference(), "marian." + c + ".beam.ids"));
      }
    }
  }
}
