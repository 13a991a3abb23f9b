// Circuits (core/models/circuits.h, issue 44) against plain PyTorch written to TransformerLens's
// conventions (tests/fixtures/make_circuits_fixtures.py): on the tiny GPT-2 (LayerNorm, learned
// positions, biases), the tiny Llama (RMSNorm, rotary, 4 query heads over 2 key/value heads, BF16) and
// the tiny Qwen 2 (q/k/v biases, one key/value head): the activation cache under the hook names, the
// direct logit attribution of every head, layer bias and MLP, and every activation-patching grid, each
// within twice PyTorch's own float32 error against its float64 run (at least 1e-5); the parts add up
// to the logit difference; then the refusals, in the words the CLI and the page show.
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "models/checkpoint_loader.h"
#include "models/circuits.h"
#include "models/decoder.h"
#include "models/decoder_probes.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const SafeTensorsFile& reference() {
  static const SafeTensorsFile f = load_fixture("circuits_reference.safetensors");
  return f;
}

struct TinyModel {
  const char* name;    // the fixture's prefix
  const char* kind;    // the registry's kind
  const char* folder;  // under tests/fixtures
  const char* file;
};
const TinyModel kModels[] = {{"gpt2", "gpt2", "gpt2_tiny/hub", "model.safetensors"},
                             {"llama", "llama", "llama_tiny", "model.safetensors"},
                             {"qwen2", "qwen2", "qwen2_tiny", "pytorch_model.bin"}};

std::unique_ptr<Decoder> load(const TinyModel& m) {
  const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/" + m.folder + "/";
  const std::string bytes = read_fixture_bytes(dir + m.file), config = read_fixture_bytes(dir + "config.json");
  std::unique_ptr<Decoder> model;
  const std::string error =
      load_checkpoint_as(m.kind, config, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), m.file, model);
  REQUIRE_MESSAGE(error.empty(), error);
  model->limit_vocabulary(407);  // the tiny tokenizer's ids (qwen2's vocabulary is padded to 416)
  return model;
}

double tolerance(const std::string& name) {
  const auto& meta = reference().metadata;
  const auto at = meta.find(name + ".f32_vs_f64");
  return std::max(1e-5, at == meta.end() ? 0.0 : 2 * std::stod(at->second));
}

// Ours against the fixture's tensor, elementwise; -inf (the masked scores) must be -inf in both.
void expect_close(const std::string& name, const std::vector<double>& ours) {
  const std::vector<float> torch = tensor_f(reference(), name);
  REQUIRE_MESSAGE(ours.size() == torch.size(), name << ": " << ours.size() << " values, the fixture has " << torch.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (std::isinf(torch[i])) {
      CHECK_MESSAGE(ours[i] == double(torch[i]), name << "[" << i << "] should be " << torch[i]);
      continue;
    }
    worst = std::max(worst, std::fabs(ours[i] - double(torch[i])));
  }
  INFO(name << ": max |ours - torch| = " << worst << " (tolerance " << tolerance(name) << ")");
  CHECK(worst <= tolerance(name));
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

struct Pair {
  std::vector<std::int32_t> clean, corrupt;
  int answer, wrong;
};
Pair pair_of(const std::string& m) {
  const auto answers = tensor_i(reference(), m + ".answers");
  return {tensor_i(reference(), m + ".clean.ids"), tensor_i(reference(), m + ".corrupt.ids"), answers[0], answers[1]};
}

}  // namespace

TEST_CASE("circuits: the clean run's activation cache has TransformerLens's hook names, shapes and values") {
  for (const TinyModel& m : kModels) {
    SUBCASE(m.name) {
      auto model = load(m);
      const Pair p = pair_of(m.name);
      ActivationCache cache;
      Intervention capture;
      capture.capture = &cache;
      model->forward(Backend::simd128, p.clean.data(), int(p.clean.size()), capture);
      const std::string prefix = std::string(m.name) + ".cache.";
      int checked = 0;
      for (const auto& [name, info] : reference().tensors) {
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string hook = name.substr(prefix.size());
        const CachedActivation* ours = cache.find(hook);
        REQUIRE_MESSAGE(ours, "no " << hook << " in our cache");
        CHECK_MESSAGE(std::vector<std::int64_t>(ours->shape.begin(), ours->shape.end()) == info.shape, hook);
        expect_close(name, widen(ours->values));
        ++checked;
      }
      CHECK(std::size_t(checked) == cache.entries().size());  // and nothing the fixture lacks
      CHECK(checked > 30);
    }
  }
}

