// The attention kernel on its own, for a lab's sections that compute with it outside training (the
// Lookup lab's hard and soft attention): the same backend choice as a training run, the WebGPU
// kernel under its own call name (so it never disturbs a training step's resident tensors), and the
// CPU if the GPU device goes away.
import { BACKEND_LABELS } from '../backends.js';
import { chooseBackend } from './backend_choice.js';

const CALL = 'section';

export class KernelRunner {
  /** module: the loaded WASM module; requested: auto | webgpu | simd | scalar; gpu*: as for a session. */
  constructor({ module, requested = 'auto', gpuAttention = null, gpuReason = 'no adapter', gpuSoftware = false }) {
    this.module = module;
    this.requested = requested;
    this.gpu = gpuAttention;
    this.gpuReason = gpuReason;
    this.gpuSoftware = gpuSoftware;
    this.lostReason = null;
  }

  choose(shape) {
    const gpu = this.lostReason ? null : this.gpu;
    return chooseBackend({ module: this.module, requested: this.requested, gpu, gpuReason: this.lostReason ?? this.gpuReason, gpuSoftware: this.gpuSoftware }, shape);
  }

  /** {B, H, T, S, D, q, k, v, scale?} -> {weights, out, choice: {backend, label, reason}} */
  async forward(args) {
    const { B, H, T, S, D } = args;
    const choice = this.choose({ B, H, T, S, D });
    const label = (backend) => BACKEND_LABELS[backend];
    if (choice.backend === 'webgpu') {
      try {
        const { weights, out } = await this.gpu.forward({ ...args, readWeights: true, call: CALL });
        return { weights, out, choice: { ...choice, label: `${label('webgpu')} ran: ${choice.reason}` } };
      } catch (error) {
        if (error?.name !== 'WebGpuDeviceLost') throw error;
        this.lostReason = `device lost (${error.message})`;
        return this.forward(args);
      }
    }
    const { weights, out } = this.module.attentionForward({ ...args, backend: choice.backend });
    return { weights, out, choice: { ...choice, label: `${label(choice.backend)} ran: ${choice.reason}` } };
  }
}
