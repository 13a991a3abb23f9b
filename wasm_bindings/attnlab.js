// The idiomatic JS API over the raw Embind entries (bindings.cpp). It owns three rules:
//   1. a raw call that returns a message becomes a thrown AttnLabError (the instance keeps working);
//   2. results are copied out of the WASM heap at once (slice), since heap growth detaches views;
//   3. every object that holds C++ memory has delete(), and using it afterwards is a clear error.
// Documented in docs/api.md.
import { runStagedCalls } from '../web/training/staged_calls.js';

export class AttnLabError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnLabError';
  }
}

function check(message) {
  if (message) throw new AttnLabError(message);
}

function checkSeed(seed) {
  if (seed === undefined) return 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new AttnLabError(`seed must be an integer in [0, 4294967295], got ${seed}`);
  }
  return seed;
}

function checkInteger(name, value, { min = -Infinity } = {}) {
  if (!Number.isInteger(value)) throw new AttnLabError(`${name} must be an integer, got ${value}`);
  if (value < min) throw new AttnLabError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

const BACKEND_CODES = { scalar: 0, simd128: 1, simd: 1, webgpu: 2 };

function backendCode(backend) {
  if (backend === undefined) return BACKEND_CODES.simd128;
  const code = BACKEND_CODES[backend];
  if (code === undefined) {
    throw new AttnLabError(`backend must be one of scalar, simd128, webgpu, got '${backend}'`);
  }
  return code;
}

export function wrapModule(mod, { build }) {
  // A JS class around one raw C++ object.
  class Owned {
    constructor(raw, what) {
      this._raw = raw;
      this._what = what;
    }
    get raw() {
      if (!this._raw) throw new AttnLabError(`this ${this._what} was deleted`);
      return this._raw;
    }
    delete() {
      if (this._raw) this._raw.delete();
      this._raw = null;
    }
    get isDeleted() {
      return this._raw === null;
    }
  }

  class Layer extends Owned {
    parameterNames() {
      const names = this.raw._parameter_names();
      const out = [];
      for (let i = 0; i < names.size(); i++) out.push(names.get(i));
      names.delete();
      return out;
    }
    // {name: Float32Array} copies of the current values, in PyTorch's state_dict order.
    parameters() {
      const out = {};
      for (const name of this.parameterNames()) out[name] = this.raw._parameter(name).slice();
      return out;
    }
    gradients() {
      const out = {};
      for (const name of this.parameterNames()) out[name] = this.raw._gradient(name).slice();
      return out;
    }
    parameterShape(name) {
      return this.raw._parameter_shape(name);
    }
    setParameter(name, values) {
      check(this.raw._set_parameter(name, values));
    }
    zeroGrad() {
      this.raw._zero_grad();
    }
  }

  class Embedding extends Layer {
    constructor(numEmbeddings, embeddingDim, { seed } = {}) {
      check(mod._RawEmbedding._config_error(checkInteger('num_embeddings', numEmbeddings),
        checkInteger('embedding_dim', embeddingDim)));
      super(new mod._RawEmbedding(numEmbeddings, embeddingDim, checkSeed(seed)), 'Embedding');
      this.numEmbeddings = numEmbeddings;
      this.embeddingDim = embeddingDim;
    }
    /** ids: Int32Array [N] -> Float32Array [N, E] */
    forward(ids) {
      check(this.raw._forward(ids));
      return this.raw._output().slice();
    }
    backward(ids, dOutput) {
      check(this.raw._backward(ids, dOutput));
    }
  }

  class Linear extends Layer {
    constructor(inFeatures, outFeatures, { seed, bias = true } = {}) {
      check(mod._RawLinear._config_error(checkInteger('in_features', inFeatures),
        checkInteger('out_features', outFeatures)));
      super(new mod._RawLinear(inFeatures, outFeatures, checkSeed(seed), !!bias), 'Linear');
      this.inFeatures = inFeatures;
      this.outFeatures = outFeatures;
    }
    /** input: Float32Array [rows, in] -> Float32Array [rows, out] */
    forward(input, rows) {
      check(this.raw._forward(input, checkInteger('rows', rows)));
      return this.raw._output().slice();
    }
    /** dOutput [rows, out] -> dInput [rows, in]; accumulates weight and bias gradients. */
    backward(dOutput) {
      check(this.raw._backward(dOutput));
      return this.raw._d_input().slice();
    }
  }

  class MultiheadAttention extends Layer {
    constructor(embedDim, numHeads, { seed } = {}) {
      check(mod._RawMultiheadAttention._config_error(checkInteger('embed_dim', embedDim),
        checkInteger('num_heads', numHeads)));
      super(new mod._RawMultiheadAttention(embedDim, numHeads, checkSeed(seed)), 'MultiheadAttention');
      this.embedDim = embedDim;
      this.numHeads = numHeads;
    }
    /**
     * {batch, queryLength, keyLength, query, key, value, keyPaddingMask?, attnMask?, backend?}
     * -> {output [B,T,E], weights [B,H,T,S], weightsMean [B,T,S]}
     */
    forward(args) {
      const code = backendCode(args?.backend);
      check(this.raw._forward(args && { ...args, backend: code }));
      return {
        output: this.raw._output().slice(),
        weights: this.raw._weights().slice(),
        weightsMean: this.raw._weights_mean().slice(),
      };
    }
    /** dOutput [B,T,E], dWeights [B,H,T,S] or undefined -> {dQuery, dKey, dValue} */
    backward(dOutput, dWeights, { backend } = {}) {
      check(this.raw._backward(dOutput, dWeights ?? null, backendCode(backend)));
      return {
        dQuery: this.raw._d_query().slice(),
        dKey: this.raw._d_key().slice(),
        dValue: this.raw._d_value().slice(),
      };
    }
  }

  /**
   * The course's SelfAttention (notebook 03): Linear Q, K, V projections (inputDim -> inputDim), scale
   * 1/sqrt(inputDim), dropout on the weights. Its one attention call runs on the kernel you give (the
   * page's, WebGPU included), through the staged-call driver every model uses.
   */
  class SelfAttention extends Layer {
    constructor(inputDim, { dropout = 0.1, seed } = {}) {
      check(mod._RawSelfAttention._config_error(checkInteger('input_dim', inputDim), Number(dropout)));
      super(new mod._RawSelfAttention(inputDim, Number(dropout), checkSeed(seed)), 'SelfAttention');
      this.inputDim = inputDim;
      this.dropout = Number(dropout);
    }
    /** 1 / sqrt(inputDim): the scale of its attention call. */
    get scale() { return this.raw._scale(); }
    /**
     * x: Float32Array [batch x length, inputDim]; mask: additive [batch, length, length] or null; attention:
     * {B, H, T, S, D, q, k, v, scale, mask?, maskStrideB?, maskStrideH?} -> {weights, out} (or a Promise).
     * -> {q, k, v [batch x length, inputDim], softmax (the kernel's weights [batch, length, length]), weights
     * (after dropout when train; drawn from `seed`: the same seed drops the same weights), output
     * [batch x length, inputDim], choice (the kernel's, where it gives one)}.
     */
    async forwardWith(x, { batch, length, mask = null, train = false, seed = 0 }, attention) {
      check(this.raw._begin(x, checkInteger('batch', batch), checkInteger('length', length), mask, !!train, checkSeed(seed)));
      const { last } = await runStagedCalls(this.raw, attention, check);
      return { q: this.raw._queries().slice(), k: this.raw._keys().slice(), v: this.raw._values().slice(), softmax: last.weights,
        weights: this.raw._weights().slice(), output: this.raw._output().slice(), choice: last.choice };
    }
  }

  class Adam extends Owned {
    /** layers: the Embedding / Linear / MultiheadAttention objects whose parameters it trains. */
    constructor(layers, options = {}) {
      check(mod._RawAdam._options_error(options));
      if (!Array.isArray(layers)) throw new AttnLabError('Adam takes an array of layers');
      super(new mod._RawAdam(options), 'Adam');
      for (const layer of layers) {
        if (!(layer instanceof Layer)) throw new AttnLabError('Adam takes layers made by this module');
        this.raw._add(layer.raw);
      }
    }
    step() { this.raw._step(); }
    zeroGrad() { this.raw._zero_grad(); }
    get stepsTaken() { return this.raw._steps_taken(); }
    setLearningRate(lr) {
      check(mod._RawAdam._options_error({ lr }));
      this.raw._set_lr(lr);
    }
  }

  // ---- records (core/io/json.h): configs and inputs go to C++ as JSON text, results come back as JSON
  // text with their typed arrays beside it as blobs. JSON has no NaN, Infinity or typed arrays, and a
  // message may need to name a value's type: those get the markers json.h describes.
  function encodeRecord(value) {
    if (value === undefined) return 'null';
    return JSON.stringify(value, function replace(key, v) {
      if (typeof v === 'number') return Number.isFinite(v) ? v : { $number: String(v) };
      if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') return { $type: typeof v };
      if (key !== '' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
        if (ArrayBuffer.isView(v)) return Array.from(v);
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) return { $type: v.constructor?.name ?? 'Object' };
      }
      return v;
    });
  }
  function decodeRecord(text, raw) {
    return JSON.parse(text, (key, v) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      if ('$blob' in v) return raw._blob(v.$blob).slice(); // copied out of the heap at once
      if ('$number' in v) return Number(v.$number);
      return v;
    });
  }

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
     * One training step with its attention kernel run outside the module (the page's WebGPU): the
     * step's forward call, then its backward call, through the staged-call protocol
     * (web/training/staged_calls.js). kernel: {forward(args) -> {weights (null allowed when
     * args.readWeights is false), out}, backward(args) -> {dQ, dK, dV}}, each may return a Promise (a
     * KernelRunner's). -> the step's record {step, epoch?, loss, accuracy}, as endStep().
     */
    async stepWith({ forward, backward }) {
      this.raw._begin_step();
      await runStagedCalls(this.raw, forward, check, { backward });
      return decodeRecord(this.raw._end_step(), this.raw);
    }
    // The staged step by hand, on the trainer's own buffers (tests, tools):
    beginStep() { this.raw._begin_step(); }
    middleStep() { this.raw._middle_step(); }
    endStep() { return decodeRecord(this.raw._end_step(), this.raw); }
    /** {B, H, T, S, D, scale, readWeights} of the attention call the step has prepared. */
    kernelShape() { return JSON.parse(this.raw._kernel_shape()); }
    /** A live, writable view into the heap (q k v weights out dOut dWeights dQ dK dV): use it at once. */
    kernelView(which) { return this.raw._kernel_view(which); }
    runKernelForward(backend) { this.raw._run_kernel_forward(backendCode(backend)); }
    runKernelBackward(backend) { this.raw._run_kernel_backward(backendCode(backend)); }
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
    /** config: {seed, heads, embedDim, batch, lr}; digits: a Digits. */
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

  // The labs' own classes, for createTrainer; a trainer registered in C++ without one gets the generic class.
  const TRAINER_CLASSES = {
    alignment: (config) => new AlignmentTrainer(config),
    lookup: (config, assets) => new LookupTrainer(config, assets?.digits),
    count: (config) => new CountTrainer(config),
  };

  /**
   * A pretrained BERT (core/models/bert.h) read from a checkpoint: loadBert() below makes one.
   * Shapes: T tokens, H heads, D head width, E hidden size.
   */
  class Bert extends Owned {
    constructor(raw) {
      super(raw, 'BERT model');
      this.summary = JSON.parse(raw._summary());
      this.config = this.summary.config;
    }
    /** ids, types: token ids and token type ids [T] -> runs every layer on a CPU backend. */
    forward(ids, types, { backend } = {}) {
      const code = backendCode(backend);
      if (code === BACKEND_CODES.webgpu) throw new AttnLabError('forward() runs scalar or simd128; WebGPU runs through forwardWith(ids, types, attention)');
      check(this.raw._forward(ids, types, code));
    }
    /**
     * forward() with every layer's attention call run by `attention` ({B, H, T, S, D, q, k, v, scale} ->
     * {weights, out}, or a Promise of it: the page's kernel, WebGPU included; web/training/staged_calls.js).
     * Resolves to the last call's result (its `choice`, where it has one). The views below then show the pass.
     */
    async forwardWith(ids, types, attention) {
      check(this.raw._begin_forward(ids, types));
      return (await runStagedCalls(this.raw, attention, check)).last;
    }
    get length() { return this.raw._length(); }
    #view(what, layer, view) {
      const v = view;
      if (v === undefined) throw new AttnLabError(`no ${what} for layer ${layer}: run forward() first (layers 0..${this.config.layers - 1})`);
      return v.slice();
    }
    /** [H, T, T] */
    attention(layer) { return this.#view('attention', layer, this.raw._attention(checkInteger('layer', layer))); }
    /** [H, T, D]: the queries and keys of a layer, for the neuron view */
    queries(layer) { return this.#view('queries', layer, this.raw._queries(checkInteger('layer', layer))); }
    keys(layer) { return this.#view('keys', layer, this.raw._keys(checkInteger('layer', layer))); }
    /** [T, E]; layer 0 is the embeddings' output, L the last layer's */
    hidden(layer) { return this.#view('hidden state', layer, this.raw._hidden(checkInteger('layer', layer))); }
    /** The MLM head's k most likely tokens at a position: [{id, probability, logit}] ([] without the head). */
    predict(position, k = 5) { return this.raw._predict(checkInteger('position', position), checkInteger('k', k, { min: 1 })); }
  }

  // read(offset, length), or an AttnLabError naming the file when fewer bytes come back.
  async function readExactly(read, offset, length, file, what) {
    const bytes = await read(offset, length);
    if (!(bytes instanceof Uint8Array) || bytes.length !== length) {
      throw new AttnLabError(`${file}: could read only ${bytes?.length ?? 0} of ${length} bytes of ${what} (was the file changed while it was read?)`);
    }
    return bytes;
  }

  /** A Marian (opus-mt) translation model (core/models/marian.h): loadMarian() below makes one. */
  class Marian extends Owned {
    constructor(raw) {
      super(raw, 'Marian model');
      this.summary = JSON.parse(raw._summary());
      this.config = this.summary.config;
    }
    /** source ids (</s> last) -> the encoder runs; encoderAttention(l) is then [H, S, S]. */
    encode(ids, { backend } = {}) { check(this.raw._encode(ids, backendCode(backend))); }
    /** Teacher-forced: target ids (the decoder start token first) -> logits() [T, V], attentions. */
    decode(target, { backend } = {}) { check(this.raw._decode(target, backendCode(backend))); }
    /**
     * After encode(): greedy (beams 1) or beam search, as generate() does it -> {ids (the start token
     * first), score, cross: [Float32Array [L*H*S] per generated token], steps: [{beams, scores, finished}]}.
     */
    generate({ beams = this.config.numBeams, maxLength = this.config.maxLength, backend } = {}) {
      const out = this.raw._generate(checkInteger('beams', beams), checkInteger('maxLength', maxLength), backendCode(backend));
      check(out.error);
      return out;
    }
    /**
     * encode() with every attention call run by `attention` ({B, H, T, S, D, q, k, v, scale, mask?,
     * maskStrideB?, maskStrideH?} -> {weights [H*T*S], out [H*T*D]}, or a Promise of it: the page's
     * kernel, WebGPU included). Resolves to the last call's result (its `choice`, where it has one).
     */
    async encodeWith(ids, attention) {
      check(this.raw._begin_encode(ids));
      return (await runStagedCalls(this.raw, attention, check)).last;
    }
    /** decode() (teacher-forced, after an encoder pass) with every attention call run by `attention`. */
    async decodeWith(target, attention) {
      check(this.raw._begin_decode(target));
      return (await runStagedCalls(this.raw, attention, check)).last;
    }
    #view(what, v) {
      if (v === undefined) throw new AttnLabError(`no ${what}: encode() (and decode()) first, with a layer of this model`);
      return v.slice();
    }
    encoderAttention(layer) { return this.#view('encoder attention', this.raw._encoder_attention(checkInteger('layer', layer))); }
    decoderAttention(layer) { return this.#view('decoder attention', this.raw._decoder_attention(checkInteger('layer', layer))); }
    crossAttention(layer) { return this.#view('cross-attention', this.raw._cross_attention(checkInteger('layer', layer))); }
    logits() { return this.#view('logits', this.raw._logits()); }
  }

  // The checkpoint models of the registry (core/models/model_kinds.h): their raw class and JS class.
  const CHECKPOINT_KINDS = {
    bert: { Raw: () => new mod._RawBert('bert'), make: (raw) => new Bert(raw) },
    distilbert: { Raw: () => new mod._RawBert('distilbert'), make: (raw) => new Bert(raw) }, // a BertModel under DistilBERT's names
    marian: { Raw: () => new mod._RawMarian(), make: (raw) => new Marian(raw) },
  };
  const WEIGHT_FORMATS = { safetensors: 'safetensors', 'model.safetensors': 'safetensors', bin: 'bin', 'pytorch_model.bin': 'bin' };
  // Index reads run this many at once (a .bin's local headers come ~1,000 ranges to a request).
  const INDEX_READS_AT_ONCE = 32;

  /**
   * Loads a checkpoint of a registered kind ('bert', 'distilbert', 'marian') tensor by tensor, so that a 440 MB file
   * is never held twice: config is config.json's text; size the bytes of the weights file, in format
   * 'safetensors' (model.safetensors, the default) or 'bin' (pytorch_model.bin; the file names work
   * too); read(offset, length) resolves to those bytes as a Uint8Array (a File's slice, a file handle's
   * read, a Hub download's range). onProgress({bytes, total, tensor}). The loader asks for the byte
   * ranges of the file's index (raw_checkpoint.h), checks every tensor against config.json, then reads
   * only the tensors the model uses. Throws an AttnLabError naming the file and the tensor; nothing of
   * a failed load is kept.
   */
  async function loadCheckpoint(kind, { config, size, read, onProgress = () => {}, chunkBytes = 16 * 1024 * 1024, format = 'safetensors' }) {
    if (!Object.hasOwn(CHECKPOINT_KINDS, kind)) throw new AttnLabError(`kind must be ${Object.keys(CHECKPOINT_KINDS).join(' or ')}, got ${JSON.stringify(kind)}`);
    const weights = Object.hasOwn(WEIGHT_FORMATS, format) ? WEIGHT_FORMATS[format] : null;
    if (!weights) throw new AttnLabError(`format must be 'safetensors' or 'bin' (or the file's name), got ${JSON.stringify(format)}`);
    checkInteger('chunkBytes', chunkBytes, { min: 1 });
    const file = weights === 'bin' ? 'pytorch_model.bin' : 'model.safetensors';
    const raw = CHECKPOINT_KINDS[kind].Raw();
    try {
      check(raw._open(String(config), Number(size), weights));
      for (let ranges = raw._index_reads(); ranges.length; ranges = raw._index_reads()) {
        check(raw._index_give(await readRanges(read, ranges, file)));
      }
      check(raw._plan());
      const loads = Array.from({ length: raw._load_count() }, (_, i) => raw._load(i));
      const total = loads.reduce((sum, l) => sum + l.end - l.begin, 0);
      let bytes = 0;
      for (const [i, load] of loads.entries()) {
        for (let at = load.begin; at < load.end; at += chunkBytes) {
          const length = Math.min(chunkBytes, load.end - at);
          check(raw._write(i, await readExactly(read, at, length, file, `tensor "${load.fileName}"`), at - load.begin));
          bytes += length;
          onProgress({ bytes, total, tensor: load.fileName });
        }
        check(raw._store(i));
      }
      check(raw._finish());
      return CHECKPOINT_KINDS[kind].make(raw);
    } catch (error) {
      raw.delete();
      throw error;
    }
  }

  // ranges [b0, e0, b1, e1, ...] -> their bytes, concatenated in order.
  async function readRanges(read, ranges, file) {
    const parts = [];
    for (let k = 0; k < ranges.length; k += 2 * INDEX_READS_AT_ONCE) {
      const group = [];
      for (let j = k; j < Math.min(ranges.length, k + 2 * INDEX_READS_AT_ONCE); j += 2) {
        const [begin, end] = [ranges[j], ranges[j + 1]];
        group.push(readExactly(read, begin, end - begin, file, `its index (at offset ${begin})`));
      }
      parts.push(...await Promise.all(group));
    }
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => { bytes.set(p, at); return at + p.length; }, 0);
    return bytes;
  }

  /** loadCheckpoint('bert', ...): a BERT from model.safetensors or pytorch_model.bin ({kind: 'distilbert'}: a DistilBERT). */
  const loadBert = ({ kind = 'bert', ...options }) => loadCheckpoint(kind, options);
  /** loadCheckpoint('marian', ...): a Marian (opus-mt) model from model.safetensors or pytorch_model.bin. */
  const loadMarian = (options) => loadCheckpoint('marian', options);

  class Rng extends Owned {
    constructor(seed = 0) {
      super(new mod._RawRng(checkSeed(seed)), 'Rng');
    }
    nextU32() { return this.raw._next_u32(); }
    below(n) {
      if (!Number.isInteger(n) || n <= 0) throw new AttnLabError(`n must be a positive integer, got ${n}`);
      return this.raw._below(n);
    }
    uniform() { return this.raw._uniform(); }
    normal() { return this.raw._normal(); }
  }

  const values = () => mod._result().slice();
  const grad = () => mod._result_grad().slice();
  const loss = () => mod._result_loss();

  return {
    version: mod._version(),
    build, // 'simd', 'scalar' or (Node) 'simd-threads': which WASM module is running
    cpuBackends: [...mod._backends()],
    AttnLabError,
    Embedding,
    Linear,
    MultiheadAttention,
    SelfAttention,
    loadCheckpoint,
    loadBert,
    loadMarian,
    Adam,
    Trainer,
    AlignmentTrainer,
    Digits,
    LookupTrainer,
    CountTrainer,
    Rng,
    /** The ids of the registered trainers (core/trainers/registry.cpp): ['alignment', 'lookup', 'count']. */
    trainerIds,
    /** A trainer by id: the lab's class (AlignmentTrainer, LookupTrainer, CountTrainer) where it has one. assets: {digits}. */
    createTrainer(id, config = {}, assets = {}) {
      const make = Object.hasOwn(TRAINER_CLASSES, id) ? TRAINER_CLASSES[id] : null;
      return make ? make(config, assets) : new Trainer(id, config, assets);
    },
    relu(input) { check(mod._relu(input)); return values(); },
    reluBackward(input, dOutput) { check(mod._relu_backward(input, dOutput)); return grad(); },
    sigmoid(input) { check(mod._sigmoid(input)); return values(); },
    sigmoidBackward(output, dOutput) { check(mod._sigmoid_backward(output, dOutput)); return grad(); },
    crossEntropy(logits, targets, classes) {
      check(mod._cross_entropy(logits, targets, checkInteger('classes', classes)));
      return { loss: loss(), grad: grad() };
    },
    binaryCrossEntropy(probabilities, targets) {
      check(mod._binary_cross_entropy(probabilities, targets));
      return { loss: loss(), grad: grad() };
    },
    mse(prediction, target) {
      check(mod._mse(prediction, target));
      return { loss: loss(), grad: grad() };
    },
    selectBackend(requested, env, shape) {
      return mod._select_backend(requested, env, shape);
    },
    heapBytesInUse() { return mod._heap_bytes_in_use(); },
    /** {available, active}: worker threads a training step may run its second shard on (threads build). */
    get workerThreads() { return mod._worker_threads(); },
    /** 0 runs both shards of a step on the calling thread: slower, the same bits. */
    setWorkerThreads(n) { check(mod._set_active_worker_threads(checkInteger('worker threads', n))); },
    /**
     * The raw attention kernel. args: {B, H, T, S, D, q, k, v, mask?, maskStrideB?, maskStrideH?,
     * scale?, backend: 'scalar' | 'simd128'} -> {weights [B,H,T,S], out [B,H,T,D]}
     */
    attentionForward(args) {
      check(mod._attention_forward(args ?? {}));
      return { weights: mod._kernel_weights().slice(), out: mod._kernel_out().slice() };
    },
    /**
     * The stages the kernel fuses, for a lab that shows each: args {T, S, D, q [T,D], k [S,D], scale,
     * mask? [T,S] additive} -> {scores: q k^T, scaled: scale x scores, masked: scaled + mask}, each [T,S].
     */
    attentionScoreStages(args) {
      check(mod._attention_score_stages(args ?? {}));
      return { scores: mod._stage_scores().slice(), scaled: mod._stage_scaled().slice(), masked: mod._stage_masked().slice() };
    },
    /** weights [rows, cols] -> Float64Array [rows] of entropies in nats (log(cols) = uniform, 0 = one-hot). */
    rowEntropies(weights, rows, cols) {
      check(mod._row_entropies(weights, checkInteger('rows', rows), checkInteger('cols', cols)));
      return mod._entropies().slice();
    },
    /** args: {B, H, T, S, D, q, k, v, weights, dOut, dWeights?, scale?, backend} -> {dQ, dK, dV} */
    attentionBackward(args) {
      check(mod._attention_backward(args ?? {}));
      return { dQ: mod._kernel_d_q().slice(), dK: mod._kernel_d_k().slice(), dV: mod._kernel_d_v().slice() };
    },
    /** Single-thread f32x4 multiply-add rate in GFLOP/s, measured for about `seconds`. */
    simd128PeakGflops(seconds = 0.25) { return mod._simd128_peak_gflops(seconds); },
    _module: mod,
  };
}