TEST_CASE("circuits: direct logit attribution of every part matches PyTorch, and the parts add up to the logit difference") {
  for (const TinyModel& m : kModels) {
    for (Backend backend : {Backend::scalar, Backend::simd128}) {
      SUBCASE((std::string(m.name) + " " + backend_name(backend)).c_str()) {
        auto model = load(m);
        const Pair p = pair_of(m.name);
        LogitAttribution a;
        REQUIRE(attribute_logits(*model, backend, p.clean, p.answer, p.wrong, a) == "");
        const std::string d = std::string(m.name) + ".dla.";
        expect_close(d + "embed", {a.embed});
        if (std::string(m.name) == "gpt2") expect_close(d + "pos_embed", {a.pos_embed});
        expect_close(d + "heads", a.head);
        expect_close(d + "attn_bias", a.attn_bias);
        expect_close(d + "mlp", a.mlp);
        expect_close(d + "constant", {a.constant});
        expect_close(d + "total", {a.total});
        expect_close(d + "logit_diff", {a.logit_diff});
        CHECK(std::fabs(a.total - a.logit_diff) <= 1e-5);
      }
    }
  }
}

TEST_CASE("circuits: every activation-patching grid matches PyTorch's, normalised by the clean and corrupted differences") {
  const std::vector<PatchSite> sites = {PatchSite::resid_pre, PatchSite::z, PatchSite::pattern, PatchSite::attn_out, PatchSite::mlp_out};
  for (const TinyModel& m : kModels) {
    SUBCASE(m.name) {
      auto model = load(m);
      const Pair p = pair_of(m.name);
      ActivationPatching out;
      REQUIRE(patch_activations(*model, Backend::simd128, p.clean, p.corrupt, p.answer, p.wrong, sites, out) == "");
      const std::string d = std::string(m.name) + ".patch.";
      expect_close(d + "clean_diff", {out.clean_diff});
      expect_close(d + "corrupt_diff", {out.corrupt_diff});
      REQUIRE(out.grids.size() == sites.size());
      for (const PatchingGrid& g : out.grids) expect_close(d + patch_site_name(g.site), g.values);
      // Before the one token that differs, every position's residual is the same in both runs: 0.
      const PatchingGrid& resid = out.grids[0];
      CHECK(resid.values[0] == 0.0);
      const int L = model->spec().n_layer, H = model->spec().n_head, T = int(p.clean.size());
      CHECK(patching_passes(*model, T, sites) == 2 + 3 * L * T + 2 * L * H);
    }
  }
}

TEST_CASE("circuits: a pass's intervention is forgotten by the next pass; a captured pass gives the same logits as one without") {
  auto model = load(kModels[0]);
  const Pair p = pair_of("gpt2");
  const int T = int(p.clean.size());
  model->forward(Backend::simd128, p.corrupt.data(), T);
  const double plain = model->logit_difference(T - 1, p.answer, p.wrong);
  ActivationCache cache;
  Intervention capture;
  capture.capture = &cache;
  model->forward(Backend::simd128, p.corrupt.data(), T, capture);
  CHECK(model->logit_difference(T - 1, p.answer, p.wrong) == plain);
  ActivationCache clean;
  capture.capture = &clean;
  model->forward(Backend::simd128, p.clean.data(), T, capture);
  Intervention patch;
  patch.patches.push_back({PatchSite::resid_pre, 0, -1, -1, clean.find("blocks.0.hook_resid_pre")->values.data()});
  model->forward(Backend::simd128, p.corrupt.data(), T, patch);
  const double patched = model->logit_difference(T - 1, p.answer, p.wrong);
  model->forward(Backend::simd128, p.corrupt.data(), T);
  CHECK(model->logit_difference(T - 1, p.answer, p.wrong) == plain);
  // The residual entering layer 0 at every position is the whole input: the clean run's difference.
  model->forward(Backend::simd128, p.clean.data(), T);
  CHECK(patched == model->logit_difference(T - 1, p.answer, p.wrong));
}

TEST_CASE("circuits: refusals name the problem") {
  auto model = load(kModels[0]);
  const Pair p = pair_of("gpt2");
  LogitAttribution a;
  CHECK(attribute_logits(*model, Backend::scalar, p.clean, 407, p.wrong, a) ==
        "answer token id 407 is outside the vocabulary the tokenizer writes [0, 407)");
  CHECK(attribute_logits(*model, Backend::scalar, p.clean, p.answer, p.answer, a) ==
        "the answer and the wrong answer are the same token (375): their difference is 0");
  CHECK(attribute_logits(*model, Backend::scalar, {}, p.answer, p.wrong, a) == "the prompt: the text has no tokens");
  ActivationPatching out;
  std::vector<std::int32_t> shorter(p.corrupt.begin(), p.corrupt.end() - 1);
  CHECK(patch_activations(*model, Backend::scalar, p.clean, shorter, p.answer, p.wrong, {PatchSite::z}, out) ==
        "the clean prompt is 11 tokens and the corrupted one 10: patching puts one run's activations in the other's places, so both "
        "must have the same number of tokens");
  CHECK(patch_activations(*model, Backend::scalar, p.clean, p.clean, p.answer, p.wrong, {PatchSite::z}, out).rfind(
            "the clean and corrupted prompts give the same logit difference (", 0) == 0);
  Intervention bad;
  bad.patches.push_back({PatchSite::resid_pre, 2, -1, -1, p.clean.size() ? reinterpret_cast<const float*>(p.clean.data()) : nullptr});
  CHECK(model->check_intervention(bad, 11) == "resid_pre patch at layer 2: this model's layers are 0 to 1");
  bad.patches[0] = {PatchSite::attn_out, 0, 11, -1, nullptr};
  CHECK(model->check_intervention(bad, 11) == "attn_out patch at layer 0: row 11 is not in a pass of 11 tokens");
  bad.patches[0] = {PatchSite::mlp_out, 0, 3, 1, nullptr};
  CHECK(model->check_intervention(bad, 11) == "mlp_out patch at layer 0: head 1 (only z and pattern patches name a head)");
  bad.patches[0] = {PatchSite::z, 0, -1, 1, nullptr};
  CHECK(model->check_intervention(bad, 11) == "z patch at layer 0: no activation to put in place");
}

