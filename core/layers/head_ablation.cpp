#include "head_ablation.h"

namespace attnlab {

std::string layer_head_text(const LayerHead& h) { return std::to_string(h.layer) + "." + std::to_string(h.head); }

std::string HeadAblation::set(const std::vector<LayerHead>& heads, int layers, int heads_per_layer) {
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const LayerHead& h = heads[i];
    if (h.layer < 0 || h.layer >= layers)
      return "head " + layer_head_text(h) + ": this model's layers are 0 to " + std::to_string(layers - 1);
    if (h.head < 0 || h.head >= heads_per_layer)
      return "head " + layer_head_text(h) + ": this model's heads are 0 to " + std::to_string(heads_per_layer - 1) + " in each layer";
    for (std::size_t j = 0; j < i; ++j)
      if (heads[j].layer == h.layer && heads[j].head == h.head) return "head " + layer_head_text(h) + " is given twice";
  }
  heads_ = heads;
  return {};
}

bool HeadAblation::off(int layer, int head) const {
  for (const LayerHead& h : heads_)
    if (h.layer == layer && h.head == head) return true;
  return false;
}

void HeadAblation::apply(int layer, MatrixRef merged, int D) const {
  for (const LayerHead& h : heads_)
    if (h.layer == layer) merged.middleCols(Eigen::Index(h.head) * D, D).setZero();
}

}  // namespace attnlab
