// Puts a planned tensor's bytes (bert_checkpoint.h) into a BertModel: F16, BF16 and F64 widened to
// float32, Linear weights packed, every value checked finite. The page streams a checkpoint tensor by
// tensor through this (wasm_bindings/raw_bert.cpp); native tests and tools load a whole file with
// load_bert_checkpoint.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bert.h"
#include "bert_checkpoint.h"

namespace attnlab {

// True when the tensor's bytes can be read straight into model.storage(name) (float32, not packed).
bool loads_in_place(const BertTensorLoad& load);
// The tensor's bytes (load.entry.end - load.entry.begin of them) -> the model; "" or what is wrong.
// `bytes` may be model.storage(name) itself for a tensor that loads in place.
std::string load_bert_tensor(BertModel& model, const BertTensorLoad& load, const std::uint8_t* bytes);

// config.json's text and model.safetensors' bytes -> a model, or a message naming the file and tensor.
std::string load_bert_checkpoint(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                                 std::unique_ptr<BertModel>& model, BertLoadPlan& plan);

}  // namespace attnlab
