// Circuits on any decoder (issue 44): direct logit attribution and activation patching, as
// TransformerLens computes them (ActivationCache.decompose_resid / stack_head_results + apply_ln_to_stack;
// patching.py's get_act_patch_*), on the model as its checkpoint holds it (no folded norms). The metric
// of both is the logit difference at the last position, logit(answer) - logit(wrong).
//
// Attribution: the last position's final residual x is a sum of parts, each written into the residual
// stream by one component: the token embedding (+ the position embedding), each head's z_h W_O[h],
// each layer's output-projection bias, each MLP's output. The final norm is linear once its scale is
// fixed, so with the scale of the whole x from the same run (ln_final.hook_scale) and d = W_U[answer] -
// W_U[wrong]:
//   part(c) = (centre(c) / scale) . (w * d)        centre: c - mean(c) for LayerNorm, c for RMSNorm
//   constant = b . d (+ b_U[answer] - b_U[wrong])  (the LayerNorm's bias; 0 for RMSNorm; the unembedding's
//                                                  bias where the model has one, TransformerLens's b_U)
// (no final norm: scale 1 and w 1).
// and the parts and the constant add up to the model's own logit difference.
//
// Patching: the corrupted prompt runs again with one activation taken from the clean run (a site of
// intervention.h at one layer and one position or one head), and each cell is normalised,
//   (patched - corrupted) / (clean - corrupted),
// 1 where the patched activation alone carries the clean answer, 0 where it carries none of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "activation_cache.h"
#include "decoder.h"
#include "intervention.h"

namespace attnlab {

struct LogitAttribution {
  int layers = 0, heads = 0;
  double embed = 0.0;             // hook_embed
  double pos_embed = 0.0;         // hook_pos_embed (learned positions; 0 for rotary)
  std::vector<double> head;       // [L, H]: z_h W_O[h]
  std::vector<double> attn_bias;  // [L]: b_O (0 without one)
  std::vector<double> mlp;        // [L]: hook_mlp_out
  double constant = 0.0;          // the final norm's bias . d
  double total = 0.0;             // every part and the constant
  double logit_diff = 0.0;        // the model's own logit(answer) - logit(wrong)
};

// "" or why two token ids cannot be the metric's answers (outside the writable vocabulary, the same id).
std::string check_answers(const Decoder& model, int answer, int wrong);

// The prompt's pass (the model's last pass is then it, its cache in `cache` when given) and its
// attribution. "" or what is wrong with the prompt or the answers.
std::string attribute_logits(Decoder& model, Backend backend, const std::vector<std::int32_t>& ids, int answer, int wrong,
                             LogitAttribution& out, ActivationCache* cache = nullptr);

struct PatchingGrid {
  PatchSite site = PatchSite::resid_pre;
  int rows = 0, cols = 0;      // [L, T] by position (resid_pre, attn_out, mlp_out) or [L, H] by head (z, pattern)
  std::vector<double> values;  // normalised, row-major
};

struct ActivationPatching {
  double clean_diff = 0.0, corrupt_diff = 0.0;
  std::vector<PatchingGrid> grids;  // in the order asked
};

// "" or why `site` is not in this model (mlp_out in an attention-only one).
std::string check_patch_site(const Decoder& model, PatchSite site);
// "" or why the pair cannot be patched (a prompt the model refuses, or different lengths).
std::string check_patching_pair(const Decoder& model, const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupt);

// Patching one grid row at a time (the page's worker runs a row, then reads its messages, so Stop
// answers within a row): begin() runs the clean prompt (its cache kept) and the corrupted one, row()
// one layer of one site, a cell a rerun of the corrupted pass from the patched layer and row on
// (Decoder::rerun: a patch at layer l, position p changes nothing before either). A row's cells run
// as batches (Decoder::rerun with several cells, kBatchBytes of rows and keys at most), so each weight
// is read once a batch, and the last layer runs only each cell's last row (the metric's). On
// gpt2-small over 16 tokens a position grid costs about a fifth of its cells' whole passes, a head
// grid about two fifths (docs/benchmarks.md).
class ActivationPatcher {
 public:
  // "" or what is wrong (the pair, the answers, or clean and corrupted giving the same difference:
  // nothing to normalise by).
  std::string begin(Decoder& model, Backend backend, const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupt,
                    int answer, int wrong);
  double clean_diff() const { return clean_diff_; }
  double corrupt_diff() const { return corrupt_diff_; }
  int tokens() const { return int(corrupt_.size()); }
  // The clean run's activations, under their hook names (the export's cache).
  const ActivationCache& clean_cache() const { return clean_; }
  // Layer `layer`'s cells of `site`, normalised: [T] by position, or [H] by head (every position of one
  // head, as patching.py's *_all_pos). begin() first; the layer in range.
  // The model's last pass is afterwards the corrupted prompt's.
  std::vector<double> row(PatchSite site, int layer);

 private:
  static constexpr double kBatchBytes = 32.0 * 1024 * 1024;
  int cells_per_batch(PatchSite site, int layer) const;
  Decoder* model_ = nullptr;
  Backend backend_ = Backend::scalar;
  std::vector<std::int32_t> corrupt_;
  int answer_ = 0, wrong_ = 0;
  double clean_diff_ = 0.0, corrupt_diff_ = 0.0;
  ActivationCache clean_;
  Decoder::SavedPass corrupted_;  // each cell starts from it
};

// begin() and every row of every site asked for (the CLI and the tests). The model's last pass is
// afterwards the corrupted prompt's.
std::string patch_activations(Decoder& model, Backend backend, const std::vector<std::int32_t>& clean,
                              const std::vector<std::int32_t>& corrupt, int answer, int wrong, const std::vector<PatchSite>& sites,
                              ActivationPatching& out);

// Passes patch_activations runs for these sites on a model (the settings' time check).
int patching_passes(const Decoder& model, int T, const std::vector<PatchSite>& sites);

}  // namespace attnlab
