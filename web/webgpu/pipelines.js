// Compute pipelines cached by (shader, overrides), never by shape: shapes travel in a uniform buffer,
// so one pipeline serves every B, H, T, S, D. Modules and pipelines carry labels that name the shader
// and its overrides, which is what WebGPU error messages and GPU debuggers show.

export class PipelineCache {
  constructor(device, sources /* {name: WGSL text} */) {
    this.device = device;
    this.sources = sources;
    this.modules = new Map();
    this.pipelines = new Map(); // key -> Promise<GPUComputePipeline>
  }

  static key(name, overrides) {
    const parts = Object.keys(overrides).sort().map((k) => `${k}=${overrides[k]}`);
    return `${name}{${parts.join(',')}}`;
  }

  module(name) {
    let module = this.modules.get(name);
    if (!module) {
      const code = this.sources[name];
      if (typeof code !== 'string') throw new Error(`no WGSL shader named '${name}'`);
      module = this.device.createShaderModule({ label: `attnlab ${name}.wgsl`, code });
      this.modules.set(name, module);
    }
    return module;
  }

  // -> Promise<GPUComputePipeline>; a WGSL or override error rejects with the compiler's messages.
  get(name, overrides = {}) {
    const key = PipelineCache.key(name, overrides);
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      const module = this.module(name);
      pipeline = this.device
        .createComputePipelineAsync({
          label: `attnlab ${key}`,
          layout: 'auto',
          compute: { module, entryPoint: 'main', constants: overrides },
        })
        .catch(async (error) => {
          this.pipelines.delete(key);
          const info = await module.getCompilationInfo?.().catch(() => null);
          const messages = (info?.messages ?? [])
            .map((m) => `${name}.wgsl:${m.lineNum}:${m.linePos} ${m.type}: ${m.message}`)
            .join('\n');
          throw new Error(`pipeline ${key} failed: ${error?.message ?? error}${messages ? `\n${messages}` : ''}`);
        });
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  get size() {
    return this.pipelines.size;
  }
}
