// The "Alignment" lab's data (course notebook 01): copy, reverse and pointer lookup.
//   copy / reverse: tokens x in [1, V) of length L; target x (copy) or x reversed (reverse).
//                   keys = values = x. Queries are the L output positions.
//   pointer:        M pairs, keys in [1, K], values in [K+1, K+Val]; one query key picked at a random
//                   pair; target is that pair's value. Vocab 1 + K + Val. One query position.
//                   The notebook draws keys WITH replacement, so a query key may occur several times
//                   with different values: no model can always be right (bayes_ceiling says how often
//                   the best guess can be). unique_keys draws a permutation instead.
#pragma once

#include <cstddef>

#include <cstdint>
#include <string>
#include <vector>

#include "../rng.h"

namespace attnlab {

enum class AlignmentTaskKind : int { copy = 0, reverse = 1, pointer = 2 };

struct AlignmentConfig {
  AlignmentTaskKind task = AlignmentTaskKind::copy;
  int vocab = 32;       // V, copy / reverse
  int length = 16;      // L, copy / reverse
  int pairs = 12;       // M, pointer
  int key_range = 12;   // K, pointer
  int value_range = 12; // Val, pointer
  bool unique_keys = false;
  int d_model = 32;
  int heads = 4;
  int batch = 128;
  double lr = 3e-3;
  std::uint32_t seed = 0;
  bool positional = true;  // ablation: false drops the input-position embeddings from keys and values

  bool pointer() const { return task == AlignmentTaskKind::pointer; }
  int vocab_size() const { return pointer() ? 1 + key_range + value_range : vocab; }
  int in_len() const { return pointer() ? pairs : length; }   // S
  int out_len() const { return pointer() ? 1 : length; }      // T
};

// "" or the first problem, naming the setting and the allowed values.
std::string validate_alignment_config(const AlignmentConfig& c);

// The memory a model of this config needs to train: parameters with their gradients and Adam state
// (one copy per shard), and the activations and gradients of a step of `batch` samples, or of an
// evaluation chunk of 128 if that is larger. An upper bound: per sample, 3 B*H*T*S floats (weights,
// their kernel copy, the scores' gradient), 12 per T*E and S*E (embeddings, projections, heads, their
// gradients) and 3 per T*V (logits and their gradient); against the heap a run really uses
// (tests/node/evaluation_memory.test.mjs) it is 1.2-2x.
double alignment_training_bytes(const AlignmentConfig& c);
// What a lab allows a model to take: a quarter of the WASM module's 2 GB address space, so a second
// model (an import being checked) and the page's own buffers still fit.
constexpr std::size_t kAlignmentMemoryBudget = std::size_t(512) << 20;
// Steps the notebook trains each task for: copy 200, reverse 250, pointer 350.
int default_steps(AlignmentTaskKind task);

struct AlignmentBatch {
  int B = 0, S = 0, T = 0;
  std::vector<std::int32_t> keys;     // [B, S]
  std::vector<std::int32_t> values;   // [B, S]
  std::vector<std::int32_t> targets;  // [B, T]
  std::vector<std::int32_t> query;    // [B] pointer only: the query key
};

void sample_alignment_batch(const AlignmentConfig& c, Rng& rng, int B, AlignmentBatch& out);

// out = samples [first, first + count) of batch.
void slice_alignment_batch(const AlignmentBatch& batch, int first, int count, AlignmentBatch& out);

// Pointer only: for each sample the best possible guess is the most frequent value among the pairs
// whose key equals the query; it is right with probability (that count) / (number of matching pairs).
// Returns the mean over the batch.
double pointer_bayes_ceiling(const AlignmentBatch& batch);

}  // namespace attnlab
