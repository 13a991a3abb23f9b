// BERT and DistilBERT read from a checkpoint (core/models/bert.h): the JS class over the raw binding.
import { AttnLabError, BACKEND_CODES, backendCode, check, checkInteger } from './checks.js';
import { CheckpointModel, pairsOf } from './checkpoint_model.js';
import { runStagedCalls } from './staged_calls.js';

/**
 * A pretrained BERT (core/models/bert.h) read from a checkpoint: loadBert() (checkpoint_loader.js) makes one.
 * Shapes: T tokens, H heads, D head width, E hidden size.
 */
export class Bert extends CheckpointModel {
  constructor(raw) { super(raw, 'BERT'); }
  /**
   * ids, types: token ids and token type ids [T] -> runs every layer on a CPU backend. heads: [{layer,
   * head}] switched off in this pass alone (their z zeroed before the output dense).
   */
  forward(ids, types, { backend, heads } = {}) {
    const code = backendCode(backend);
    if (code === BACKEND_CODES.webgpu) throw new AttnLabError('forward() runs scalar or simd128; WebGPU runs through forwardWith(ids, types, attention)');
    check(this.raw._forward(ids, types, code, pairsOf(heads)));
  }
  /**
   * forward() with every layer's attention call run by `attention` ({B, H, T, S, D, q, k, v, scale} ->
   * {weights, out}, or a Promise of it: the page's kernel, WebGPU included; wasm_bindings/js/staged_calls.js).
   * Resolves to the last call's result (its `choice`, where it has one). The views below then show the pass.
   */
  async forwardWith(ids, types, attention, { heads } = {}) {
    check(this.raw._begin_forward(ids, types, pairsOf(heads)));
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
