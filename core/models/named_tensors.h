// The names a checkpoint model's weights answer to, for checkpoint_model.h's storage() and
// set_linear_weight(): tensors the loader fills in place (embeddings, biases, norms), by pointer, and
// Linear weights the model packs. A model fills one when it is built (its index_tensors: Marian's, the
// decoder's from its kind's name table), and its storage()/set_linear_weight() look names up here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../layers/packed_linear.h"

namespace attnlab {

// A LayerNorm's weight and bias [E]; identity(E) is PyTorch's initial one (1s and 0s).
struct LayerNormWeights {
  std::vector<float> weight, bias;
  static LayerNormWeights identity(int E) {
    return {std::vector<float>(std::size_t(E), 1.0f), std::vector<float>(std::size_t(E), 0.0f)};
  }
};

class NamedTensors {
 public:
  void tensor(const std::string& name, float* data) { storage_[name] = data; }
  // name.weight (packed by the model) and name.bias (in place).
  void linear(const std::string& name, PackedLinear& p) {
    linears_[name + ".weight"] = &p;
    storage_[name + ".bias"] = p.bias_data();
  }
  // A packed weight under a name of its own (a tied embedding's), with no bias.
  void linear_weight(const std::string& name, PackedLinear& p) { linears_[name] = &p; }
  void norm(const std::string& name, LayerNormWeights& n) {
    storage_[name + ".weight"] = n.weight.data();
    storage_[name + ".bias"] = n.bias.data();
  }
  // nullptr for a name the model does not have.
  float* storage(const std::string& name) const {
    const auto it = storage_.find(name);
    return it == storage_.end() ? nullptr : it->second;
  }
  PackedLinear* packed(const std::string& name) const {
    const auto it = linears_.find(name);
    return it == linears_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, float*> storage_;
  std::map<std::string, PackedLinear*> linears_;
};

}  // namespace attnlab
