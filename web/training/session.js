// One training run of a lab, shared by the Web Worker (web/worker.js) and the CLI (web/cli/), so both
// run the identical trainer. It picks the backend (and says why), runs steps on a CPU kernel or
// through the staged step with the WebGPU kernel, keeps attention snapshots of the fixed sample,
// and falls back to SIMD128 without losing the run if the GPU device goes away.
import { BACKEND_LABELS } from '../backends.js';
import { loadStateDict, stateDictOf } from '../io/state_dict.js';

export const SNAPSHOT_EVERY = 5; // steps between attention snapshots for the timeline
const EVAL_SAMPLES = 1024;

export class TrainingSession {
  /**
   * lab: the loaded module (web/loader.js); config: the trainer's config; backend: auto | webgpu |
   * simd | scalar; gpuAttention: a ready WebGpuAttention or null; gpuReason: why there is none.
   */
  static create({ lab, config, backend = 'auto', gpuAttention = null, gpuReason = 'no adapter', gpuSoftware = false }) {
    return new TrainingSession(lab, config, backend, gpuAttention, gpuReason, gpuSoftware);
  }

  constructor(lab, config, requested, gpuAttention, gpuReason, gpuSoftware) {
    this.lab = lab;
    this.trainer = new lab.AlignmentTrainer(config); // throws AttnLabError on a bad config
    this.config = this.trainer.config;
    this.requested = requested;
    this.gpu = gpuAttention;
    const c = this.config;
    this.shape = { B: c.batch, H: c.heads, T: c.outLength, S: c.inLength, D: c.dModel / c.heads };
    const env = { simd128: lab.cpuBackends.includes('simd128'), webgpu: !!gpuAttention, webgpuReason: gpuReason };
    if (requested === 'auto' && gpuAttention && gpuSoftware) {
      env.webgpu = false;
      env.webgpuReason = `software adapter (${gpuAttention.adapterDescription}) is slower than the CPU`;
    }
    const choice = lab.selectBackend(requested, env, this.shape);
    this.backend = choice.backend;
    this.reason = choice.reason;
    this.cpuFallback = env.simd128 ? 'simd128' : 'scalar';
    this.losses = [];
    this.accuracies = [];
    this.snapshots = [];
    this.lastEvaluation = null;
    this.takeSnapshot();
  }

  get step() { return this.trainer.stepsDone; }
  get backendLabel() { return BACKEND_LABELS[this.backend]; }
  get choice() { return { backend: this.backend, label: this.backendLabel, reason: this.reason }; }
  /**
   * Where a forced backend did not run to the end: {requested, fellBackAt, reason}, else null.
   * fellBackAt is the first step that ran elsewhere (1: none ran on it, e.g. no adapter).
   */
  get fallback() {
    if (this.requested === 'auto') return null;
    const requested = this.requested === 'simd' ? 'simd128' : this.requested;
    if (requested === this.backend) return null;
    return { requested, fellBackAt: this.fellBackAt ?? 1, reason: this.reason };
  }

  /** Runs n steps; returns the new metrics. */
  async runSteps(n) {
    const start = this.losses.length;
    let left = n;
    // WebGPU steps one at a time (each awaits the GPU); if the device goes, the rest run on the CPU.
    while (left > 0 && this.backend === 'webgpu') {
      const m = await this.gpuStep();
      this.appendMetrics([m.loss], [m.accuracy]);
      left--;
    }
    if (left > 0) {
      const { losses, accuracies } = this.trainer.train(left, { backend: this.backend });
      this.appendMetrics(losses, accuracies);
    }
    return { step: this.step, losses: this.losses.slice(start), accuracies: this.accuracies.slice(start) };
  }

  /** Like runSteps but keeps a snapshot every SNAPSHOT_EVERY steps. */
  async runStepsWithSnapshots(n) {
    const start = this.losses.length;
    let left = n;
    while (left > 0) {
      const untilSnapshot = SNAPSHOT_EVERY - (this.step % SNAPSHOT_EVERY);
      const chunk = Math.min(left, untilSnapshot);
      await this.runSteps(chunk);
      left -= chunk;
      if (this.step % SNAPSHOT_EVERY === 0) this.takeSnapshot();
    }
    return { step: this.step, losses: this.losses.slice(start), accuracies: this.accuracies.slice(start) };
  }

  appendMetrics(losses, accuracies) {
    for (let i = 0; i < losses.length; i++) {
      this.losses.push(losses[i]);
      this.accuracies.push(accuracies[i]);
    }
  }

  // One step with the attention kernel on the GPU: the C++ trainer runs everything else. Two
  // readbacks per step, one per kernel pass: the loss between the passes is computed in C++, so one
  // per step would need every layer on the GPU. The forward reads back only the output: the
  // backward uses the weights that stayed on the GPU.
  async gpuStep() {
    const t = this.trainer;
    t.beginStep();
    const shape = t.kernelShape();
    let weightsOnCpu = false;
    try {
      const { out } = await this.gpu.forward({
        ...shape, q: t.kernelView('q'), k: t.kernelView('k'), v: t.kernelView('v'), readWeights: false,
      });
      t.kernelView('out').set(out);
    } catch (error) {
      this.loseGpu(error);
      t.runKernelForward(this.backend);
      weightsOnCpu = true;
    }
    t.middleStep();
    if (this.backend === 'webgpu') {
      try {
        const { dQ, dK, dV } = await this.gpu.backward({ dOut: t.kernelView('dOut') });
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
    const why = error.message;
    this.fellBackAt = this.step + 1;
    this.backend = this.cpuFallback;
    this.reason = `WebGPU: device lost at step ${this.step + 1} (${why}) -> ${BACKEND_LABELS[this.backend]}`;
    try { this.gpu?.destroy(); } catch { /* already gone */ }
    this.gpu = null;
  }

  takeSnapshot() {
    const sample = this.fixedSample();
    const inspection = this.trainer.inspect(this.sampleArgs(sample), { backend: this.cpuBackend() });
    const snapshot = { step: this.step, ...inspection };
    this.snapshots.push(snapshot);
    return snapshot;
  }

  cpuBackend() { return this.backend === 'webgpu' ? this.cpuFallback : this.backend; }

  fixedSample() {
    this._fixed ??= this.trainer.fixedSample();
    return this._fixed;
  }

  sampleArgs(sample) {
    return this.config.task === 'pointer'
      ? { keys: sample.keys, values: sample.values, query: sample.query }
      : { tokens: sample.keys };
  }

  evaluate() {
    this.lastEvaluation = { step: this.step, ...this.trainer.evaluate(EVAL_SAMPLES, { backend: this.cpuBackend() }) };
    return this.lastEvaluation;
  }

  inspect(sample) {
    return this.trainer.inspect(sample, { backend: this.cpuBackend() });
  }

  setLearningRate(lr) {
    this.trainer.setLearningRate(lr);
    this.config = this.trainer.config;
  }

  /**
   * Loads a state_dict ({name: {shape, data}}) into the model, or throws a StateDictError listing every
   * mismatch and changes nothing. The timeline starts again from the loaded weights.
   */
  loadStateDict(tensors) {
    loadStateDict(this.trainer, tensors);
    this.snapshots = [];
    this.takeSnapshot();
  }

  /** {name: {shape, data}} in PyTorch's state_dict naming. */
  stateDict() {
    return stateDictOf(this.trainer);
  }

  dispose() {
    this.trainer.delete();
  }
}
