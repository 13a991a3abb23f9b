// The one writer (core/models/writer.h) as the page drives it, on the tiny GPT-2
// (tests/fixtures/gpt2_tiny/hub): written in pieces (Next token, Play: write_to with a growing count) it
// is generate()'s run bit for bit; a moved setting keeps the tokens shown and draws the next ones with the
// new settings (token k with the k-th uniform of Rng(seed)), as a hand-run loop of sampling.h does;
// max_new_tokens lowered then raised stops and goes on; another pass of the model between steps (head
// roles, the logit lens) does not change what it writes; the kept logits give each step's bars.
#include <fstream>
#include <iterator>

#include "models/checkpoint_loader.h"
#include "models/decoder_probes.h"
#include "models/gpt2.h"
#include "models/writer.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::string read_bytes(const std::string& path) { return read_fixture_bytes(path); }

std::unique_ptr<Gpt2Model> tiny_gpt2() {
  const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/gpt2_tiny/hub/";
  const std::string bytes = read_bytes(dir + "model.safetensors");
  std::unique_ptr<Gpt2Model> model;
  const std::string error = load_checkpoint_as("gpt2", read_bytes(dir + "config.json"), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               bytes.size(), "safetensors", model);
  REQUIRE_MESSAGE(error.empty(), error);
  return model;
}

const std::vector<std::int32_t> kPrompt = {84, 104, 101, 32, 113, 117};

WritingSettings sampled(std::uint64_t seed, double temperature = 0.9) {
  WritingSettings s;
  s.sampling = {temperature, 30, 0.95};
  s.max_new_tokens = 16;
  s.seed = seed;
  s.stop_at_eos = false;
  s.keep_logits = true;
  return s;
}

void expect_same_steps(const std::vector<WritingStep>& a, const std::vector<WritingStep>& b, std::size_t n) {
  REQUIRE(a.size() >= n);
  REQUIRE(b.size() >= n);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("step " << i);
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].probability == b[i].probability);
    CHECK(a[i].position == b[i].position);
    CHECK(a[i].attention == b[i].attention);
  }
}

}  // namespace

TEST_CASE("writer: written in pieces (Next token, Play) is generate()'s run bit for bit, on scalar and simd128") {
  auto model = tiny_gpt2();
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    INFO(backend_name(backend));
    const WritingSettings s = sampled(5);
    Writing whole;
    REQUIRE(generate(*model, backend, kPrompt.data(), int(kPrompt.size()), s, whole) == "");
    REQUIRE(whole.steps.size() == 16);
    Writer writer(*model);
    REQUIRE(writer.begin(backend, kPrompt.data(), int(kPrompt.size()), s) == "");
    for (int count : {1, 2, 3, 7, 7, 12, 16, 40}) {
      REQUIRE(writer.write_to(s, count) == "");
      CHECK(writer.written() == std::min(count, 16));
    }
    expect_same_steps(writer.steps(), whole.steps, 16);
    CHECK(writer.stop_reason() == "max_new_tokens");
    CHECK(writer.take_first_changed() == 0);  // every step is new to a reader
    CHECK(writer.take_first_changed() == 16);
  }
}

TEST_CASE("writer: a moved setting keeps the shown tokens and draws the next with the new settings (token k: the k-th uniform)") {
  auto model = tiny_gpt2();
  const Backend backend = Backend::simd128;
  const WritingSettings a = sampled(5), b = sampled(9, 1.4);
  Writer writer(*model);
  REQUIRE(writer.begin(backend, kPrompt.data(), int(kPrompt.size()), a) == "");
  REQUIRE(writer.write_to(a, 10) == "");
  const std::vector<WritingStep> before = writer.steps();
  writer.take_first_changed();
  // 4 shown: the 6 written past them are forgotten; none is written until asked.
  REQUIRE(writer.write_to(b, 4) == "");
  CHECK(writer.written() == 4);
  CHECK(writer.take_first_changed() == 4);
  expect_same_steps(writer.steps(), before, 4);
  REQUIRE(writer.write_to(b, 10) == "");
  // By hand: the text so far through the model, then each token k drawn with b from the k-th uniform.
  std::vector<std::int32_t> text = kPrompt;
  for (int k = 0; k < 4; ++k) text.push_back(before[std::size_t(k)].id);
  model->forward(backend, text.data(), int(text.size()));
  std::vector<float> z = model->logits(int(text.size()) - 1);
  for (int k = 4; k < 10; ++k) {
    const std::vector<double> p = next_token_distribution(z.data(), int(z.size()), b.sampling);
    Rng rng(b.seed);
    for (int i = 0; i < k; ++i) rng.uniform();
    const int id = draw_token(p, z.data(), b.sampling, rng);
    INFO("token " << k);
    CHECK(writer.steps()[std::size_t(k)].id == id);
    CHECK(writer.steps()[std::size_t(k)].probability == doctest::Approx(p[std::size_t(id)]).epsilon(1e-6));
    model->step(backend, id);
    z = model->logits(0);
  }
  // The same settings again change nothing, whatever is shown.
  const std::vector<WritingStep> after = writer.steps();
  REQUIRE(writer.write_to(b, 2) == "");
  CHECK(writer.written() == 10);
  expect_same_steps(writer.steps(), after, 10);
}

