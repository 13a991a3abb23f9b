// Detect once: is there a WebGPU adapter this page can use for the attention kernel, and if not, why.
// The kernel itself lives in attention_webgpu.js.
// CPU implementations of WebGPU: correct, but far slower than SIMD128 (docs/benchmarks.md), so `auto`
// never picks them; forcing WebGPU still uses them.
export function isSoftwareAdapter(description) {
  return /swiftshader|llvmpipe|lavapipe|software|warp/i.test(description ?? '');
}

export const WebGpuProbe = {
  /** gpu: navigator.gpu (or the Node 'webgpu' package's GPU). -> {available, reason, attention, adapter} */
  async probe(gpu) {
    if (!gpu) return { available: false, reason: 'no navigator.gpu', attention: null, adapter: '' };
    try {
      const { WebGpuAttention } = await import('./attention_webgpu.js');
      const { attention, reason } = await WebGpuAttention.create({ gpu });
      if (!attention) return { available: false, reason, attention: null, adapter: '' };
      const adapter = attention.adapterDescription ?? '';
      return { available: true, reason: '', attention, adapter, software: isSoftwareAdapter(adapter) };
    } catch (error) {
      return { available: false, reason: `WebGPU failed: ${error?.message ?? error}`, attention: null, adapter: '' };
    }
  },
};
