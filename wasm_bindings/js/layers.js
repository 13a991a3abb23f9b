// The layers of the course's models, one raw object each (Embedding, Linear, MultiheadAttention, the
// course's SelfAttention), Adam over them, and the seeded Rng. layerClasses(mod) makes the classes for
// one loaded module.
import { AttnLabError, backendCode, check, checkInteger, checkSeed } from './checks.js';
import { Layer, Owned } from './owned.js';
import { runStagedCalls } from './staged_calls.js';

export function layerClasses(mod) {
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

  return { Embedding, Linear, MultiheadAttention, SelfAttention, Adam, Rng };
}
