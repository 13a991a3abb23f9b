// Which attention kernel runs, and why. Scalar always works; SIMD128 needs a module built with
// -msimd128 (the engine must validate it); WebGPU needs an adapter and a problem big enough to pay for
// the dispatch and the readback.
#pragma once

#include <optional>
#include <string>

#include "shape.h"

namespace attnlab {

// Shared with JS through Embind (wasm_bindings/bindings.cpp) and tests/node/enums.test.mjs checks
// that web/backends.js lists the same names in the same order.
enum class Backend : int { scalar = 0, simd128 = 1, webgpu = 2 };

const char* backend_name(Backend backend);
// "scalar" | "simd" | "simd128" | "webgpu" -> Backend; anything else -> nullopt. ("auto" is a request.)
std::optional<Backend> parse_backend(const std::string& name);

// What the running engine offers; the JS loader fills it in after probing.
struct BackendEnvironment {
  bool simd128_available = false;
  bool webgpu_available = false;
  std::string webgpu_unavailable_reason = "no adapter";
};

struct BackendChoice {
  Backend backend = Backend::scalar;
  std::string reason;  // shown on the page, e.g. "WebGPU: no adapter -> SIMD128"
};

// Below this many FLOPs per forward+backward pass the WebGPU round trip (upload, dispatch, one
// mapAsync readback) costs more than SIMD128 does for the whole pass. See docs/benchmarks.md.
constexpr double kWebGpuMinFlops = 64.0 * 1024 * 1024;

// requested: "auto", "scalar", "simd", "simd128" or "webgpu". A forced backend that is unavailable
// falls back along webgpu -> simd128 -> scalar, and the reason says so.
BackendChoice select_backend(const std::string& requested, const BackendEnvironment& env,
                             const AttentionShape& shape);

}  // namespace attnlab
