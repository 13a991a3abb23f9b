#include "alignment_task.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "../validate.h"

namespace attnlab {

int default_steps(AlignmentTaskKind task) {
  switch (task) {
    case AlignmentTaskKind::copy: return 200;
    case AlignmentTaskKind::reverse: return 250;
    case AlignmentTaskKind::pointer: return 350;
  }
  return 200;
}

namespace {

// The settings checked together: each may be in range while their product is not.
std::string check_memory(const AlignmentConfig& c) {
  const double bytes = alignment_training_bytes(c);
  if (bytes <= kAlignmentMemoryBudget) return {};
  return "these settings need about " + megabytes(bytes) + " to train; the lab allows " + megabytes(kAlignmentMemoryBudget) +
         ": lower batch (" + std::to_string(c.batch) + ")" + (c.pointer() ? ", pairs (" + std::to_string(c.pairs) + ")"
                                                                          : ", length (" + std::to_string(c.length) + ")") +
         ", heads (" + std::to_string(c.heads) + ") or d_model (" + std::to_string(c.d_model) + ")";
}

}  // namespace

std::string validate_alignment_config(const AlignmentConfig& c) {
  std::string error = first_error({
      check_positive("d_model", c.d_model), check_at_most("d_model", c.d_model, 256),
      check_positive("heads", c.heads), check_at_most("heads", c.heads, 16),
      check_divisible("d_model", c.d_model, "heads", c.heads),
      check_positive("batch", c.batch), check_at_most("batch", c.batch, 1024)});
  if (!error.empty()) return error;
  if (!(c.lr > 0.0 && c.lr <= 1.0))
    return "lr must be a number in (0, 1], got " + std::to_string(c.lr);
  if (c.pointer()) {
    error = first_error({check_positive("pairs", c.pairs), check_at_most("pairs", c.pairs, 64),
                         check_positive("key_range", c.key_range), check_at_most("key_range", c.key_range, 64),
                         check_positive("value_range", c.value_range),
                         check_at_most("value_range", c.value_range, 64)});
    if (!error.empty()) return error;
    if (c.unique_keys && c.pairs > c.key_range)
      return "unique keys need pairs (" + std::to_string(c.pairs) + ") <= key_range (" +
             std::to_string(c.key_range) + ")";
    return check_memory(c);
  }
  error = first_error({check_at_most("length", c.length, 64), check_positive("length", c.length),
                       check_at_most("vocab", c.vocab, 256)});
  if (!error.empty()) return error;
  if (c.vocab < 2) return "vocab must be at least 2 (token 0 is reserved), got " + std::to_string(c.vocab);
  return check_memory(c);
}

double alignment_training_bytes(const AlignmentConfig& c) {
  const double T = c.out_len(), S = c.in_len(), E = c.d_model, H = c.heads, V = c.vocab_size();
  const double per_sample = 3 * H * T * S + 12 * T * E + 12 * S * E + 3 * T * V;  // floats
  const double samples = std::max(c.batch, 128);  // evaluate() runs chunks of 128
  const double parameters = V * E + (S + T) * E + 4 * E * E + 4 * E + E * V + V;
  const double shards = c.batch >= 2 ? 2 : 1;
  return 4 * (per_sample * samples + parameters * (2 * shards + 2));
}

void sample_alignment_batch(const AlignmentConfig& c, Rng& rng, int B, AlignmentBatch& out) {
  out.B = B;
  out.S = c.in_len();
  out.T = c.out_len();
  const int S = out.S, T = out.T;
  out.keys.resize(std::size_t(B) * S);
  out.values.resize(std::size_t(B) * S);
  out.targets.resize(std::size_t(B) * T);
  if (!c.pointer()) {
    out.query.clear();
    for (int b = 0; b < B; ++b) {
      std::int32_t* x = &out.keys[std::size_t(b) * S];
      for (int s = 0; s < S; ++s) x[s] = rng.randint(1, c.vocab);  // torch.randint(1, V)
      std::copy(x, x + S, &out.values[std::size_t(b) * S]);
      for (int t = 0; t < T; ++t)
        out.targets[std::size_t(b) * T + t] = c.task == AlignmentTaskKind::copy ? x[t] : x[S - 1 - t];
    }
    return;
  }
  out.query.resize(B);
  std::vector<std::int32_t> permutation(c.key_range);
  for (int b = 0; b < B; ++b) {
    std::int32_t* keys = &out.keys[std::size_t(b) * S];
    std::int32_t* values = &out.values[std::size_t(b) * S];
    if (c.unique_keys) {
      // Fisher-Yates over 1..K, first M of them.
      for (int i = 0; i < c.key_range; ++i) permutation[i] = i + 1;
      for (int i = c.key_range - 1; i > 0; --i) std::swap(permutation[i], permutation[rng.randint(0, i + 1)]);
      std::copy(permutation.begin(), permutation.begin() + S, keys);
    } else {
      for (int s = 0; s < S; ++s) keys[s] = rng.randint(1, c.key_range + 1);
    }
    for (int s = 0; s < S; ++s) values[s] = rng.randint(c.key_range + 1, c.key_range + c.value_range + 1);
    const int idx = rng.randint(0, S);
    out.query[b] = keys[idx];
    out.targets[b] = values[idx];
  }
}

void slice_alignment_batch(const AlignmentBatch& batch, int first, int count, AlignmentBatch& out) {
  const auto rows = [&](const std::vector<std::int32_t>& from, int per_sample, std::vector<std::int32_t>& to) {
    const auto begin = from.begin() + std::ptrdiff_t(first) * per_sample;
    to.assign(begin, begin + std::ptrdiff_t(count) * per_sample);
  };
  out.B = count;
  out.S = batch.S;
  out.T = batch.T;
  rows(batch.keys, batch.S, out.keys);
  rows(batch.values, batch.S, out.values);
  rows(batch.targets, batch.T, out.targets);
  if (batch.query.empty()) out.query.clear();
  else rows(batch.query, 1, out.query);
}

double pointer_bayes_ceiling(const AlignmentBatch& batch) {
  if (batch.query.empty()) return 1.0;
  double total = 0.0;
  for (int b = 0; b < batch.B; ++b) {
    std::map<std::int32_t, int> value_counts;
    int matches = 0, best = 0;
    for (int s = 0; s < batch.S; ++s) {
      if (batch.keys[std::size_t(b) * batch.S + s] != batch.query[b]) continue;
      ++matches;
      best = std::max(best, ++value_counts[batch.values[std::size_t(b) * batch.S + s]]);
    }
    total += matches ? double(best) / matches : 0.0;
  }
  return total / batch.B;
}

}  // namespace attnlab
