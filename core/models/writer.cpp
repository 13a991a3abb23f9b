#include "writer.h"

#include <algorithm>

namespace attnlab {

namespace {

std::string check_writing(const WritingSettings& s) {
  std::string error = check_sampling(s.sampling);
  if (!error.empty()) return error;
  if (s.max_new_tokens < 0) return "max-new-tokens must be 0 or more, got " + std::to_string(s.max_new_tokens);
  if (s.top < 0) return "top must be 0 or more, got " + std::to_string(s.top);
  if (s.eos_ids.size() > 64) return "at most 64 end-of-text ids, got " + std::to_string(s.eos_ids.size());
  for (int id : s.eos_ids)
    if (id < 0) return "an end-of-text id must be 0 or more, got " + std::to_string(id);
  return {};
}

bool same_heads(const HeadAblation& x, const HeadAblation& y) {
  const std::vector<LayerHead>& a = x.heads();
  const std::vector<LayerHead>& b = y.heads();
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const LayerHead& x, const LayerHead& y) {
           return x.layer == y.layer && x.head == y.head;
         });
}

bool same_draws(const WritingSettings& a, const WritingSettings& b) {
  return a.sampling.temperature == b.sampling.temperature && a.sampling.top_k == b.sampling.top_k && a.sampling.top_p == b.sampling.top_p &&
         a.seed == b.seed;
}

}  // namespace

std::string Writer::begin(Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings) {
  std::string error = check_writing(settings);
  if (!error.empty()) return error;
  error = model_.check_prompt(ids, T);
  if (!error.empty()) return error;
  error = model_.check_intervention(off(settings), T);
  if (!error.empty()) return error;
  backend_ = backend;
  settings_ = settings;
  prompt_.assign(ids, ids + T);
  steps_.clear();
  first_changed_ = 0;
  restart_rng();
  run_prompt();
  prompt_logits_ = logits_ = model_.logits(T - 1);
  stop_.clear();
  update_stop();
  return {};
}

void Writer::restart_rng() {
  // Token k's draw is the k-th uniform of Rng(seed): the steps kept have taken theirs.
  rng_ = Rng(settings_.seed);
  if (settings_.sampling.temperature != 0)
    for (std::size_t k = 0; k < steps_.size(); ++k) rng_.uniform();
}

void Writer::update_stop() {
  stop_.clear();
  if (settings_.max_new_tokens == 0 && steps_.empty()) stop_ = "max_new_tokens";
  if (steps_.empty()) return;
  const WritingStep& last = steps_.back();
  const std::vector<int>& ends = settings_.eos_ids;
  const bool end = ends.empty() ? last.id == model_.spec().eos_token_id : std::find(ends.begin(), ends.end(), last.id) != ends.end();
  if (settings_.stop_at_eos && end) stop_ = "eos";
  else if (written() >= settings_.max_new_tokens) stop_ = "max_new_tokens";
  else if (last.attention.empty() || int(prompt_.size()) + written() >= model_.spec().n_positions) stop_ = "n_positions";
}

std::string Writer::resume(const WritingSettings& settings, int keep) {
  if (stop_ == "not begun") return "begin writing first";
  std::string error = check_writing(settings);
  if (error.empty()) error = model_.check_intervention(off(settings), int(prompt_.size()));
  if (!error.empty()) return error;
  int kept = written();
  if (!same_draws(settings, settings_)) kept = std::min(kept, std::max(0, keep));
  kept = std::min(kept, settings.max_new_tokens);
  const bool heads_changed = !same_heads(settings.heads_off, settings_.heads_off);
  const bool keep_logits = settings_.keep_logits;  // what begin() asked for: every step has them or none
  settings_ = settings;
  settings_.keep_logits = keep_logits;
  if (heads_changed) {
    // Other heads are off: every pass changes, the prompt's first.
    run_prompt();
    prompt_logits_ = logits_ = model_.logits(int(prompt_.size()) - 1);
    kept = 0;
  }
  if (kept < written()) {
    // The next token's logits: those the first forgotten step was drawn from (kept with it, or the
    // pass of the last step kept run again).
    std::vector<float> drawn_from = std::move(steps_[std::size_t(kept)].logits);
    steps_.resize(std::size_t(kept));
    first_changed_ = std::min(first_changed_, kept);
    if (kept == 0) logits_ = prompt_logits_;
    else if (!drawn_from.empty()) logits_ = std::move(drawn_from);
    else restore_cache();
  }
  restart_rng();
  update_stop();
  return {};
}

