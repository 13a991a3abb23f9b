// The page's backend rules, in one place, for a training run (backend_steps.js) and for a section's or
// a checkpoint model's attention calls (kernel_runner.js): what this machine has (SIMD128, a WebGPU
// adapter), that `auto` passes over a software adapter (a CPU pretending to be a GPU is slower than our
// SIMD128 kernel), and the request itself; the module's selectBackend (core/backend.cpp) then decides
// and says why. The backend names and the request aliases (`simd` for simd128) are web/backends.js's.

/**
 * The backend request: the one object that travels from the caller (the worker, a CLI command, a test)
 * through a session, its steps and a kernel runner to chooseBackend. requested: auto | webgpu | simd |
 * scalar; gpu: what WebGpuProbe.probe found (web/webgpu/probe.js), of which the choice reads attention
 * (a ready WebGpuAttention or null), reason (why there is none) and software (its adapter is a CPU).
 * The defaults are a machine with no GPU.
 */
export function backendRequest({ requested = 'auto', gpu = {} } = {}) {
  return { requested, gpu: { attention: gpu.attention ?? null, reason: gpu.reason ?? 'no adapter',
    software: gpu.software ?? false } };
}

/**
 * module: the loaded WASM module; request: a backendRequest; shape: {B, H, T, S, D} of the call. ->
 * {backend: scalar | simd128 | webgpu, reason}.
 */
export function chooseBackend(module, { requested, gpu }, shape) {
  const env = { simd128: module.cpuBackends.includes('simd128'), webgpu: !!gpu.attention, webgpuReason: gpu.reason };
  if (requested === 'auto' && gpu.attention && gpu.software) {
    env.webgpu = false;
    env.webgpuReason = `software adapter (${gpu.attention.adapterDescription}) is slower than the CPU`;
  }
  return module.selectBackend(requested, env, shape);
}
