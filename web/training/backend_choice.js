// The page's backend rules, in one place, for a training run (backend_steps.js) and for a section's or
// a checkpoint model's attention calls (kernel_runner.js): what this machine has (SIMD128, a WebGPU
// adapter), that `auto` passes over a software adapter (a CPU pretending to be a GPU is slower than our
// SIMD128 kernel), and the request itself; the module's selectBackend (core/backend.cpp) then decides
// and says why. The backend names and the request aliases (`simd` for simd128) are web/backends.js's.

/**
 * module: the loaded WASM module; requested: auto | webgpu | simd | scalar; gpu: a ready WebGPU kernel
 * or null; gpuReason: why there is none (or why it went away); gpuSoftware: its adapter is a CPU;
 * shape: {B, H, T, S, D} of the call. -> {backend: scalar | simd128 | webgpu, reason}.
 */
export function chooseBackend({ module, requested, gpu, gpuReason, gpuSoftware }, shape) {
  const env = { simd128: module.cpuBackends.includes('simd128'), webgpu: !!gpu, webgpuReason: gpuReason };
  if (requested === 'auto' && gpu && gpuSoftware) {
    env.webgpu = false;
    env.webgpuReason = `software adapter (${gpu.adapterDescription}) is slower than the CPU`;
  }
  return module.selectBackend(requested, env, shape);
}