std::vector<std::int32_t> Writer::fed_text() const {
  std::vector<std::int32_t> text = prompt_;
  for (const WritingStep& s : steps_)
    if (!s.attention.empty()) text.push_back(s.id);
  return text;
}

Intervention Writer::off(const WritingSettings& settings) {
  Intervention intervention;
  intervention.heads_off = settings.heads_off;
  return intervention;
}

void Writer::run_prompt() {
  model_.forward(backend_, prompt_.data(), int(prompt_.size()), off(settings_));
  last_pass_ = model_.pass_count();
}

void Writer::restore_cache() {
  const std::vector<std::int32_t> text = fed_text();
  const std::vector<std::int32_t>& held = model_.tokens();
  // The cache is the writer's own when no other pass ran since its last (another pass may have run the
  // same tokens with other heads off: then it is not).
  const bool ours = model_.computed() && model_.pass_count() == last_pass_;
  const bool prefix = ours && held.size() >= text.size() && std::equal(text.begin(), text.end(), held.begin());
  if (prefix && held.size() > text.size()) {
    // One token back and through the cache again: its pass gives the logits after it, as it did.
    model_.truncate(int(text.size()) - 1);
    model_.step(backend_, text.back(), off(settings_));
  } else if (!prefix) {
    model_.forward(backend_, text.data(), int(text.size()), off(settings_));
  }
  last_pass_ = model_.pass_count();
  logits_ = model_.logits(model_.pass_length() - 1);
}

bool Writer::next() { return next_step() != nullptr; }

bool Writer::next(WritingStep& step) {
  const WritingStep* written_now = next_step();
  if (written_now) step = *written_now;
  return written_now != nullptr;
}

const WritingStep* Writer::next_step() {
  if (done()) return nullptr;
  const DecoderSpec& c = model_.spec();
  const std::vector<double> p = next_token_distribution(logits_.data(), c.vocab_size, settings_.sampling);
  WritingStep step;
  step.id = draw_token(p, logits_.data(), settings_.sampling, rng_);
  step.probability = float(p[std::size_t(step.id)]);
  step.top = top_tokens(p, logits_.data(), settings_.top);
  step.position = int(prompt_.size()) + written();
  if (settings_.keep_logits) step.logits = logits_;
  // Fed back (its row, and the next logits) while the text has room.
  if (step.position < c.n_positions) {
    // Another pass ran between steps (the head roles, the logit lens): the writer's text back first.
    if (model_.pass_count() != last_pass_ || model_.tokens() != fed_text()) restore_cache();
    model_.step(backend_, step.id, off(settings_));
    last_pass_ = model_.pass_count();
    const int S = model_.cached(), H = c.n_head;
    const std::size_t row = std::size_t(H) * S;
    step.attention.reserve(std::size_t(c.n_layer) * row);
    for (int l = 0; l < c.n_layer; ++l) {  // [H, 1, S] each: from pointers, one memcpy (no zeros first)
      const float* a = model_.attention(l).data();
      step.attention.insert(step.attention.end(), a, a + row);
    }
    logits_ = model_.logits(0);
  }
  // Moved, not copied: a step's attention rows are L x H x its position floats (SmolLM2-135M's shape at
  // 160 tokens: 170 KB), and copying them was 2% of a written token at two threads.
  steps_.push_back(std::move(step));
  update_stop();
  return &steps_.back();
}

std::string Writer::write_to(const WritingSettings& settings, int count) {
  std::string error = resume(settings, count);
  if (!error.empty()) return error;
  while (written() < count && next()) {
  }
  return {};
}

int Writer::take_first_changed() {
  const int first = std::min(first_changed_, written());
  first_changed_ = written();
  return first;
}

std::string generate(Decoder& model, Backend backend, const std::int32_t* ids, int T, const WritingSettings& settings, Writing& out) {
  out = Writing{};
  Writer writer(model);
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
