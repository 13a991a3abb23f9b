// Puts a planned tensor (marian_checkpoint.h), as dense float32, into a MarianModel: Linear weights
// packed, every value checked (NaN, infinity, |w| > 1e6 refused with the tensor's name, as for BERT).
// load_marian_safetensors and load_marian_torch load a whole model.safetensors or pytorch_model.bin held
// in memory (native tests, tools); the page and the CLI stream tensors through wasm_bindings/raw_marian.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../io/safetensors.h"
#include "../io/torch_checkpoint.h"
#include "marian.h"
#include "marian_checkpoint.h"

namespace attnlab {

std::string store_marian_tensor(MarianModel& model, const MarianTensorLoad& load, const float* dense, const std::string& file);

// The index's entries as the plan takes them.
std::vector<CheckpointTensor> checkpoint_tensors(const SafeTensorsIndex& index);
// A pytorch_model.bin's tensors as the plan takes them (their dtypes are already "F32", "F16", ...).
std::vector<CheckpointTensor> checkpoint_tensors(const TorchCheckpointIndex& index);

std::string load_marian_safetensors(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                                    std::unique_ptr<MarianModel>& model, MarianLoadPlan& plan);
std::string load_marian_torch(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                              std::unique_ptr<MarianModel>& model, MarianLoadPlan& plan);

}  // namespace attnlab
