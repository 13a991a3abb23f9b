// Every lab's trainer (core/trainers/registry.h) through the one raw class, the labs' own subclasses,
// and the digit asset the Lookup lab trains on. trainerClasses(mod) makes them for one loaded module.
import { AttnLabError, backendCode, check, checkInteger } from './checks.js';
import { Layer, Owned } from './owned.js';
import { decodeRecord, encodeRecord } from './records.js';
import { runStagedCalls } from './staged_calls.js';

export function trainerClasses(mod) {
  /** The digit asset (mnist10k.bin.gz, inflated): parsed once, shared by every LookupTrainer. */
  class Digits extends Owned {
    /** bytes: Uint8Array of the inflated asset; a malformed one throws AttnLabError and keeps nothing. */
    constructor(bytes) {
      const raw = new mod._RawDigits();
      const error = raw._load(bytes);
      if (error) {
        raw.delete();
        throw new AttnLabError(error);
      }
      super(raw, 'Digits');
    }
    get count() { return this.raw._count(); }
    /** {pixels: Uint8Array [count, rows*cols], labels: Uint8Array [count], rows, cols} */
    images(first = 0, count = this.count) {
      return this.raw._images(checkInteger('first', first, { min: 0 }), checkInteger('count', count, { min: 0 }));
    }
  }

  const trainerIds = () => JSON.parse(mod._RawTrainer._trainer_ids());

  // Any lab's trainer (core/trainers/trainer.h), by its registry id, through the one raw class: CPU
  // steps with their metrics, the learning rate, records (config, evaluation, inspection, data), the
  // parameters with PyTorch names (Layer), and the staged step through which a kernel outside C++
  // (WebGPU) joins a training step. assets: {digits} for the Lookup lab.
  class Trainer extends Layer {
    constructor(id, config, assets = {}, what = 'Trainer') {
      const digits = assets?.digits instanceof Digits ? assets.digits.raw : null;
      const text = encodeRecord(config);
      check(mod._RawTrainer._config_error(String(id), text, digits));
      super(new mod._RawTrainer(String(id), text, digits), what);
      this.id = String(id);
    }
    /** The default config of trainer `id` (with the notebook's step count, `steps`); variant: a task. */
    static defaults(id, variant = '') {
      const text = mod._RawTrainer._defaults(String(id), variant);
      if (!text) throw new AttnLabError(`unknown trainer '${id}': the trainers are ${trainerIds().join(', ')}`);
      return JSON.parse(text);
    }
    _record() {
      const out = decodeRecord(this.raw._result(), this.raw);
      this.raw._release();
      return out;
    }
    get config() { return JSON.parse(this.raw._config()); }
    get stepsDone() { return this.raw._steps_done(); }
    /** The pass over the training data of the last step (1, 2, ...); 0 for a trainer without epochs. */
    get epoch() { return this.raw._epoch(); }
    /** Runs `steps` steps on a CPU kernel -> {losses, accuracies} (Float32Array each). */
    train(steps, { backend } = {}) {
      check(this.raw._train(checkInteger('steps', steps), backendCode(backend)));
      const m = this.raw._metrics();
      const losses = new Float32Array(steps), accuracies = new Float32Array(steps);
      for (let i = 0; i < steps; i++) {
        losses[i] = m[2 * i];
        accuracies[i] = m[2 * i + 1];
      }
      return { losses, accuracies };
    }
    setLearningRate(lr) { check(this.raw._set_lr(lr)); }
    /** options: the lab's evaluation settings (Alignment: {samples}) -> the lab's evaluation record. */
    evaluate(options = {}, { backend } = {}) {
      check(this.raw._evaluate(encodeRecord(options), backendCode(backend)));
      return this._record();
    }
    /** One input (the lab's form) -> its attention weights and the lab's outputs. */
    inspect(input, { backend } = {}) {
      check(this.raw._inspect(encodeRecord(input), backendCode(backend)));
      return this._record();
    }
    /** A named part of the trainer's data (Alignment: 'fixedSample'; Lookup: 'database', 'heldOut', 'training'). */
    data(part) {
      check(this.raw._data(String(part)));
      return this._record();
    }
    /**
     * One training step with its attention kernel run outside the module (the page's WebGPU): the step's
     * forward calls (one for most labs, one a layer for the Induction lab's), then its backward calls in
     * reverse order, through the staged-call protocol (wasm_bindings/js/staged_calls.js). kernel:
     * {forward(args, {index}) -> {weights (null allowed when args.readWeights is false), out},
     * backward(args, {index}) -> {dQ, dK, dV}}, each may return a Promise (a KernelRunner's); index: the
     * forward call's place in the step (a backward's: the forward it differentiates). -> the step's
     * record {step, epoch?, loss, accuracy}.
     */
    async stepWith({ forward, backward }) {
      this.raw._begin_step();
      await runStagedCalls(this.raw, forward, check, { backward });
      return decodeRecord(this.raw._end_step(), this.raw);
    }
  }

  /**
   * The Alignment lab's model and trainer (course notebook 01). config: {task, seed, dModel, heads,
   * batch, lr, vocab, length, pairs, keyRange, valueRange, uniqueKeys, positional}.
   */
  class AlignmentTrainer extends Trainer {
    static defaults(task = 'copy') {
      return JSON.parse(mod._RawTrainer._defaults('alignment', task));
    }
    /** An upper bound on the bytes a model of this config needs to train (refused over 512 MB). */
    static trainingBytes(config = {}) {
      const text = encodeRecord(config);
      const error = mod._RawTrainer._config_error('alignment', text, null);
      if (error && !error.startsWith('these settings need')) throw new AttnLabError(error); // over budget: still an answer
      return mod._RawTrainer._training_bytes('alignment', text);
    }
    constructor(config = {}) {
      super('alignment', config, {}, 'AlignmentTrainer');
    }
    /** Accuracy, loss, Bayes ceiling and attention pattern mass on a fixed fresh batch. */
    evaluate(samples = 1024, { backend } = {}) {
      return super.evaluate({ samples: checkInteger('samples', samples) }, { backend });
    }
    // inspect: {tokens} or {keys, values, query} -> {H, T, S, weights, weightsMean, predictions, confidence}
    fixedSample() { return this.data('fixedSample'); }
  }

  /** The Lookup lab's trainer (course notebook 02): attention over a database of 100 real digits. */
  class LookupTrainer extends Trainer {
    static defaults() {
      return JSON.parse(mod._RawTrainer._defaults('lookup', ''));
    }
    /**
     * An upper bound on the bytes a model of this config needs to train (refused over 512 MB), for the
     * lab's 10,000 digits; needs no digits. A config wrong in another way throws its message.
     */
    static trainingBytes(config = {}) {
      const bytes = mod._RawTrainer._training_bytes('lookup', encodeRecord(config));
      if (bytes < 0) throw new AttnLabError(`not a Lookup config: ${JSON.stringify(config)}`);
      return bytes;
    }
    /** config: {seed, heads, embedDim, batch, lr, databaseSize (10..1000, the notebook's 100)}; digits: a Digits. */
    constructor(config = {}, digits) {
      if (!(digits instanceof Digits)) throw new AttnLabError('LookupTrainer needs the digits: new LookupTrainer(config, new Digits(bytes))');
      super('lookup', config, { digits }, 'LookupTrainer');
    }
    // train() gives {losses, accuracies}: the retrieval's MSE and the batch's top-1 label match per step.
    /** On the 2,000 held-out queries: {queries, top1, top10, mse, meanImageMse, nearestNeighbourTop1, nearestNeighbourMse, chance} */
    evaluate({ backend } = {}) {
      return super.evaluate({}, { backend });
    }
    // inspect: {heldOut: index} or {pixels: 784 normalised values} -> {H, S, P, label, weights, weightsMean, retrieval, topIndex, topLabel, topWeight}
    /** 'database' | 'heldOut' | 'training' -> {pixels: Uint8Array [N, 784], labels: Uint8Array [N]} */
    images(part) { return this.data(part); }
  }

  /**
   * The Count lab's trainer ("One query", course notebook 05): more 2s than 4s in 10 digits? config: {seed, lr, batch}.
   * evaluate({samples}) -> {samples, accuracy, tieAccuracy, ties, loss, massOn24, uniformMassOn24, majority};
   * inspect({tokens: 10 digits} | {batch: N*10 digits}) -> {N, weights [N,10], values [N,10], weighted [N],
   * probability [N], label [N], loss}.
   */
  class CountTrainer extends Trainer {
    static defaults() {
      return JSON.parse(mod._RawTrainer._defaults('count', ''));
    }
    constructor(config = {}) {
      super('count', config, {}, 'CountTrainer');
    }
    /** {tokens: Int32Array [5 * 10]}: the 5 sequences the attention panels show (the seed's). */
    fixedSample() { return this.data('fixedSample'); }
  }

  /**
   * The Induction lab's trainer: a two-layer (1-4) transformer in TransformerLens's layout on repeated
   * random tokens or characters of a text (docs/induction.md). config: {task, layers, heads, dModel, dHead,
   * mlp, layerNorm, vocab, context, batch, lr, seed, text}. Its parameters are a HookedTransformer's
   * state_dict (embed.W_E, blocks.0.attn.W_Q [H, E, D], ...).
   */
  class InductionTrainer extends Trainer {
    static defaults(task = 'repeat') {
      return JSON.parse(mod._RawTrainer._defaults('induction', task));
    }
    /** An upper bound on the bytes a model of this config needs to train (refused over 512 MB). */
    static trainingBytes(config = {}) {
      const text = encodeRecord(config);
      const error = mod._RawTrainer._config_error('induction', text, null);
      if (error && !error.startsWith('these settings need')) throw new AttnLabError(error);
      return mod._RawTrainer._training_bytes('induction', text);
    }
    constructor(config = {}) {
      super('induction', config, {}, 'InductionTrainer');
    }
    /**
     * {samples (256), ablate: ['L.H', ...] (heads switched off for this evaluation alone)} -> {samples,
     * loss, accuracy, repeatLoss, restLoss, positionLoss [T-1], iclScore, earlyPosition, latePosition,
     * layers, heads, scores: {previous, duplicate, induction, first} ([L*H] each), ablated}
     */
    evaluate(options = {}, { backend } = {}) {
      return super.evaluate(options, { backend });
    }
    /** {tokens: Int32Array [context], copyStart, segment}: the sequence the page draws every head on. */
    fixedSample() { return this.data('fixedSample'); }
    /** The run so far: {every, layers, heads, steps, loss, repeatLoss, restLoss, previous, duplicate, induction, first, phaseStep, formedStep}. */
    timeline() { return this.data('timeline'); }
    /** Train on these sequences (each `context` ids) in order instead of fresh draws; throws AttnLabError naming a bad one. */
    setData(sequences) {
      check(this.raw._set_data(JSON.stringify({ sequences })));
    }
  }

  // The labs' own classes, for createTrainer; a trainer registered in C++ without one gets the generic class.
  const TRAINER_CLASSES = {
    alignment: (config) => new AlignmentTrainer(config),
    lookup: (config, assets) => new LookupTrainer(config, assets?.digits),
    count: (config) => new CountTrainer(config),
    induction: (config) => new InductionTrainer(config),
  };

  /** A trainer by id: the lab's class (AlignmentTrainer, LookupTrainer, CountTrainer) where it has one. assets: {digits}. */
  function createTrainer(id, config = {}, assets = {}) {
    const make = Object.hasOwn(TRAINER_CLASSES, id) ? TRAINER_CLASSES[id] : null;
    return make ? make(config, assets) : new Trainer(id, config, assets);
  }

  return { Digits, Trainer, AlignmentTrainer, LookupTrainer, CountTrainer, InductionTrainer, trainerIds, createTrainer };
}
