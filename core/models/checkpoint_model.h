// The model registry's interface: what a kind of model read from a Hugging Face checkpoint declares
// (model_kinds.h lists the kinds), and what the one loader (checkpoint_loader.h) needs of a model.
//
// A kind reads its config.json, plans the load from the checkpoint's index (which tensor, under which
// of the names checkpoints spell it, goes where; every dtype and shape checked before a byte is read),
// builds the model, and describes what it loaded. The loader does the rest, the same for every kind and
// for both file formats (model.safetensors, pytorch_model.bin). Adding a kind is its model file, its
// config declaration and its ModelKind (bert_checkpoint.cpp and marian_checkpoint.cpp are the two).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../io/json.h"
#include "../layers/head_ablation.h"
#include "../staged_forward.h"

namespace attnlab {

// A tensor as a checkpoint's index lists it (a safetensors entry, or a pickled tensor of a .bin).
struct CheckpointTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "F64", "I64", ...
  std::vector<std::int64_t> shape;
};

// One weight the model takes from the checkpoint.
struct TensorLoad {
  std::string canonical;  // the model's name for it
  std::string file_name;  // the checkpoint's
  std::vector<std::int64_t> shape;
  bool linear = false;  // a Linear weight [out, in]: the model packs it for its matrix products
};

struct LoadPlan {
  std::vector<TensorLoad> loads;
  std::vector<std::string> skipped;  // tensors of the file the model does not use (tied copies, heads, buffers)
};

// A model whose weights come from a checkpoint; its forward passes run through the staged protocol.
class CheckpointModel : public StagedForward {
 public:
  // The float storage of a tensor kept as the file has it (embeddings, biases, norms): the loader fills
  // it in place. nullptr for a Linear weight or an unknown name.
  virtual float* storage(const std::string& canonical) = 0;
  // A Linear weight [out, in] in the file's layout; false for an unknown name.
  virtual bool set_linear_weight(const std::string& canonical, const float* w) = 0;
  // A model built to hold a 16-bit checkpoint's weights at their precision (a decoder of BF16 or F16
  // weights): the 16-bit storage of a tensor kept as stored (an embedding) in that dtype ("BF16",
  // "F16"), and a Linear weight's 16-bit values to pack. nullptr / false where the model holds that
  // tensor as float32 (the loader then widens it first).
  virtual std::uint16_t* storage_16(const std::string& /*canonical*/, const std::string& /*dtype*/) { return nullptr; }
  virtual bool set_linear_weight_16(const std::string& /*canonical*/, const std::uint16_t* /*w*/, const std::string& /*dtype*/) {
    return false;
  }

  // ---- heads switched off (head_ablation.h): the heads the model's lab shows, [ablation_layers(),
  // ablation_heads()] of them, which HeadAblation::set checks a list against. They are an argument of
  // each pass (BertModel::forward's, MarianModel::decode's and generate's, the decoder's Intervention),
  // never state on the model: no pass inherits another's, so no section can leave heads off for the next.
  virtual int ablation_layers() const = 0;
  virtual int ablation_heads() const = 0;
};

class ModelKind {
 public:
  virtual ~ModelKind() = default;
  // config.json's model_type ("bert", "marian").
  virtual const char* id() const = 0;
  // config.json's text -> "" (the config is kept) or what is wrong, starting "config.json".
  virtual std::string read_config(const std::string& json) = 0;
  // The checkpoint's tensors -> "" and the plan, or a message starting with `file` and naming the tensor.
  virtual std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) = 0;
  // The model the plan fills (its storage allocated; weights not yet read).
  virtual std::unique_ptr<CheckpointModel> build() const = 0;
  // What the page shows of it: {config: {...}, and what the kind adds (how names were spelt, heads found)}.
  virtual Json summary() const = 0;
};

// "F32", "F16", "BF16" or "F64": the dtypes a weight may have.
bool is_float_dtype(const std::string& dtype);
// "[2, 3]"
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace attnlab
