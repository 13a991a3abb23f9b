// GPT-2 writing: a prompt, then one token at a time through the key/value cache (Gpt2Model's passes),
// each drawn as gpt2_sampling.h says. Each step draws a token from the current logits, then feeds it to
// the model (one cached pass), so every written token has its own attention row over the text before it
// and the logits of the token after it. Writing stops at <|endoftext|> (config.json's eos_token_id), at
// max_new_tokens, or when the text fills n_positions. Play / Pause / Next token on the page are next()
// called by the worker; generate() is the loop, for the CLI and the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "../rng.h"
#include "gpt2.h"
#include "gpt2_sampling.h"

namespace attnlab {

struct WritingSettings {
  Sampling sampling;
  int max_new_tokens = 20;
  std::uint64_t seed = 0;
  bool stop_at_eos = true;
  int top = 10;  // how many of the distribution's most likely tokens each step keeps
};

struct WritingStep {
  int id = 0;                      // the token drawn
  float probability = 0.0f;        // its probability under the sampling distribution
  std::vector<TokenChance> top;    // the distribution it was drawn from, most likely first
  int position = 0;                // its position in the text
  std::vector<float> attention;    // its row as a query [L, H, position + 1]; empty when the text was full
};

class Gpt2Writer {
 public:
  explicit Gpt2Writer(Gpt2Model& model) : model_(model) {}

  // "" or what is wrong (the settings, the prompt); runs the prompt's pass.
  std::string begin(Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings);
  // Writes one token: false (and nothing changes) once done().
  bool next(WritingStep& step);
  bool done() const { return !stop_.empty(); }
  // "eos", "max_new_tokens", "n_positions" (or "" while writing goes on).
  const std::string& stop_reason() const { return stop_; }
  // The logits [V] of the next token (the last pass's last row).
  const std::vector<float>& logits() const { return logits_; }
  int written() const { return written_; }

 private:
  Gpt2Model& model_;
  Backend backend_ = Backend::scalar;
  WritingSettings settings_;
  Rng rng_;
  std::vector<float> logits_;
  int written_ = 0;
  std::string stop_ = "not begun";
};

struct Writing {
  std::vector<int> ids;  // the written tokens
  std::vector<WritingStep> steps;
  std::string stop_reason;
};

// begin + next until done: "" and the writing, or the error.
std::string generate(Gpt2Model& model, Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings, Writing& out);

}  // namespace attnlab