TEST_CASE("circuits: a patched cell rerun from its layer and row, alone or in a batch, gives the bits of the whole patched pass") {
  for (const TinyModel& m : kModels) {
    SUBCASE(m.name) {
      auto model = load(m);
      const Pair p = pair_of(m.name);
      const int T = int(p.clean.size()), L = model->spec().n_layer;
      ActivationCache clean;
      Intervention capture;
      capture.capture = &clean;
      model->forward(Backend::simd128, p.clean.data(), T, capture);
      model->forward(Backend::simd128, p.corrupt.data(), T);
      const Decoder::SavedPass corrupted = model->save_pass();
      for (PatchSite site : {PatchSite::resid_pre, PatchSite::z, PatchSite::pattern, PatchSite::attn_out, PatchSite::mlp_out}) {
        for (int l = 0; l < L; ++l) {
          const bool per_head = site == PatchSite::z || site == PatchSite::pattern;
          std::vector<Decoder::Rerun> batch;
          std::vector<double> wholes;
          for (int k : {0, 1, per_head ? 1 : T - 2}) {
            Intervention patch;
            patch.patches.push_back({site, l, per_head ? -1 : k, per_head ? k : -1, clean.find(patch_site_hook(site, l))->values.data()});
            model->forward(Backend::simd128, p.corrupt.data(), T, patch);
            const double whole = model->logit_difference(T - 1, p.answer, p.wrong);
            model->restore_pass(corrupted);
            REQUIRE(model->check_rerun(l, per_head ? 0 : k) == "");
            model->rerun(Backend::simd128, l, per_head ? 0 : k, patch);
            CHECK_MESSAGE(model->logit_difference(model->pass_length() - 1, p.answer, p.wrong) == whole,
                          patch_site_name(site) << " layer " << l << " cell " << k);
            batch.push_back({per_head ? 0 : k, patch});
            wholes.push_back(whole);
          }
          // The same cells as one batch (each its own rows, keys and values): the same bits, cell by cell.
          // A fourth cell switches a head off as well, which must stay its own (from row 0: the head's
          // output changes every row of its layer).
          Intervention off = batch[1].intervention;
          REQUIRE(off.heads_off.set({{l, 0}}, L, model->spec().n_head) == "");
          model->forward(Backend::simd128, p.corrupt.data(), T, off);
          wholes.push_back(model->logit_difference(T - 1, p.answer, p.wrong));
          batch.push_back({0, off});
          model->restore_pass(corrupted);
          model->rerun(Backend::simd128, l, batch);
          REQUIRE(model->rerun_cells() == 4);
          for (int c = 0; c < 4; ++c)
            CHECK_MESSAGE(model->cell_logit_difference(c, p.answer, p.wrong) == wholes[std::size_t(c)],
                          patch_site_name(site) << " layer " << l << " batched cell " << c);
          CHECK(model->check_step(1) == "the last pass was a batch of patched reruns: run the prompt again first");
          CHECK(model->check_rerun(l, 0) == "no prompt's pass to run again: run the prompt first");
        }
      }
      model->restore_pass(corrupted);
      CHECK(model->check_rerun(L, 0) == "layer 2 is not in this model");
      CHECK(model->check_rerun(0, T) == "row 11 is not in the pass");
    }
  }
}

TEST_CASE("head roles: the duplicate-token score is the second copy's attention to its own first occurrence, n back") {
  auto model = load(kModels[0]);
  HeadRoles roles;
  const int n = 8;
  REQUIRE(head_roles(*model, Backend::scalar, n, 7, {}, roles) == "");
  const int T = 1 + 2 * n, H = model->spec().n_head;
  for (int l = 0; l < model->spec().n_layer; ++l) {
    const std::vector<float>& a = model->attention(l);  // the roles' pass: [H, T, T]
    for (int h = 0; h < H; ++h) {
      double sum = 0.0;
      for (int t = 1 + n; t <= 2 * n; ++t) {
        CHECK(roles.tokens[std::size_t(t)] == roles.tokens[std::size_t(t - n)]);  // the same token, n back
        sum += a[(std::size_t(h) * T + t) * T + (t - n)];
      }
      CHECK(roles.duplicate[std::size_t(l) * H + h] == doctest::Approx(sum / n).epsilon(1e-6));
    }
  }
}
