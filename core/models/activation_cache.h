// The activations one pass kept, each under its TransformerLens hook name (issue 44, item 3), so that a
// student reads the same tensor in a notebook as `cache["blocks.0.attn.hook_z"]`: the figures' captions,
// `attnlab ... --cache` and the page's export all use these names. Shapes are TransformerLens's without
// the batch dimension (T the pass's tokens, S the keys it reads, as in decoder.h):
//
//   hook_embed, hook_pos_embed (learned positions)                [T, E]
//   blocks.L.hook_resid_pre, hook_resid_mid, hook_resid_post     [T, E]
//   blocks.L.ln1.hook_scale, ln2.hook_scale, ln_final.hook_scale [T, 1]
//   blocks.L.ln1.hook_normalized, ln2..., ln_final...            [T, E]   LayerNorm: after its weight and
//                                                                          bias; RMSNorm: before its weight
//   blocks.L.attn.hook_q, hook_rot_q (rotary)                    [T, H, D]
//   blocks.L.attn.hook_k, hook_v, hook_rot_k (rotary)            [T, Hkv, D]  (grouped-query: Hkv heads)
//   blocks.L.attn.hook_attn_scores, hook_pattern                 [H, T, S]    scores: -inf where masked
//   blocks.L.attn.hook_z                                         [T, H, D]
//   blocks.L.hook_attn_out, hook_mlp_out                         [T, E]   (their biases included)
//   blocks.L.mlp.hook_pre, hook_post; hook_pre_linear (gated)    [T, F]
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlab {

struct CachedActivation {
  std::string name;
  std::vector<int> shape;
  std::vector<float> values;  // row-major in `shape`
};

class ActivationCache {
 public:
  // Keeps a copy of `values` (the product of `shape` floats) under `name`, replacing one kept before.
  void put(const std::string& name, std::vector<int> shape, const float* values);
  const CachedActivation* find(const std::string& name) const;
  // In the order the pass reached them (the export's order).
  const std::vector<CachedActivation>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  std::size_t float_count() const;

 private:
  std::vector<CachedActivation> entries_;
};

// "blocks.{layer}.{hook}" (hook: "hook_resid_pre", "attn.hook_z", ...).
std::string block_hook(int layer, const char* hook);

}  // namespace attnlab
