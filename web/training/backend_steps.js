// Training steps of any lab's trainer on the backend chosen for it. On a CPU backend the C++ trainer
// runs whole steps (train(n)); on WebGPU each step is staged (core/trainers/staged_step.h) and its
// forward and backward attention calls run through the one driver of the staged-call protocol
// (wasm_bindings/js/staged_calls.js) on a KernelRunner (kernel_runner.js): the same rules as every model's calls, the
// CPU kernel for the rest of the run if the GPU device goes away. So WebGPU serves every lab with no
// per-lab code.
import { BACKEND_LABELS, backendOfRequest, cpuKernel } from '../backends.js';
import { KernelRunner } from './kernel_runner.js';

// The WebGPU call name of a training step's kernel (a section's calls use their own).
const STEP_CALL = 'step';

export class BackendSteps {
  /**
   * lab: the loaded module; trainer: a bound trainer; shape: {B, H, T, S, D} of its attention call (for
   * the backend choice); request: {requested, gpu} (backend_choice.js backendRequest).
   */
  constructor({ lab, trainer, shape, request }) {
    this.trainer = trainer;
    // The run's backend is the one its kernel runner would choose for the step's shape (one copy of the rules).
    this.kernel = new KernelRunner({ module: lab, request });
    this.requested = this.kernel.request.requested;
    this.gpu = this.kernel.gpu;
    const choice = this.kernel.choose(shape);
    this.backend = choice.backend;
    this.reason = choice.reason;
    // The CPU kernel for the rest of the run if the GPU device goes away: SIMD128 where the module has it.
    this.cpuFallback = cpuKernel('auto', lab.cpuBackends);
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
  // readbacks per step, one per kernel call: the loss between the calls is computed in C++, so one
  // per step would need every layer on the GPU. The forward reads back only the output unless the
  // model reads the weights (the Lookup lab's retrieval): the backward uses the copy on the GPU.
  // A step of several attention calls (the Induction lab's layers) gives each its own resident tensors on
  // the GPU: the first keeps the step's call name, the others add their place in the pass.
  async gpuStep() {
    const kernel = this.kernel;
    const callOf = ({ index }) => (index === 0 ? STEP_CALL : `${STEP_CALL}:${index}`);
    const metrics = await this.trainer.stepWith({
      forward: (args, at) => kernel.forward(args, { call: callOf(at) }),
      backward: (args, at) => kernel.backward(args, { call: callOf(at) }),
    });
    if (kernel.lostMessage !== null) this.loseGpu(kernel.lostMessage);
    return metrics;
  }

  // The device went during this step (which the runner finished on the CPU): the rest of the run
  // trains on the CPU. The run is kept.
  loseGpu(message) {
    this.fellBackAt = this.step;
    this.backend = this.cpuFallback;
    this.reason = `WebGPU: device lost at step ${this.step} (${message}) -> ${BACKEND_LABELS[this.backend]}`;
    try { this.gpu?.destroy(); } catch { /* already gone */ }
    this.gpu = null;
  }
}
