#include "backend.h"

namespace attnlab {

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::scalar: return "scalar";
    case Backend::simd128: return "simd128";
    case Backend::webgpu: return "webgpu";
  }
  return "scalar";
}

std::optional<Backend> parse_backend(const std::string& name) {
  if (name == "scalar") return Backend::scalar;
  if (name == "simd" || name == "simd128") return Backend::simd128;
  if (name == "webgpu") return Backend::webgpu;
  return std::nullopt;
}

namespace {

BackendChoice best_cpu(const BackendEnvironment& env, std::string why) {
  if (env.simd128_available) return {Backend::simd128, why + " -> SIMD128"};
  return {Backend::scalar, why + " -> SIMD128: not supported by this engine -> scalar"};
}

}  // namespace

BackendChoice select_backend(const std::string& requested, const BackendEnvironment& env,
                             const AttentionShape& shape) {
  const double flops = shape.forward_flops() + shape.backward_flops();
  if (requested == "auto") {
    if (!env.webgpu_available) return best_cpu(env, "auto: WebGPU: " + env.webgpu_unavailable_reason);
    if (flops < kWebGpuMinFlops)
      return best_cpu(env, "auto: WebGPU: problem too small to pay off");
    return {Backend::webgpu, "auto: WebGPU adapter and a large problem -> WebGPU"};
  }
  const std::optional<Backend> forced = parse_backend(requested);
  if (!forced) return best_cpu(env, "unknown backend '" + requested + "'");
  switch (*forced) {
    case Backend::scalar: return {Backend::scalar, "forced: scalar"};
    case Backend::simd128:
      if (env.simd128_available) return {Backend::simd128, "forced: SIMD128"};
      return {Backend::scalar, "forced: SIMD128: not supported by this engine -> scalar"};
    case Backend::webgpu:
      if (env.webgpu_available) return {Backend::webgpu, "forced: WebGPU"};
      return best_cpu(env, "forced: WebGPU: " + env.webgpu_unavailable_reason);
  }
  return {Backend::scalar, "scalar"};
}

}  // namespace attnlab
