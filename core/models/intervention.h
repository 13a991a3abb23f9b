// What one forward pass of a decoder changes and keeps of its own activations (issue 44, item 5): heads
// switched off, activations replaced by another run's, activations captured. It is an argument of the
// pass (Decoder::begin_forward and begin_step) and is forgotten when the next pass begins, so head
// ablation, activation patching and the attribution's cache are one mechanism, and no section of the
// page can leave another's heads switched off: the Writing lab passes its heads with every pass it runs.
//
// The sites are TransformerLens's hook points (activation_cache.h's names and shapes), and a
// replacement is what a TransformerLens hook returning another run's value does:
//   resid_pre  blocks.L.hook_resid_pre     the residual entering block L              rows
//   z          blocks.L.attn.hook_z        one head's output before W_O               rows of one head (or all)
//   pattern    blocks.L.attn.hook_pattern  one head's attention weights; its z is     query rows of one head
//                                          recomputed from them with this run's v
//   attn_out   blocks.L.hook_attn_out      what the attention adds to the residual    rows
//   mlp_out    blocks.L.hook_mlp_out       what the MLP adds                          rows
// Heads switched off zero their z (as TransformerLens zeroes hook_z), after any replacement of it.
#pragma once

#include <string>
#include <vector>

#include "../layers/head_ablation.h"
#include "activation_cache.h"

namespace attnlab {

enum class PatchSite { resid_pre, z, pattern, attn_out, mlp_out };

// "resid_pre", "z", "pattern", "attn_out", "mlp_out" (the CLI's --what and the page's names).
const char* patch_site_name(PatchSite site);
bool patch_site_from_name(const std::string& name, PatchSite& out);
// The site's hook name at `layer` ("blocks.3.attn.hook_z").
std::string patch_site_hook(PatchSite site, int layer);

struct ActivationPatch {
  PatchSite site = PatchSite::resid_pre;
  int layer = 0;
  int position = -1;  // the row replaced (a query row for pattern); -1: every row
  int head = -1;      // z and pattern: the head replaced; -1: every head
  // The other run's whole activation at the site, in the cache's shape for a pass of the same tokens
  // (a CachedActivation's values): it must outlive the pass.
  const float* source = nullptr;
};

struct Intervention {
  HeadAblation heads_off;               // checked by its set() against the model's layers and heads
  std::vector<ActivationPatch> patches;  // checked by check_intervention
  ActivationCache* capture = nullptr;    // when given: cleared, then every hook of the pass kept in it
};

}  // namespace attnlab
