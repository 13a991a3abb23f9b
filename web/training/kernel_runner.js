// The page's attention kernel, for every call of the staged-call protocol (wasm_bindings/js/staged_calls.js):
// a lab's sections (the Lookup lab's hard and soft attention, BERT's and Marian's layers) and a training
// step's forward and backward calls. The one copy of the rules: the backend choice
// (backend_choice.js), the WebGPU kernel under a call name (a section's never disturbs a training step's
// resident tensors), and the CPU when the GPU device goes away, from then on.
import { BACKEND_LABELS } from '../backends.js';
import { backendRequest, chooseBackend } from './backend_choice.js';

const SECTION = 'section';

export class KernelRunner {
  /** module: the loaded WASM module; request: {requested, gpu} (backend_choice.js backendRequest). */
  constructor({ module, request }) {
    this.module = module;
    this.request = backendRequest(request);
    this.gpu = this.request.gpu.attention;
    this.lostReason = null;
    this.lostMessage = null; // the device-lost error's own message
    this.onGpu = new Set(); // call names whose last forward ran on the GPU (their weights are there)
  }

  choose(shape) {
    const { request, lostReason } = this;
    const gpu = lostReason ? { ...request.gpu, attention: null, reason: lostReason } : request.gpu;
    return chooseBackend(this.module, { ...request, gpu }, shape);
  }

  /**
   * {B, H, T, S, D, q, k, v, scale?, readWeights?, mask?...} -> {weights, out, choice: {backend, label,
   * reason}}. readWeights false: on the GPU only `out` comes back (weights null) and the weights stay
   * there for this call's backward. call: the WebGPU call name (a training step passes 'step').
   */
  async forward(args, { call = SECTION } = {}) {
    const { B, H, T, S, D } = args;
    const choice = this.choose({ B, H, T, S, D });
    const label = (backend) => BACKEND_LABELS[backend];
    if (choice.backend === 'webgpu') {
      try {
        const { weights, out } = await this.gpu.forward({ ...args, readWeights: args.readWeights ?? true, call });
        this.onGpu.add(call);
        return { weights, out, choice: { ...choice, label: `${label('webgpu')} ran: ${choice.reason}` } };
      } catch (error) {
        this.lose(error);
        return this.forward(args, { call });
      }
    }
    this.onGpu.delete(call);
    const { weights, out } = this.module.attentionForward({ ...args, backend: choice.backend });
    return { weights, out, choice: { ...choice, label: `${label(choice.backend)} ran: ${choice.reason}` } };
  }

  /**
   * The backward of `call`'s last forward: {B, H, T, S, D, scale, q, k, v, weights (null: recomputed
   * here from q, k, v), dOut, dWeights?} -> {dQ, dK, dV}. On the GPU when that forward ran there (its
   * weights are still there); else, or if the device goes, on the CPU kernel, with the same bits as
   * the C++ step.
   */
  async backward(args, { call = SECTION } = {}) {
    if (this.onGpu.has(call) && !this.lostReason) {
      try {
        return await this.gpu.backward({ dOut: args.dOut, dWeights: args.dWeights ?? undefined, call });
      } catch (error) {
        this.lose(error);
      }
    }
    this.onGpu.delete(call);
    const backend = this.choose(args).backend;
    const weights = args.weights ?? this.module.attentionForward({ ...args, backend }).weights;
    const { dWeights, ...rest } = args;
    return this.module.attentionBackward({ ...rest, weights, ...(dWeights ? { dWeights } : {}), backend });
  }

  // The device is gone: every later call runs on the CPU, and the choice says why. Anything else (a bad
  // argument to the WebGPU API, a shader bug) is a bug and is rethrown, never hidden.
  lose(error) {
    if (error?.name !== 'WebGpuDeviceLost') throw error;
    this.lostMessage ??= error.message;
    this.lostReason ??= `device lost (${error.message})`;
  }
}
