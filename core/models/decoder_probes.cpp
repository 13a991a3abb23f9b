#include "decoder_probes.h"

#include <cmath>

#include "../rng.h"

namespace attnlab {

std::vector<std::int32_t> repeated_random_tokens(const DecoderSpec& c, int n, std::uint64_t seed) {
  const int eos = c.eos_token_id;
  Rng rng(seed);
  std::vector<std::int32_t> r;
  for (int i = 0; i < n; ++i) {
    // Uniform over the vocabulary without <|endoftext|>: V - 1 ids, those from eos on shifted past it.
    if (eos >= 0 && c.vocab_size > 1) {
      const int x = int(rng.below(std::uint32_t(c.vocab_size - 1)));
      r.push_back(x >= eos ? x + 1 : x);
    } else {
      r.push_back(int(rng.below(std::uint32_t(c.vocab_size))));
    }
  }
  std::vector<std::int32_t> out = {eos >= 0 ? eos : 0};
  out.insert(out.end(), r.begin(), r.end());
  out.insert(out.end(), r.begin(), r.end());
  return out;
}

namespace {

// -log softmax(z)[target], in double.
double next_token_loss(const std::vector<float>& z, int target) {
  double max = -INFINITY;
  for (float v : z) max = std::max(max, double(v));
  double sum = 0.0;
  for (float v : z) sum += std::exp(double(v) - max);
  return -(double(z[std::size_t(target)]) - max - std::log(sum));
}

}  // namespace

std::string head_roles(Decoder& model, Backend backend, int n, std::uint64_t seed, const HeadAblation& heads_off, HeadRoles& out) {
  out = HeadRoles{};
  const DecoderSpec& c = model.spec();
  if (n < 2) return "the repeated sequence needs at least 2 random tokens, got " + std::to_string(n);
  const int T = 1 + 2 * n;
  if (T > c.n_positions)
    return "1 + 2 x " + std::to_string(n) + " tokens: this model has position embeddings for " + std::to_string(c.n_positions);
  // Drawn from the ids a tokenizer writes (limit_vocabulary: not a padded vocabulary's last ids).
  DecoderSpec writable = c;
  writable.vocab_size = model.writable_vocabulary();
  out.tokens = repeated_random_tokens(writable, n, seed);
  Intervention off;
  off.heads_off = heads_off;
  model.forward(backend, out.tokens.data(), T, off);
  const int L = c.n_layer, H = c.n_head;
  out.layers = L, out.heads = H;
  out.previous.assign(std::size_t(L) * H, 0.0f);
  out.first.assign(std::size_t(L) * H, 0.0f);
  out.induction.assign(std::size_t(L) * H, 0.0f);
  out.duplicate.assign(std::size_t(L) * H, 0.0f);
  for (int l = 0; l < L; ++l) {
    const std::vector<float>& a = model.attention(l);  // [H, T, T]
    for (int h = 0; h < H; ++h) {
      auto at = [&](int t, int s) { return double(a[(std::size_t(h) * T + t) * T + s]); };
      double previous = 0.0, first = 0.0, induction = 0.0, duplicate = 0.0;
      for (int t = 1; t < T; ++t) previous += at(t, t - 1), first += at(t, 0);
      for (int t = 1 + n; t <= 2 * n; ++t) induction += at(t, t - n + 1), duplicate += at(t, t - n);
      out.previous[std::size_t(l) * H + h] = float(previous / (T - 1));
      out.first[std::size_t(l) * H + h] = float(first / (T - 1));
      out.induction[std::size_t(l) * H + h] = float(induction / n);
      out.duplicate[std::size_t(l) * H + h] = float(duplicate / n);
    }
  }
  // Predicting r[1..n-1]: from positions 1 .. n-1 in the first copy, 1+n .. 2n-1 in the second.
  double first_loss = 0.0, second_loss = 0.0;
  for (int i = 0; i + 1 < n; ++i) {
    first_loss += next_token_loss(model.logits(1 + i), out.tokens[std::size_t(2 + i)]);
    second_loss += next_token_loss(model.logits(1 + n + i), out.tokens[std::size_t(2 + n + i)]);
  }
  out.first_copy_loss = float(first_loss / (n - 1));
  out.second_copy_loss = float(second_loss / (n - 1));
  return {};
}

std::vector<std::vector<LensCell>> logit_lens(const Decoder& model) {
  std::vector<std::vector<LensCell>> out;
  if (!model.computed()) return out;
  const int L = model.spec().n_layer, n = model.pass_length();
  for (int l = 0; l <= L; ++l) {
    std::vector<LensCell> row;
    const RowMatrix& x = model.residual(l);
    for (int t = 0; t < n; ++t) {
      const std::vector<float> z = model.unembed(x.row(t).data());
      int best = 0;
      for (int v = 1; v < int(z.size()); ++v)
        if (z[std::size_t(v)] > z[std::size_t(best)]) best = v;
      double sum = 0.0;
      for (float v : z) sum += std::exp(double(v) - double(z[std::size_t(best)]));
      row.push_back({best, float(1.0 / sum)});
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace attnlab
