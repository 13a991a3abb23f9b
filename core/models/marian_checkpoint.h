// Which tensors of a Marian checkpoint (model.safetensors or pytorch_model.bin) go where, by Hugging
// Face's MarianMTModel names. The shared embeddings may be stored as model.shared.weight or only under
// a tied name (model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight, lm_head.weight);
// the tied copies and the sinusoidal position tables (computed, not loaded) are skipped, as HF does
// when it ties the weights after loading. Dtypes and shapes are checked against config.json first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "marian_config.h"

namespace attnlab {

// A tensor as a checkpoint's index lists it (a safetensors entry, or a pickled tensor of a .bin).
struct CheckpointTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
};

struct MarianTensorLoad {
  std::string canonical;  // MarianModel's name
  std::string file_name;  // the checkpoint's
  std::vector<std::int64_t> shape;
  bool linear = false;  // a Linear weight [out, in]: packed by the model
};

struct MarianLoadPlan {
  std::vector<MarianTensorLoad> loads;
  std::vector<std::string> skipped;
};

// `file` names the checkpoint file in messages ("model.safetensors" or "pytorch_model.bin").
std::string plan_marian_load(const MarianConfig& config, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                             MarianLoadPlan& plan);

}  // namespace attnlab
