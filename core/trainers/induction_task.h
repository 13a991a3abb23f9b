// The Induction lab's data and settings (a lab past the course's notebooks: Olsson et al. 2022,
// "In-context learning and induction heads").
//
// repeat: T = context tokens. Position 0 is the start token (id 0); positions 1 .. T-1 are uniform
//         random ids in [1, V). In each sequence a segment of k tokens starting at position a is
//         repeated right after itself: tokens[a + k + i] = tokens[a + i], i = 0 .. k-1, with
//           k uniform in [k_min, (T - 1) / 2],  k_min = max(2, (T - 1) / 4),  a uniform in [1, T - 2k],
//         so the earlier copy lies k back, at an offset that changes from one sequence to the next:
//         only a head that matches content (an induction head, reading what a previous-token head
//         wrote) finds it. The repeat's targets are positions a + k + 1 .. a + 2k - 1 (its first token,
//         a + k, cannot be predicted: nothing says the repeat starts there); every other target is
//         "the rest".
// text:   character-level text: the vocabulary is the start token and the text's distinct characters
//         (Unicode code points, in code-point order); a sequence is the start token and T - 1
//         consecutive characters from a uniform place in the text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../rng.h"

namespace attnlab {

enum class InductionTaskKind : int { repeat = 0, text = 1 };

// The defaults are the lab's (web/labs/08_induction.js declares them for the page, the link and the CLI;
// tests/node/lab_tables.test.mjs holds these to them); docs/induction.md says how they were chosen.
struct InductionConfig {
  InductionTaskKind task = InductionTaskKind::repeat;
  int layers = 2;
  int heads = 2;
  int d_model = 32;
  int d_head = 16;
  bool mlp = false;         // a GELU MLP in every block (d_mlp = 4 d_model), else attention only
  bool layer_norm = false;  // pre-norm LayerNorm (ln1, ln2, ln_final), else none
  int vocab = 64;           // V for the repeat task (ids 0 .. V-1, 0 the start token)
  int context = 33;         // T = n_ctx: tokens per sequence, the start token included
  int batch = 32;
  double lr = 6e-3;
  std::uint32_t seed = 0;
  std::string text;         // the text task's text (UTF-8)

  int d_mlp() const { return 4 * d_model; }
};

// The text task's alphabet: code points in ascending order (id i + 1 is alphabet[i]; id 0 the start
// token), and the text as ids. "" or what is wrong with the text (not UTF-8, too long, too few
// characters for one sequence, too many distinct characters).
struct TextIds {
  std::vector<std::uint32_t> alphabet;
  std::vector<std::int32_t> ids;
};
std::string text_to_ids(const std::string& text, int context, TextIds& out);

// Limits of the settings (the lab's property table has the same ones: tests/node/lab_tables.test.mjs).
constexpr int kInductionMaxLayers = 4;
constexpr int kInductionMaxHeads = 16;
constexpr int kInductionMaxDModel = 512;
constexpr int kInductionMaxDHead = 128;
constexpr int kInductionMaxVocab = 1024;
constexpr int kInductionMinContext = 5;  // the start token and a repeat of two tokens
constexpr int kInductionMaxContext = 256;
constexpr int kInductionMaxBatch = 512;
constexpr int kInductionMaxTextCodePoints = 100000;
// A quarter of the WASM module's 2 GB address space, as every lab (alignment_task.h).
constexpr std::size_t kInductionMemoryBudget = std::size_t(512) << 20;
// The multiply-adds of one step (forward and backward) beyond which a step would take seconds on a
// student's laptop (~1 GFLOP/s of one WASM thread per 2e9 FLOPs = about 2 s a step): refused, naming
// the settings.
constexpr double kInductionMaxStepFlops = 4e9;

// "" or the first problem, naming the setting (in the JS names: dModel, dHead) and what is allowed;
// the settings are then checked together, for the memory and the work of a step.
std::string validate_induction_config(const InductionConfig& c);
// The vocabulary the model is built for: V (repeat) or 1 + the text's distinct characters (text).
int induction_vocab_size(const InductionConfig& c);
// An upper bound on the bytes a model of this config needs to train (parameters, gradients and Adam
// state per shard copy, a step's activations and their gradients).
double induction_training_bytes(const InductionConfig& c);
// The floating-point operations of one training step (forward and backward, about 3 forwards).
double induction_step_flops(const InductionConfig& c);

struct InductionBatch {
  int B = 0, T = 0;
  std::vector<std::int32_t> tokens;  // [B, T]
  // The repeat task's segment of each sequence: its copy's first position a + k, and k; -1 where the
  // sequence has none (the text task, and sequences the user gave).
  std::vector<std::int32_t> copy_start, segment;
  // Is target position t (1 .. T-1) of sequence b in the repeat (a + k + 1 .. a + 2k - 1)?
  bool repeat_target(int b, int t) const {
    const int start = copy_start[std::size_t(b)], k = segment[std::size_t(b)];
    return start >= 0 && t > start && t < start + k;
  }
};

// B sequences of the repeat task.
void sample_repeat_batch(const InductionConfig& c, Rng& rng, int B, InductionBatch& out);
// B windows of the text task's ids.
void sample_text_batch(const TextIds& text, int T, Rng& rng, int B, InductionBatch& out);
// Sequences the caller gives (--data), each of length T: no segments known.
void batch_of_sequences(const std::vector<std::int32_t>& tokens, int B, int T, InductionBatch& out);
// out = sequences [first, first + count) of batch.
void slice_induction_batch(const InductionBatch& batch, int first, int count, InductionBatch& out);

}  // namespace attnlab
