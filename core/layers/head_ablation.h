// Heads switched off (head ablation, as TransformerLens does it by zeroing hook_z): a head's output
// z = w v [n, D] is replaced by zeros before the heads are merged and go through the output projection,
// so the projection's bias is still added and every other head is untouched. One list for every model
// that reads a checkpoint (checkpoint_model.h): GPT-2's self-attention, BERT's, Marian's decoder
// cross-attention (the heads each lab shows), layers and heads numbered from 0.
#pragma once

#include <string>
#include <vector>

#include "../tensor.h"

namespace attnlab {

struct LayerHead {
  int layer = 0, head = 0;
};

class HeadAblation {
 public:
  // "" and the heads kept, or what is wrong (the first head out of range, or given twice); a refused
  // list leaves the one before.
  std::string set(const std::vector<LayerHead>& heads, int layers, int heads_per_layer);
  void clear() { heads_.clear(); }
  bool empty() const { return heads_.empty(); }
  const std::vector<LayerHead>& heads() const { return heads_; }
  bool off(int layer, int head) const;
  // merged [N, H D], the heads of one layer side by side: the D columns of each head of `layer` that
  // is off become 0. Nothing is touched when no head of the layer is off (the same bits as without).
  void apply(int layer, MatrixRef merged, int D) const;

 private:
  std::vector<LayerHead> heads_;
};

// "L.H" as messages and the CLI write it.
std::string layer_head_text(const LayerHead& h);

}  // namespace attnlab
