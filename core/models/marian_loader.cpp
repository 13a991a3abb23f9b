#include "marian_loader.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "../validate.h"

namespace attnlab {

std::string store_marian_tensor(MarianModel& model, const MarianTensorLoad& load, const float* dense, const std::string& file) {
  std::size_t n = 1;
  for (std::int64_t d : load.shape) n *= std::size_t(d);
  for (std::size_t i = 0; i < n; ++i) {
    const float w = dense[i];
    if (std::isfinite(w) && std::fabs(w) <= kMaxInputMagnitude) continue;
    char value[32];
    std::snprintf(value, sizeof value, "%g", double(w));
    return file + ": tensor \"" + load.file_name + "\" holds " + (std::isnan(w) ? std::string("NaN") : std::string(value)) +
           " at element " + std::to_string(i) + ": a weight must be finite and within ±1e6";
  }
  if (load.linear) {
    if (!model.set_linear_weight(load.canonical, dense)) return "the model has no tensor \"" + load.canonical + "\"";
    return {};
  }
  float* dst = model.storage(load.canonical);
  if (!dst) return "the model has no tensor \"" + load.canonical + "\"";
  std::copy(dense, dense + n, dst);
  return {};
}

std::vector<CheckpointTensor> checkpoint_tensors(const SafeTensorsIndex& index) {
  std::vector<CheckpointTensor> out;
  for (const auto& e : index.entries) out.push_back({e.name, e.dtype, e.shape});
  return out;
}

std::vector<CheckpointTensor> checkpoint_tensors(const TorchCheckpointIndex& index) {
  std::vector<CheckpointTensor> out;
  for (const auto& t : index.tensors) out.push_back({t.name, t.dtype, t.shape});
  return out;
}

std::string load_marian_safetensors(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                                    std::unique_ptr<MarianModel>& model, MarianLoadPlan& plan) {
  MarianConfig config;
  std::string error = parse_marian_config(config_json, config);
  if (!error.empty()) return error;
  std::uint64_t header_size = 0;
  error = safetensors_header_length(data, size, header_size);
  SafeTensorsIndex index;
  if (error.empty()) error = parse_safetensors_index(data + 8, header_size, size, index);
  if (!error.empty()) return "model.safetensors: " + error;
  error = plan_marian_load(config, checkpoint_tensors(index), "model.safetensors", plan);
  if (!error.empty()) return error;
  auto m = std::make_unique<MarianModel>(config);
  std::vector<float> dense;
  for (const auto& load : plan.loads) {
    const SafeTensorsEntry* e = index.find(load.file_name);
    dense.resize(std::size_t(e->numel()));
    decode_floats(e->dtype, data + e->begin, dense.size(), dense.data());
    error = store_marian_tensor(*m, load, dense.data(), "model.safetensors");
    if (!error.empty()) return error;
  }
  model = std::move(m);
  return {};
}

std::string load_marian_torch(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                              std::unique_ptr<MarianModel>& model, MarianLoadPlan& plan) {
  MarianConfig config;
  std::string error = parse_marian_config(config_json, config);
  if (!error.empty()) return error;
  TorchCheckpointIndex index;
  error = parse_torch_checkpoint(data, size, index);
  if (!error.empty()) return error;
  error = plan_marian_load(config, checkpoint_tensors(index), "pytorch_model.bin", plan);
  if (!error.empty()) return error;
  auto m = std::make_unique<MarianModel>(config);
  std::vector<float> dense;
  for (const auto& load : plan.loads) {
    const TorchTensor* t = index.find(load.file_name);
    dense.resize(std::size_t(t->numel()));
    error = torch_tensor_to_float(*t, data + t->begin, t->end - t->begin, dense.data());
    if (error.empty()) error = store_marian_tensor(*m, load, dense.data(), "pytorch_model.bin");
    if (!error.empty()) return error;
  }
  model = std::move(m);
  return {};
}

}  // namespace attnlab
