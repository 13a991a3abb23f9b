#include "model_memory.h"

#include <algorithm>

namespace attnlab {

std::uint64_t work_bytes(const WorkShape& s, int bytes_each) {
  using u64 = std::uint64_t;
  const u64 T = u64(std::max(1, std::min(s.positions, kWorkTokens)));
  const u64 L = u64(s.layers), H = u64(s.heads), Hkv = u64(s.kv_heads), D = u64(s.head_dim), E = u64(s.hidden), F = u64(s.intermediate),
            V = u64(s.vocab);
  const u64 attention = L * H * T * T;                     // every layer's weights, kept for the views
  const u64 cache = 2 * L * Hkv * T * D;                   // keys and values
  const u64 residual = (L + 1) * T * E;                    // the stream before each block and after the last
  const u64 layer = T * (H * D + 2 * Hkv * D + 2 * E) + 2 * T * F;  // one block's q, k, v, out, and MLP
  const u64 logits = T * V;
  const u64 floats = attention + cache + residual + layer + logits;
  const u64 staging = std::max(V, F) * E * u64(bytes_each);  // the largest matrix as it is read
  return 4 * floats + staging;
}

ModelMemory model_memory(std::uint64_t weights, int bytes_each, const WorkShape& shape) {
  return {weights * std::uint64_t(bytes_each), work_bytes(shape, bytes_each)};
}

std::string check_model_memory(const ModelMemory& m, int bytes_each) {
  if (m.total() <= kModelBudgetBytes) return {};
  const auto mb = [](std::uint64_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB) + " MB"; };
  return "config.json describes a model that needs " + mb(m.total()) + ": " + mb(m.weights) + " of weights as " +
         (bytes_each == 2 ? "16-bit" : "float32") + " and " + mb(m.work) + " of work, more than the " +
         std::to_string(kModelBudgetBytes / kMiB) + " MB a browser tab's WebAssembly memory can hold (4 GB, less " +
         std::to_string(kModuleReserveBytes / kMiB) + " MB for the module itself)";
}

}  // namespace attnlab
