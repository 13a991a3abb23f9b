// The one memory rule of every checkpoint model (issue 37, item 2): a model opens when its weights, at
// the precision they are held in (float32; a BF16/F16 decoder's weights stay 16-bit: decoder.h), plus the
// work memory of a lab's run fit the WebAssembly heap beside the module itself. Every kind's config check
// applies it (config_json.h: check_weight_budget), so a model that does not fit is refused from its
// config.json, before its weights are read or downloaded, with the memory it needs; the Hub clients ask
// the module the same question once config.json has arrived (web/cli/hub.mjs, web/models/hub_store.js:
// checkConfig), and bound a weights file by kModelBudgetBytes before that (web/models/checkpoint_files.js
// MAX_WEIGHT_BYTES, equal to it: tests/node/hub_hostile.test.mjs checks the two agree).
#pragma once

#include <cstdint>
#include <string>

namespace attnlab {

constexpr std::uint64_t kMiB = 1024 * 1024;
// -sMAXIMUM_MEMORY=4GB (CMakeLists.txt): wasm32's whole address space; the modules grow to it.
constexpr std::uint64_t kWasmHeapBytes = 4096 * kMiB;
// The module's own: its code's data, the stack, the allocator's slack between blocks, the bindings'
// copies of a tensor in flight (a 16 MB read of the weights, a view's copy).
constexpr std::uint64_t kModuleReserveBytes = 256 * kMiB;
// What a model (weights + work) may take: 3840 MB.
constexpr std::uint64_t kModelBudgetBytes = kWasmHeapBytes - kModuleReserveBytes;
// The text a lab's run is sized for: the prompt's pass keeps every layer's attention [H, T, T], the
// logits of every row [T, V] and the residual stream [L + 1, T, E], so the work grows with T; 256 tokens
// is more than the Writing lab's prompts and written tokens together (a model's n_positions, if fewer).
constexpr int kWorkTokens = 256;

// The sizes the work memory depends on (a kind's config, in the legend's letters).
struct WorkShape {
  int layers = 0;        // L (an encoder-decoder: both stacks)
  int heads = 0;         // H
  int kv_heads = 0;      // Hkv
  int head_dim = 0;      // D
  int hidden = 0;        // E
  int intermediate = 0;  // F
  int vocab = 0;         // V
  int positions = 0;     // P: the longest text
};

struct ModelMemory {
  std::uint64_t weights = 0;  // bytes, as held
  std::uint64_t work = 0;     // bytes, work_bytes()
  std::uint64_t total() const { return weights + work; }
};

// The work memory of a run over min(P, kWorkTokens) tokens, float32 throughout: every layer's attention
// weights, keys and values of the cache, the residual stream of every layer, one layer's projections and
// MLP, the logits of every row; and, while loading, the staging buffer of the largest weight matrix
// (V x E or F x E, at the stored bytes_each: checkpoint_loader.h).
std::uint64_t work_bytes(const WorkShape& shape, int bytes_each);

// weights (a count) of bytes_each bytes and the work of `shape` -> its memory.
ModelMemory model_memory(std::uint64_t weights, int bytes_each, const WorkShape& shape);

// "" when it fits kModelBudgetBytes, else one line with what it needs: "config.json describes a model
// that needs 5120 MB: 4600 MB of weights as float32 and 520 MB of work, more than the 3840 MB ...".
std::string check_model_memory(const ModelMemory& memory, int bytes_each);

}  // namespace attnlab
