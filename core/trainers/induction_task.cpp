#include "induction_task.h"

#include <algorithm>
#include <cstdio>

#include "../io/utf8.h"
#include "../validate.h"

namespace attnlab {

namespace {

// Well-formed UTF-8 (is_utf8 checked it) -> code points.
std::vector<std::uint32_t> code_points(const std::string& text) {
  std::vector<std::uint32_t> out;
  const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const std::uint8_t c = s[i];
    const int extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    std::uint32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1Fu) : extra == 2 ? (c & 0x0Fu) : (c & 0x07u);
    for (int k = 1; k <= extra; ++k) cp = (cp << 6) | (s[i + std::size_t(k)] & 0x3Fu);
    out.push_back(cp);
    i += std::size_t(extra) + 1;
  }
  return out;
}

// The settings checked together: each may be in range while their product is not.
std::string check_budgets(const InductionConfig& c) {
  const std::string settings = ": lower batch (" + std::to_string(c.batch) + "), context (" + std::to_string(c.context) +
                               "), layers (" + std::to_string(c.layers) + "), heads (" + std::to_string(c.heads) +
                               ") or dModel (" + std::to_string(c.d_model) + ")";
  const double bytes = induction_training_bytes(c);
  if (bytes > kInductionMemoryBudget)
    return "these settings need about " + megabytes(bytes) + " to train; the lab allows " +
           megabytes(kInductionMemoryBudget) + settings;
  const double flops = induction_step_flops(c);
  if (flops > kInductionMaxStepFlops) {
    char text[96];
    std::snprintf(text, sizeof text, "a training step of these settings takes %.1f GFLOP; the lab allows %.0f",
                  flops / 1e9, kInductionMaxStepFlops / 1e9);
    return text + settings;
  }
  return {};
}

}  // namespace

std::string text_to_ids(const std::string& text, int context, TextIds& out) {
  if (!is_utf8(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()))
    return "the text is not UTF-8 text";
  // Counted in bytes first, so that a huge text is refused before it is decoded.
  if (text.size() > std::size_t(4) * kInductionMaxTextCodePoints)
    return "the text has " + std::to_string(text.size()) + " bytes; the lab reads at most " +
           std::to_string(kInductionMaxTextCodePoints) + " characters";
  const std::vector<std::uint32_t> cps = code_points(text);
  if (cps.size() > std::size_t(kInductionMaxTextCodePoints))
    return "the text has " + std::to_string(cps.size()) + " characters; the lab reads at most " +
           std::to_string(kInductionMaxTextCodePoints);
  if (cps.size() < std::size_t(context - 1))
    return "the text has " + std::to_string(cps.size()) + " characters; a sequence of context " +
           std::to_string(context) + " needs at least " + std::to_string(context - 1);
  out.alphabet = cps;
  std::sort(out.alphabet.begin(), out.alphabet.end());
  out.alphabet.erase(std::unique(out.alphabet.begin(), out.alphabet.end()), out.alphabet.end());
  if (out.alphabet.size() >= std::size_t(kInductionMaxVocab))
    return "the text has " + std::to_string(out.alphabet.size()) + " different characters; the lab takes at most " +
           std::to_string(kInductionMaxVocab - 1);
  out.ids.resize(cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i)
    out.ids[i] = std::int32_t(std::lower_bound(out.alphabet.begin(), out.alphabet.end(), cps[i]) - out.alphabet.begin()) + 1;
  return {};
}

