// Training steps of any lab's trainer on the backend chosen for it, with the WebGPU kernel in the
// middle of the staged step and a fallback to the CPU if the GPU device goes away. A trainer only
// needs the staged-step interface every bound trainer has (docs/api.md): train(n, {backend}),
// beginStep(), kernelShape() -> {B, H, T, S, D, scale, readWeights}, kernelView(name), middleStep(),
// endStep(), runKernelForward(backend), runKernelBackward(backend), stepsDone. So WebGPU serves every
// lab with no per-lab code.
import { BACKEND_LABELS, backendOfRequest } from '../backends.js';
import { chooseBackend, cpuFallbackOf } from './backend_choice.js';

export class BackendSteps {
  /**
   * lab: the loaded module; trainer: a bound trainer; shape: {B, H, T, S, D} of its attention call (for
   * the backend choice); requested: auto | webgpu | simd | scalar; gpuAttention: a ready
   * WebGpuAttention or null; gpuReason: why there is none; gpuSoftware: the adapter is a CPU.
   */
  constructor({ lab, trainer, shape, requested = 'auto', gpuAttention = null, gpuReason = 'no adapter', gpuSoftware = false }) {
    this.trainer = trainer;
    this.requested = requested;
    this.gpu = gpuAttention;
    const choice = chooseBackend({ module: lab, requested, gpu: gpuAttention, gpuReason, gpuSoftware }, shape);
    this.backend = choice.backend;
    this.reason = choice.reason;
    this.cpuFallback = cpuFallbackOf(lab);
    this.fellBackAt = null;
  }

  get step() { return this.trainer.stepsDone; }
  get backendLabel() { return BACKEND_LABELS[this.backend]; }
  get choice() { return { backend: this.backend, label: this.backendLabel, reason: this.reason }; }
  /** The CPU kernel for evaluations and inspections (the WebGPU kernel runs only inside a step). */
  get cpuBackend() { return this.backend === 'webgpu' ? this.cpuFallback : this.backend; }

  /**
   * Where a forced backend did not run to the end: {requested, fellBackAt, reason}, else null.
   * fellBackAt is the first step that ran elsewhere (1: none ran on it, e.g. no adapter).
   */
  get fallback() {
    if (this.requested === 'auto') return null;
    const requested = backendOfRequest(this.requested);
    if (requested === this.backend) return null;
    return { requested, fellBackAt: this.fellBackAt ?? 1, reason: this.reason };
  }

  /** Runs n steps -> {losses, accuracies} (arrays of n). */
  async run(n) {
    const losses = [], accuracies = [];
    let left = n;
    // WebGPU steps one at a time (each awaits the GPU); if the device goes, the rest run on the CPU.
    while (left > 0 && this.backend === 'webgpu') {
      const m = await this.gpuStep();
      losses.push(m.loss);
      accuracies.push(m.accuracy);
      left--;
    }
    if (left > 0) {
      const m = this.trainer.train(left, { backend: this.backend });
      losses.push(...m.losses);
      accuracies.push(...m.accuracies);
    }
    return { losses, accuracies };
  }

  // One step with the attention kernel on the GPU: the C++ trainer runs everything else. Two
  // readbacks per step, one per kernel pass: the loss between the passes is computed in C++, so one
  // per step would need every layer on the GPU. The forward reads back only the output: the
  // backward uses the weights that stayed on the GPU.
  async gpuStep() {
    const t = this.trainer;
    t.beginStep();
    const { readWeights, ...shape } = t.kernelShape();
    let weightsOnCpu = false;
    try {
      // Only the output comes back unless the model uses the weights themselves (the Lookup lab's
      // retrieval): the backward uses the copy that stays on the GPU.
      const { out, weights } = await this.gpu.forward({
        ...shape, q: t.kernelView('q'), k: t.kernelView('k'), v: t.kernelView('v'), readWeights,
      });
      t.kernelView('out').set(out);
      if (readWeights) t.kernelView('weights').set(weights);
    } catch (error) {
      this.loseGpu(error);
      t.runKernelForward(this.backend);
      weightsOnCpu = true;
    }
    t.middleStep();
    if (this.backend === 'webgpu') {
      try {
        const { dQ, dK, dV } = await this.gpu.backward({ dOut: t.kernelView('dOut'), dWeights: t.kernelView('dWeights') });
        t.kernelView('dQ').set(dQ);
        t.kernelView('dK').set(dK);
        t.kernelView('dV').set(dV);
        return t.endStep();
      } catch (error) {
        this.loseGpu(error);
      }
    }
    // The CPU backward needs this step's weights, which were never read back from the GPU.
    if (!weightsOnCpu) t.runKernelForward(this.backend);
    t.runKernelBackward(this.backend);
    return t.endStep();
  }

  // The device is gone: carry on with the same buffers on the CPU. The run is kept. Anything else
  // (a bad argument to the WebGPU API, a shader bug) is a bug and is rethrown, never hidden.
  loseGpu(error) {
    if (error?.name !== 'WebGpuDeviceLost') throw error;
    this.fellBackAt = this.step + 1;
    this.backend = this.cpuFallback;
    this.reason = `WebGPU: device lost at step ${this.step + 1} (${error.message}) -> ${BACKEND_LABELS[this.backend]}`;
    try { this.gpu?.destroy(); } catch { /* already gone */ }
    this.gpu = null;
  }
}
