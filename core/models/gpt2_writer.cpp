#include "gpt2_writer.h"

namespace attnlab {

std::string Gpt2Writer::begin(Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings) {
  std::string error = check_sampling(settings.sampling);
  if (!error.empty()) return error;
  if (settings.max_new_tokens < 0) return "max-new-tokens must be 0 or more, got " + std::to_string(settings.max_new_tokens);
  if (settings.top < 0) return "top must be 0 or more, got " + std::to_string(settings.top);
  error = model_.check_prompt(ids, T);
  if (!error.empty()) return error;
  backend_ = backend;
  settings_ = settings;
  rng_ = Rng(settings.seed);
  written_ = 0;
  model_.forward(backend, ids, T);
  logits_ = model_.logits(T - 1);
  stop_.clear();
  if (settings.max_new_tokens == 0) stop_ = "max_new_tokens";
  return {};
}

bool Gpt2Writer::next(WritingStep& step) {
  if (done()) return false;
  const Gpt2Config& c = model_.config();
  const std::vector<double> p = next_token_distribution(logits_.data(), c.vocab_size, settings_.sampling);
  step = WritingStep{};
  step.id = draw_token(p, logits_.data(), settings_.sampling, rng_);
  step.probability = float(p[std::size_t(step.id)]);
  step.top = top_tokens(p, logits_.data(), settings_.top);
  step.position = model_.cached();
  ++written_;
  // Fed back (its row, and the next logits) while the text has room.
  if (model_.check_step(step.id).empty()) {
    model_.step(backend_, step.id);
    const int S = model_.cached(), H = c.n_head;
    for (int l = 0; l < c.n_layer; ++l) {
      const std::vector<float>& a = model_.attention(l);  // [H, 1, S]
      step.attention.insert(step.attention.end(), a.begin(), a.begin() + std::size_t(H) * S);
    }
    logits_ = model_.logits(0);
  }
  if (settings_.stop_at_eos && step.id == c.eos_token_id) stop_ = "eos";
  else if (written_ >= settings_.max_new_tokens) stop_ = "max_new_tokens";
  else if (step.attention.empty() || model_.cached() >= c.n_positions) stop_ = "n_positions";
  return true;
}

std::string generate(Gpt2Model& model, Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings, Writing& out) {
  out = Writing{};
  Gpt2Writer writer(model);
  std::string error = writer.begin(backend, ids, T, settings);
  if (!error.empty()) return error;
  WritingStep step;
  while (writer.next(step)) {
    out.ids.push_back(step.id);
    out.steps.push_back(std::move(step));
  }
  out.stop_reason = writer.stop_reason();
  return {};
}

}  // namespace attnlab