TEST_CASE("writer: max_new_tokens lowered stops the writing there, raised lets it go on as it would have") {
  auto model = tiny_gpt2();
  WritingSettings s = sampled(3);
  Writing whole;
  REQUIRE(generate(*model, Backend::scalar, kPrompt.data(), int(kPrompt.size()), s, whole) == "");
  Writer writer(*model);
  REQUIRE(writer.begin(Backend::scalar, kPrompt.data(), int(kPrompt.size()), s) == "");
  REQUIRE(writer.write_to(s, 9) == "");
  s.max_new_tokens = 5;
  REQUIRE(writer.write_to(s, 9) == "");
  CHECK(writer.written() == 5);
  CHECK(writer.stop_reason() == "max_new_tokens");
  CHECK_FALSE(writer.next());
  s.max_new_tokens = 16;
  REQUIRE(writer.write_to(s, 16) == "");
  CHECK(writer.stop_reason() == "max_new_tokens");
  expect_same_steps(writer.steps(), whole.steps, 16);
}

TEST_CASE("writer: other passes between steps (head roles, a pass over the text) do not change what it writes") {
  auto model = tiny_gpt2();
  const WritingSettings s = sampled(11);
  Writing whole;
  REQUIRE(generate(*model, Backend::scalar, kPrompt.data(), int(kPrompt.size()), s, whole) == "");
  Writer writer(*model);
  REQUIRE(writer.begin(Backend::scalar, kPrompt.data(), int(kPrompt.size()), s) == "");
  REQUIRE(writer.write_to(s, 5) == "");
  HeadRoles roles;
  REQUIRE(head_roles(*model, Backend::scalar, 8, 7, {}, roles) == "");  // the model's cache is the probe's now
  REQUIRE(writer.write_to(s, 9) == "");
  std::vector<std::int32_t> text = kPrompt;
  for (const WritingStep& step : writer.steps()) text.push_back(step.id);
  model->forward(Backend::scalar, text.data(), int(text.size()));  // the logit lens's pass over the text shown
  REQUIRE(writer.write_to(s, 16) == "");
  CHECK(writer.written() == 16);
  for (std::size_t i = 0; i < 16; ++i) {
    INFO("step " << i);
    CHECK(writer.steps()[i].id == whole.steps[i].id);
    // Past an interruption the cache is rebuilt by one pass, whose sums may round otherwise.
    CHECK(writer.steps()[i].probability == doctest::Approx(whole.steps[i].probability).epsilon(1e-5));
  }
}

TEST_CASE("writer: each step keeps the logits it was drawn from; its top tokens are their distribution's; bad settings are named") {
  auto model = tiny_gpt2();
  const WritingSettings s = sampled(2);
  Writer writer(*model);
  CHECK(writer.resume(s, 3) == "begin writing first");
  REQUIRE(writer.begin(Backend::scalar, kPrompt.data(), int(kPrompt.size()), s) == "");
  REQUIRE(writer.write_to(s, 6) == "");
  for (const WritingStep& step : writer.steps()) {
    REQUIRE(int(step.logits.size()) == model->spec().vocab_size);
    const std::vector<double> p = next_token_distribution(step.logits.data(), int(step.logits.size()), s.sampling);
    const std::vector<TokenChance> top = top_tokens(p, step.logits.data(), s.top);
    REQUIRE(top.size() == step.top.size());
    for (std::size_t i = 0; i < top.size(); ++i) CHECK(top[i].id == step.top[i].id);
    CHECK(float(p[std::size_t(step.id)]) == step.probability);
  }
  WritingSettings bad = s;
  bad.sampling.top_p = 0;
  CHECK(writer.write_to(bad, 6) == "top-p must be in (0, 1], got 0.000000");
  CHECK(writer.written() == 6);  // nothing changed
  bad = s;
  bad.max_new_tokens = -1;
  CHECK(writer.write_to(bad, 6) == "max-new-tokens must be 0 or more, got -1");
}

TEST_CASE("writer: without kept logits, a moved setting runs the last kept token's pass again: the same bits as with them") {
  auto model = tiny_gpt2();
  WritingSettings kept = sampled(5), lean = sampled(5);
  lean.keep_logits = false;
  WritingSettings moved = sampled(8, 1.3);
  Writer a(*model);
  REQUIRE(a.begin(Backend::simd128, kPrompt.data(), int(kPrompt.size()), kept) == "");
  REQUIRE(a.write_to(kept, 10) == "");
  REQUIRE(a.write_to(moved, 4) == "");
  REQUIRE(a.write_to(moved, 12) == "");
  const std::vector<WritingStep> with_logits = a.steps();
  Writer b(*model);
  REQUIRE(b.begin(Backend::simd128, kPrompt.data(), int(kPrompt.size()), lean) == "");
  REQUIRE(b.write_to(lean, 10) == "");
  moved.keep_logits = false;
  REQUIRE(b.write_to(moved, 4) == "");  // the cache holds 10 more tokens: back to 4, its last one's pass again
  REQUIRE(b.write_to(moved, 12) == "");
  expect_same_steps(b.steps(), with_logits, 12);
  CHECK(b.steps()[0].logits.empty());
}
