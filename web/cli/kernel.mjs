// The attention kernel of a headless command, chosen as the page chooses it: the lab's `backend`
// setting (auto | webgpu | simd | scalar), WebGPU through Dawn (the npm 'webgpu' package) only when
// that setting can use it, and the same KernelRunner as the page's sections, so the same rules for a
// software adapter or a lost device apply and the output names the kernel that ran and why.
import { WebGpuProbe } from '../webgpu/probe.js';
import { KernelRunner } from '../training/kernel_runner.js';

/** backend setting -> {attention (the WebGPU kernel, or null), reason, software}. */
export async function probeGpu(backend) {
  if (backend !== 'auto' && backend !== 'webgpu') return { attention: null, reason: 'not requested' };
  const { nodeGpu } = await import('../webgpu/node_gpu.mjs');
  const { gpu, reason } = await nodeGpu();
  return gpu ? WebGpuProbe.probe(gpu) : { attention: null, reason };
}

/**
 * module, backend setting -> a KernelRunner: forward({B, H, T, S, D, q, k, v, mask?, scale?}) ->
 * {weights, out, choice}.
 */
export async function commandKernel(module, backend) {
  return new KernelRunner({ module, request: { requested: backend, gpu: await probeGpu(backend) } });
}
