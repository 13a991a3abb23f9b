// A Marian (opus-mt) translation model read from a checkpoint (core/models/marian.h): the JS class over the raw binding.
import { AttnLabError, backendCode, check, checkInteger } from './checks.js';
import { CheckpointModel, pairsOf } from './checkpoint_model.js';
import { runStagedCalls } from './staged_calls.js';

/** A Marian (opus-mt) translation model (core/models/marian.h): loadMarian() (checkpoint_loader.js) makes one. */
export class Marian extends CheckpointModel {
  constructor(raw) { super(raw, 'Marian'); }
  /** source ids (</s> last) -> the encoder runs; encoderAttention(l) is then [H, S, S]. */
  encode(ids, { backend } = {}) { check(this.raw._encode(ids, backendCode(backend))); }
  /**
   * Teacher-forced: target ids (the decoder start token first) -> logits() [T, V], attentions. heads
   * (here, in generate and decodeWith): [{layer, head}] of the decoder's cross-attention switched off in
   * this pass alone; the encoder's pass has none.
   */
  decode(target, { backend, heads } = {}) { check(this.raw._decode(target, backendCode(backend), pairsOf(heads))); }
  /**
   * After encode(): greedy (beams 1) or beam search, as generate() does it -> {ids (the start token
   * first), score, cross: [Float32Array [L*H*S] per generated token], steps: [{beams, scores, finished}]}.
   */
  generate({ beams = this.config.numBeams, maxLength = this.config.maxLength, backend, heads } = {}) {
    const out = this.raw._generate(checkInteger('beams', beams), checkInteger('maxLength', maxLength), backendCode(backend),
      pairsOf(heads));
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
  async decodeWith(target, attention, { heads } = {}) {
    check(this.raw._begin_decode(target, pairsOf(heads)));
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
