// One training run of any lab, shared by the Web Worker (web/worker.js) and the CLI (web/cli/), so
// both run the identical trainer. The lab's declaration (web/labs/*.js, `trainer`) says how to make
// its trainer, the shape of its attention call, its fixed sample, and how to evaluate and inspect;
// everything else is here. Its steps run through BackendSteps (the backend choice and why, the
// WebGPU kernel in the staged step, the fallback to the CPU if the GPU device goes away); this file
// keeps the run's metrics and the snapshots of the fixed sample.
import { BackendSteps } from './backend_steps.js';
import { ThinningList, typedArrayBytes } from './bounded_history.js';
import { loadStateDict, stateDictOf } from '../io/state_dict.js';

export const SNAPSHOT_EVERY = 5; // steps between attention snapshots for the timeline
export class TrainingSession {
  /**
   * module: the loaded WASM module (web/loader.js); lab: the lab's declaration (web/labs/*.js);
   * config: its trainer's config; assets: what lab.trainer.assets named, loaded (web/training/assets.js);
   * request: {requested, gpu}, the backend asked for and what the WebGPU probe found
   * (backend_choice.js backendRequest).
   */
  static create(options) {
    return new TrainingSession(options);
  }

  /** As create. */
  constructor({ module, lab, config, assets = {}, request }) {
    this.module = module;
    this.spec = lab.trainer;
    this.trainer = module.createTrainer(this.spec.id, config, assets); // throws AttnLabError on a bad config
    this.config = this.trainer.config;
    this.shape = this.spec.shape(this.config);
    this.steps = new BackendSteps({ lab: module, trainer: this.trainer, shape: this.shape, request });
    // Snapshots taken and not yet handed to the page (drainSnapshots); bounded in case nobody drains.
    this.pendingSnapshots = new ThinningList({ maxCount: 512, maxBytes: 64 * 1024 * 1024, sizeOf: typedArrayBytes });
    this.lastSnapshot = null;
    this.lastEvaluation = null;
    this.weightsFile = null; // the file its weights were imported from (worker.js's importWeights), or null
    this.takeSnapshot();
  }

  get step() { return this.trainer.stepsDone; }
  get backend() { return this.steps.backend; }
  get reason() { return this.steps.reason; }
  get backendLabel() { return this.steps.backendLabel; }
  get choice() { return this.steps.choice; }
  get fallback() { return this.steps.fallback; }

  /** Runs n steps; returns their metrics (the session keeps none: the page keeps a bounded history). */
  async runSteps(n) {
    const { losses, accuracies } = await this.steps.run(n);
    return { step: this.step, losses, accuracies };
  }

  /** Like runSteps but takes a snapshot every SNAPSHOT_EVERY steps. */
  async runStepsWithSnapshots(n) {
    const losses = [], accuracies = [];
    let left = n;
    while (left > 0) {
      const untilSnapshot = SNAPSHOT_EVERY - (this.step % SNAPSHOT_EVERY);
      const chunk = Math.min(left, untilSnapshot);
      const m = await this.runSteps(chunk);
      losses.push(...m.losses);
      accuracies.push(...m.accuracies);
      left -= chunk;
      if (this.step % SNAPSHOT_EVERY === 0) this.takeSnapshot();
    }
    return { step: this.step, losses, accuracies };
  }

  /** The snapshots taken since the last call, oldest first. */
  drainSnapshots() {
    const out = this.pendingSnapshots.items;
    this.pendingSnapshots.clear();
    return out;
  }

  takeSnapshot() {
    const inspection = this.inspect(this.spec.sampleArgs(this.config, this.fixedSample()));
    const snapshot = { step: this.step, ...inspection };
    this.pendingSnapshots.push(snapshot);
    this.lastSnapshot = snapshot;
    return snapshot;
  }

  cpuBackend() { return this.steps.cpuBackend; }

  fixedSample() {
    this._fixed ??= this.spec.fixedSample(this.trainer);
    return this._fixed;
  }

  /** The steps a run of this config trains when the user gives no count. */
  get defaultSteps() {
    return this.spec.defaultSteps(this.module, this.config);
  }

  /** options: the lab's evaluation options (the Induction lab's heads switched off), for this evaluation alone. */
  evaluate(options = {}) {
    this.lastEvaluation = { step: this.step, ...this.spec.evaluate(this.trainer, this.cpuBackend(), options) };
    return this.lastEvaluation;
  }

  inspect(sample) {
    return this.spec.inspect(this.trainer, sample, this.cpuBackend());
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
    this.pendingSnapshots.clear();
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
