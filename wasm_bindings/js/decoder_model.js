// A causal decoder read from a checkpoint (GPT-2, Llama, Qwen2: core/models/decoder.h): the JS class over
// the raw binding, its passes, the writer and the probes.
import { AttnLabError, BACKEND_CODES, backendCode, check, checkInteger } from './checks.js';
import { CheckpointModel, pairsOf } from './checkpoint_model.js';
import { runStagedCalls } from './staged_calls.js';

/**
 * A causal decoder (core/models/decoder.h; GPT-2) read from a checkpoint: loadCheckpoint('gpt2', ...)
 * makes one. A pass takes n new tokens after the cache's S - n: forward(ids) starts from an empty cache
 * (the prompt), step(id) appends one. Writing goes through the one writer (core/models/writer.h), the
 * CLI's and the page's. Shapes: H heads, E = n_embd, L layers, V the vocabulary. new Decoder(raw, title):
 * title is the kind's row's (GPT-2, Llama, ...).
 */
/** The writer's settings with headsOff [{layer, head}] as the binding reads it. */
function writingSettings(settings) {
  if (settings?.headsOff === undefined) return settings;
  return { ...settings, headsOff: pairsOf(settings.headsOff) };
}

export class Decoder extends CheckpointModel {
  /**
   * The prompt's ids -> one pass on a CPU backend (the cache holds them). heads: [{layer, head}] switched
   * off in this pass alone (their z zeroed, as TransformerLens zeroes hook_z); a decoder keeps no heads
   * of its own between passes (core/models/intervention.h).
   */
  forward(ids, { backend, heads } = {}) { check(this.raw._forward(ids, this.#cpu(backend), pairsOf(heads))); }
  /** forward() with every layer's attention call run by `attention` (the page's kernel; staged_calls.js). */
  async forwardWith(ids, attention, { heads } = {}) {
    check(this.raw._begin_forward(ids, pairsOf(heads)));
    return (await runStagedCalls(this.raw, attention, check)).last;
  }
  /** One more token through the cache (its attention row is then attention(l) [H, 1, S]). */
  step(id, { backend, heads } = {}) {
    check(this.raw._step(checkInteger('id', id, { min: 0 }), this.#cpu(backend), pairsOf(heads)));
  }
  #cpu(backend) {
    const code = backendCode(backend);
    if (code === BACKEND_CODES.webgpu) throw new AttnLabError('A decoder writes on scalar or simd128; WebGPU runs the prompt through forwardWith(ids, attention)');
    return code;
  }
  /** The tokenizer's size n: ids from n on (a vocabulary padded past the tokenizer's, Qwen2.5's) are never chosen. */
  limitVocabulary(n) { check(this.raw._limit_vocabulary(checkInteger('n', n, { min: 1 }))); }
  /** Tokens in the cache (S). */
  get cached() { return this.raw._cached(); }
  /** Tokens of the last pass (n). */
  get passLength() { return this.raw._pass_length(); }
  #view(what, v) {
    if (v === undefined) throw new AttnLabError(`no ${what}: run forward() first, with a layer of this model (0..${this.config.layers - 1})`);
    return v.slice();
  }
  /** [H, n, S] of the last pass */
  attention(layer) { return this.#view('attention', this.raw._attention(checkInteger('layer', layer))); }
  /** [n, E]: the residual stream before the block (layer 0: the embeddings; L: after the last block) */
  residual(layer) { return this.#view('residual', this.raw._residual(checkInteger('layer', layer))); }
  /**
   * Each rotary pair's speed (radians a token, [D/2]) after the config's rope_scaling, as the passes
   * turn queries and keys; empty for learned positions (GPT-2).
   */
  rotarySpeeds() { return this.raw._rotary_speeds(); }
  /** [V] at a row of the last pass (its last: the next token's) */
  logits(row = this.passLength - 1) { return this.#view('logits', this.raw._logits(checkInteger('row', row))); }
  /**
   * Starts writing after the prompt `ids`: {temperature (0: greedy), topK (0: none), topP (1: none),
   * maxNewTokens, seed, stopAtEos, eosIds (the ids that end the text: the tokenizer's eosIds; left out,
   * config.json's eos_token_id), top (how many of each step's likeliest tokens to keep), keepLogits
   * (each step keeps the logits it was drawn from: distribution({step}) for any step), headsOff
   * ([{layer, head}] switched off in every pass the writer runs; other heads in writeTo's settings write
   * the text again from the prompt)}.
   */
  beginWriting(ids, settings = {}, { backend } = {}) {
    check(this.raw._begin_writing(ids, writingSettings(settings), this.#cpu(backend)));
  }
  /** The next token: {id, probability, position, top: [{id, probability, logit}], attention [L*H*(position+1)]}, or null when done. */
  nextToken() { return this.raw._next_token(); }
  /**
   * The writer goes on with `settings` until `count` tokens are written or it stops (the page's Play
   * and Next token). When the settings' draws differ from the writer's, the tokens past the first
   * `count` are forgotten, and those past maxNewTokens always. -> {written, firstChanged (copies of
   * steps from there on are stale), stopReason}.
   */
  writeTo(count, settings = {}) {
    const out = this.raw._write_to(writingSettings(settings), checkInteger('count', count, { min: 0 }));
    check(out.error);
    return out;
  }
  /** Written token k's record (as nextToken gave it). */
  writtenStep(k) {
    const out = this.raw._written_step(checkInteger('k', k, { min: 0 }));
    if (out === null) throw new AttnLabError(`no written token ${k}: write it first (writeTo, nextToken)`);
    return out;
  }
  /** 'eos', 'max_new_tokens' or 'n_positions' once writing stopped ('' while it goes on). */
  get stopReason() { return this.raw._stop_reason(); }
  /**
   * The distribution written token `step` was drawn from (by default the next token's) under other
   * settings (the temperature slider): the k likeliest [{id, probability, logit}].
   */
  distribution({ temperature = 1, topK = 0, topP = 1, k = 10, step = -1 } = {}) {
    const out = this.raw._distribution(Number(step), Number(temperature), checkInteger('topK', topK, { min: 0 }), Number(topP), checkInteger('k', k, { min: 0 }));
    if (!Array.isArray(out)) check(out.error);
    return out;
  }
  /** One id's probability in that distribution. */
  chance(id, { temperature = 1, topK = 0, topP = 1, step = -1 } = {}) {
    const out = this.raw._chance(Number(step), Number(temperature), checkInteger('topK', topK, { min: 0 }), Number(topP), checkInteger('id', id, { min: 0 }));
    if (typeof out !== 'number') check(out.error);
    return out;
  }
  /** beginWriting + nextToken until done -> {ids, steps, stopReason}. */
  generate(ids, settings = {}, options = {}) {
    this.beginWriting(ids, settings, options);
    const steps = [];
    for (let s = this.nextToken(); s; s = this.nextToken()) steps.push(s);
    return { ids: steps.map((s) => s.id), steps, stopReason: this.stopReason };
  }
  /**
   * Head roles on [eos] + r + r (core/models/decoder_probes.h), with `heads` switched off: {layers, heads,
   * tokens, previous, first, induction, duplicate [L*H], firstCopyLoss, secondCopyLoss}.
   */
  headRoles({ n = 20, seed = 0, backend, heads } = {}) {
    const out = this.raw._head_roles(checkInteger('n', n, { min: 2 }), checkInteger('seed', seed, { min: 0 }),
      this.#cpu(backend), pairsOf(heads));
    check(out.error);
    return out;
  }

  // ---- circuits (core/models/circuits.h, issue 44)
  /**
   * One pass over `ids` with every activation kept: [{name, shape, values}] under TransformerLens's hook
   * names (blocks.0.attn.hook_z, ...), in the order the pass reached them (core/models/activation_cache.h).
   */
  capture(ids, { backend, heads } = {}) {
    const out = this.raw._capture(ids, this.#cpu(backend), pairsOf(heads));
    if (!Array.isArray(out)) check(out.error);
    return out;
  }
  /**
   * Direct logit attribution of logit(answer) - logit(wrong) at the prompt's last position: {layers,
   * heads, embed, posEmbed, head [L*H], attnBias [L], mlp [L], constant, total, logitDiff}.
   */
  attribute(ids, answer, wrong, { backend } = {}) {
    const out = this.raw._attribute(ids, answer, wrong, this.#cpu(backend));
    check(out.error);
    return out;
  }
  /** Activation patching, a row at a time: -> {cleanDiff, corruptDiff, tokens}. */
  beginPatching(clean, corrupt, answer, wrong, { backend } = {}) {
    const out = this.raw._patch_begin(clean, corrupt, answer, wrong, this.#cpu(backend));
    check(out.error);
    return out;
  }
  /** Layer `layer`'s normalised cells of a site ('resid_pre', 'z', 'pattern', 'attn_out', 'mlp_out'): Float64Array. */
  patchRow(site, layer) {
    const out = this.raw._patch_row(String(site), checkInteger('layer', layer, { min: 0 }));
    if (!(out instanceof Float64Array)) check(out.error);
    return out;
  }
  /** The clean run's activations of the patching begun (as capture() gives them). */
  patchedCleanCache() {
    const out = this.raw._patch_clean_cache();
    if (!Array.isArray(out)) check(out.error);
    return out;
  }
  /** The last pass's logit lens: [layer 0..L][position] -> {id, probability}. */
  logitLens() { return this.raw._logit_lens(); }
}