std::string validate_induction_config(const InductionConfig& c) {
  std::string error = first_error({
      check_positive("layers", c.layers), check_at_most("layers", c.layers, kInductionMaxLayers),
      check_positive("heads", c.heads), check_at_most("heads", c.heads, kInductionMaxHeads),
      check_positive("dModel", c.d_model), check_at_most("dModel", c.d_model, kInductionMaxDModel),
      check_positive("dHead", c.d_head), check_at_most("dHead", c.d_head, kInductionMaxDHead),
      check_at_most("context", c.context, kInductionMaxContext),
      check_positive("batch", c.batch), check_at_most("batch", c.batch, kInductionMaxBatch)});
  if (!error.empty()) return error;
  if (c.context < kInductionMinContext)
    return "context must be at least " + std::to_string(kInductionMinContext) +
           " (the start token and room for a repeated segment), got " + std::to_string(c.context);
  if (!(c.lr > 0.0 && c.lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(c.lr);
  if (c.task == InductionTaskKind::repeat) {
    if (c.vocab < 3 || c.vocab > kInductionMaxVocab)
      return "vocab must be in [3, " + std::to_string(kInductionMaxVocab) + "] (id 0 is the start token), got " +
             std::to_string(c.vocab);
  } else {
    TextIds ids;
    error = text_to_ids(c.text, c.context, ids);
    if (!error.empty()) return error;
  }
  return check_budgets(c);
}

int induction_vocab_size(const InductionConfig& c) {
  if (c.task == InductionTaskKind::repeat) return c.vocab;
  TextIds ids;
  return text_to_ids(c.text, c.context, ids).empty() ? 1 + int(ids.alphabet.size()) : 0;
}

double induction_training_bytes(const InductionConfig& c) {
  const double T = c.context, E = c.d_model, H = c.heads, HD = double(c.heads) * c.d_head, F = c.d_mlp(),
               L = c.layers;
  const double V = c.task == InductionTaskKind::repeat ? c.vocab : kInductionMaxVocab;  // a bound before the text is read
  const double per_layer = 4 * E * HD + 3 * HD + E + (c.layer_norm ? 4 * E : 0) + (c.mlp ? 2 * E * F + F + E : 0);
  const double parameters = V * E + T * E + L * per_layer + (c.layer_norm ? 2 * E : 0) + E * V + V;
  // Per sequence: each layer's weights, their recomputed copy and the scores' gradient (3 H T^2), its
  // inputs, projections, heads and their gradients (16 T E + 12 T HD), the MLP's (6 T F); the logits
  // and their gradient, the residual stream.
  const double per_sequence = L * (3 * H * T * T + 16 * T * E + 12 * T * HD + (c.mlp ? 6 * T * F : 0)) + 3 * T * V + 4 * T * E;
  const double sequences = std::max(c.batch, 64);  // evaluations run chunks of 64
  const double shards = c.batch >= 2 ? 2 : 1;
  // Each shard's copy: the parameters, their gradients, the attention's packed projections and theirs;
  // Adam's two moments on copy 0.
  return 4 * (per_sequence * sequences + parameters * (4 * shards + 2));
}

double induction_step_flops(const InductionConfig& c) {
  const double T = c.context, E = c.d_model, HD = double(c.heads) * c.d_head, F = c.d_mlp();
  const double V = c.task == InductionTaskKind::repeat ? c.vocab : kInductionMaxVocab;
  // Per token: the q, k, v and output projections, the scores and the weighted sum over T keys, the MLP.
  const double per_token_layer = 2 * E * 3 * HD + 2 * HD * E + 2 * 2 * T * HD + (c.mlp ? 2 * 2 * E * F : 0);
  const double forward = double(c.batch) * T * (c.layers * per_token_layer + 2 * E * V);
  return 3 * forward;
}

void sample_repeat_batch(const InductionConfig& c, Rng& rng, int B, InductionBatch& out) {
  const int T = c.context;
  out.B = B;
  out.T = T;
  out.tokens.resize(std::size_t(B) * T);
  out.copy_start.resize(std::size_t(B));
  out.segment.resize(std::size_t(B));
  const int k_max = (T - 1) / 2, k_min = std::min(k_max, std::max(2, (T - 1) / 4));
  for (int b = 0; b < B; ++b) {
    std::int32_t* x = &out.tokens[std::size_t(b) * T];
    x[0] = 0;
    for (int t = 1; t < T; ++t) x[t] = rng.randint(1, c.vocab);
    const int k = rng.randint(k_min, k_max + 1);
    const int a = rng.randint(1, T - 2 * k + 1);
    for (int i = 0; i < k; ++i) x[a + k + i] = x[a + i];
    out.copy_start[std::size_t(b)] = a + k;
    out.segment[std::size_t(b)] = k;
  }
}

void sample_text_batch(const TextIds& text, int T, Rng& rng, int B, InductionBatch& out) {
  out.B = B;
  out.T = T;
  out.tokens.resize(std::size_t(B) * T);
  out.copy_start.assign(std::size_t(B), -1);
  out.segment.assign(std::size_t(B), 0);
  const int places = int(text.ids.size()) - (T - 1) + 1;
  for (int b = 0; b < B; ++b) {
    std::int32_t* x = &out.tokens[std::size_t(b) * T];
    x[0] = 0;
    const int from = rng.randint(0, places);
    std::copy_n(&text.ids[std::size_t(from)], T - 1, x + 1);
  }
}

void batch_of_sequences(const std::vector<std::int32_t>& tokens, int B, int T, InductionBatch& out) {
  out.B = B;
  out.T = T;
  out.tokens.assign(tokens.begin(), tokens.begin() + std::ptrdiff_t(B) * T);
  out.copy_start.assign(std::size_t(B), -1);
  out.segment.assign(std::size_t(B), 0);
}

void slice_induction_batch(const InductionBatch& batch, int first, int count, InductionBatch& out) {
  const std::size_t T = std::size_t(batch.T);
  out.B = count;
  out.T = batch.T;
  out.tokens.assign(batch.tokens.begin() + std::ptrdiff_t(first * T), batch.tokens.begin() + std::ptrdiff_t((first + count) * T));
  out.copy_start.assign(batch.copy_start.begin() + first, batch.copy_start.begin() + first + count);
  out.segment.assign(batch.segment.begin() + first, batch.segment.begin() + first + count);
}

}  // namespace attnlab
