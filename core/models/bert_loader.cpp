#include "bert_loader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../validate.h"

namespace attnlab {

namespace {

// NaN, infinity (or an F64 past float32's range) and |w| > kMaxInputMagnitude are refused: a weight of
// 3e38 is finite, but it overflows float32 in the next layer and every output becomes NaN. Trained
// weights are far below 1e6 (bert-base's largest is about 20); 1e6 cannot overflow at BERT's sizes
// (LayerNorm bounds each layer's input; the scores stay below 1e34).
std::string first_non_finite(const std::string& file_name, const float* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float w = data[i];
    if (std::isfinite(w) && std::fabs(w) <= kMaxInputMagnitude) continue;
    const std::string tensor = "model.safetensors: tensor \"" + file_name + "\" holds ";
    if (std::isnan(w)) return tensor + "NaN at element " + std::to_string(i) + ": the model would compute nothing but NaN";
    if (std::isinf(w))
      return tensor + "an infinity (or a value past float32's range) at element " + std::to_string(i) + ": the model would compute nothing but NaN";
    char value[32];
    std::snprintf(value, sizeof value, "%g", double(w));
    return tensor + value + " at element " + std::to_string(i) + ": weights beyond ±1e6 overflow float32 in the forward (trained weights are far smaller)";
  }
  return {};
}

}  // namespace

bool loads_in_place(const BertTensorLoad& load) { return load.entry.dtype == "F32" && !load.spec.transpose; }

std::string load_bert_tensor(BertModel& model, const BertTensorLoad& load, const std::uint8_t* bytes) {
  const std::size_t n = std::size_t(load.entry.numel());
  const std::string& name = load.spec.name;
  if (!load.spec.transpose) {
    float* dst = model.storage(name);
    if (!dst) return "the model has no tensor \"" + name + "\"";
    if (reinterpret_cast<const std::uint8_t*>(dst) != bytes && !decode_floats(load.entry.dtype, bytes, n, dst))
      return "model.safetensors: tensor \"" + load.entry.name + "\" has dtype " + load.entry.dtype + ", not a float";
    return first_non_finite(load.entry.name, dst, n);
  }
  std::vector<float> w(n);
  if (!decode_floats(load.entry.dtype, bytes, n, w.data()))
    return "model.safetensors: tensor \"" + load.entry.name + "\" has dtype " + load.entry.dtype + ", not a float";
  std::string error = first_non_finite(load.entry.name, w.data(), n);
  if (!error.empty()) return error;
  if (!model.set_linear_weight(name, w.data())) return "the model has no tensor \"" + name + "\"";
  return {};
}

std::string load_bert_checkpoint(const std::string& config_json, const std::uint8_t* data, std::size_t size,
                                 std::unique_ptr<BertModel>& model, BertLoadPlan& plan) {
  BertConfig config;
  std::string error = parse_bert_config(config_json, config);
  if (!error.empty()) return error;
  std::uint64_t header_size = 0;
  error = safetensors_header_length(data, size, header_size);
  SafeTensorsIndex index;
  if (error.empty()) error = parse_safetensors_index(data + 8, header_size, size, index);
  if (!error.empty()) return "model.safetensors: " + error;
  error = plan_bert_load(config, index, plan);
  if (!error.empty()) return error;
  auto m = std::make_unique<BertModel>(config, plan.mlm_head, plan.separate_decoder);
  for (const auto& load : plan.loads) {
    error = load_bert_tensor(*m, load, data + load.entry.begin);
    if (!error.empty()) return error;
  }
  model = std::move(m);
  return {};
}

}  // namespace attnlab
