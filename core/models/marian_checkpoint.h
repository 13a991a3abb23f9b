// Which tensors of a Marian checkpoint (model.safetensors or pytorch_model.bin) go where, by Hugging
// Face's MarianMTModel names. The shared embeddings may be stored as model.shared.weight or only under
// a tied name (model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight, lm_head.weight);
// the tied copies and the sinusoidal position tables (computed, not loaded) are skipped, as HF does
// when it ties the weights after loading. Dtypes and shapes are checked against config.json first.
// Also the Marian entry of the model registry (model_kinds.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint_model.h"
#include "marian_config.h"

namespace attnlab {

// `file` names the checkpoint file in messages ("model.safetensors" or "pytorch_model.bin").
std::string plan_marian_load(const MarianConfig& config, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                             LoadPlan& plan);

// The registry's Marian (model_type "marian"): MarianModel.
std::unique_ptr<ModelKind> make_marian_kind();

}  // namespace attnlab
