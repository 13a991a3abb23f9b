// The one writer (docs/style.md, point 7; transformers.js's generate()): a prompt, then one token at a
// time through any decoder's key/value cache (decoder.h), each drawn from the current logits as
// sampling.h says. Each step draws a token, then feeds it to the model (one cached pass), so every
// written token has its own attention row over the text before it and the logits of the token after it.
// The stop rules: an end of text (any of the settings' eos_ids, else the spec's eos_token_id; unless
// stop_at_eos is off), max_new_tokens, or a text that fills n_positions (the token drawn then is kept,
// but fed through no pass). Token k's draw takes the k-th uniform of Rng(seed), so a seed reproduces a
// run bit for bit, natively and in WASM.
//
// The CLI runs begin + next until done (generate()). The page's Writing lab steps through the same
// writer: Next token and Play are write_to(settings, shown + 1) (the worker); a moved setting keeps the
// tokens shown and forgets those written past them (resume), and the bars of any written step come from
// the logits it was drawn from (kept when settings.keep_logits). Other passes of the model between
// steps (head roles, the logit lens) are allowed: the writer puts its text back in the cache first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "../rng.h"
#include "decoder.h"
#include "sampling.h"

namespace attnlab {

struct WritingSettings {
  Sampling sampling;
  int max_new_tokens = 20;
  std::uint64_t seed = 0;
  bool stop_at_eos = true;
  // The ids that end the text (Llama 3's generation_config.json names three: <|end_of_text|>, <|eom_id|>,
  // <|eot_id|>; a chat template's turn end is one): empty, the spec's eos_token_id alone.
  std::vector<int> eos_ids;
  // Heads switched off in every pass the writer runs (checked against the model by begin and resume).
  HeadAblation heads_off;
  int top = 10;              // how many of the distribution's most likely tokens each step keeps
  bool keep_logits = false;  // keep each step's logits [V] (the page's bars; the CLI has no need)
};

struct WritingStep {
  int id = 0;                      // the token drawn
  float probability = 0.0f;        // its probability under the sampling distribution
  std::vector<TokenChance> top;    // the distribution it was drawn from, most likely first
  int position = 0;                // its position in the text
  std::vector<float> attention;    // its row as a query [L, H, position + 1]; empty when the text was full
  std::vector<float> logits;       // the logits it was drawn from [V] (keep_logits only)
};

class Writer {
 public:
  explicit Writer(Decoder& model) : model_(model) {}

  // "" or what is wrong (the settings, the prompt); runs the prompt's pass.
  std::string begin(Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings);
  // Goes on with `settings` (checked: "" or what is wrong): when their sampling or seed differ from the
  // writer's, the steps past the first `keep` are forgotten; steps past max_new_tokens are too. The
  // stop reason is then that of the steps kept.
  // Other heads switched off (settings.heads_off) change every pass: then nothing is kept, and the
  // prompt runs again.
  std::string resume(const WritingSettings& settings, int keep);
  // Writes one token: false (and nothing changes) once done().
  bool next();
  bool next(WritingStep& step);  // and a copy of the step in `step`
  // The same, the step written kept where steps() holds it (valid until the writer changes): nullptr
  // once done().
  const WritingStep* next_step();
  // resume(settings, count), then next() until `count` tokens are written or writing stops.
  std::string write_to(const WritingSettings& settings, int count);
  bool done() const { return !stop_.empty(); }
  // "eos", "max_new_tokens", "n_positions" (or "" while writing goes on).
  const std::string& stop_reason() const { return stop_; }
  // The logits [V] of the next token (the last pass's last row).
  const std::vector<float>& logits() const { return logits_; }
  int written() const { return int(steps_.size()); }
  const std::vector<WritingStep>& steps() const { return steps_; }
  const std::vector<std::int32_t>& prompt() const { return prompt_; }
  // The first step forgotten since the last call of this (written() when none was): a reader that keeps
  // copies of the steps drops its copies from there.
  int take_first_changed();

 private:
  void restart_rng();
  void update_stop();
  // The prompt and every step fed through a pass: what the model's cache holds between steps.
  std::vector<std::int32_t> fed_text() const;
  // Makes the model's cache hold fed_text() (a truncation and a step, or one pass), and logits_ the
  // logits after it.
  void restore_cache();
  void run_prompt();
  static Intervention off(const WritingSettings& settings);  // the settings' heads, for one pass

  Decoder& model_;
  Backend backend_ = Backend::scalar;
  WritingSettings settings_;
  Rng rng_;
  std::vector<std::int32_t> prompt_;
  std::vector<float> prompt_logits_, logits_;
  std::uint64_t last_pass_ = 0;  // the model's pass_count() after the writer's last pass
  std::vector<WritingStep> steps_;
  int first_changed_ = 0;
  std::string stop_ = "not begun";
};

struct Writing {
  std::vector<int> ids;  // the written tokens
  std::vector<WritingStep> steps;
  std::string stop_reason;
};

// begin + next until done: "" and the writing, or the error.
std::string generate(Decoder& model, Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings, Writing& out);

}  // namespace attnlab
