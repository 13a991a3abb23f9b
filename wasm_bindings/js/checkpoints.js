// The models read from checkpoints (core/models/model_kinds.h): BERT (and DistilBERT, a BertModel),
// Marian and the decoders (GPT-2: core/models/decoder.h), and the one streamed loader every kind shares (loadCheckpoint; raw_checkpoint.h).
// checkpointModels(mod) makes them for one loaded module.
import { AttnLabError, BACKEND_CODES, backendCode, check, checkInteger } from './checks.js';
import { Owned } from './owned.js';
import { runStagedCalls } from './staged_calls.js';

/**
 * Heads switched off in every later pass of a checkpoint model (core/layers/head_ablation.h: their output
 * zeroed before the output projection, as TransformerLens zeroes hook_z): [{layer, head}] numbered from
 * 0, [] for none. The heads are those its lab shows: GPT-2's and BERT's self-attention, Marian's decoder
 * cross-attention. A refused list (out of range, given twice) throws and leaves the one before.
 */
function ablateHeads(model, heads) {
  if (!Array.isArray(heads)) throw new AttnLabError('ablateHeads() takes an array of {layer, head}');
  check(model.raw._ablate_heads(heads.flatMap((h) => [h?.layer, h?.head])));
  model.ablated = heads.map(({ layer, head }) => ({ layer, head }));
}

export function checkpointModels(mod) {
  /**
   * A pretrained BERT (core/models/bert.h) read from a checkpoint: loadBert() below makes one.
   * Shapes: T tokens, H heads, D head width, E hidden size.
   */
  class Bert extends Owned {
    constructor(raw) {
      super(raw, 'BERT model');
      this.summary = JSON.parse(raw._summary());
      this.config = this.summary.config;
      this.ablated = [];
    }
    /** Heads switched off in every later pass: [{layer, head}] ([] none; see ablateHeads above). */
    ablateHeads(heads) { ablateHeads(this, heads); }
    /** ids, types: token ids and token type ids [T] -> runs every layer on a CPU backend. */
    forward(ids, types, { backend } = {}) {
      const code = backendCode(backend);
      if (code === BACKEND_CODES.webgpu) throw new AttnLabError('forward() runs scalar or simd128; WebGPU runs through forwardWith(ids, types, attention)');
      check(this.raw._forward(ids, types, code));
    }
    /**
     * forward() with every layer's attention call run by `attention` ({B, H, T, S, D, q, k, v, scale} ->
     * {weights, out}, or a Promise of it: the page's kernel, WebGPU included; wasm_bindings/js/staged_calls.js).
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
      this.ablated = [];
    }
    /** Heads switched off in every later pass: [{layer, head}] ([] none; see ablateHeads above). */
    ablateHeads(heads) { ablateHeads(this, heads); }
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

  /**
   * A causal decoder (core/models/decoder.h; GPT-2) read from a checkpoint: loadCheckpoint('gpt2', ...)
   * makes one. A pass takes n new tokens after the cache's S - n: forward(ids) starts from an empty cache
   * (the prompt), step(id) appends one. Writing goes through the one writer (core/models/writer.h), the
   * CLI's and the page's. Shapes: H heads, E = n_embd, L layers, V the vocabulary.
   */
  class Decoder extends Owned {
    constructor(raw, title) {
      super(raw, `${title} model`);
      this.summary = JSON.parse(raw._summary());
      this.config = this.summary.config;
      this.ablated = [];
    }
    /** Heads switched off in every later pass: [{layer, head}] ([] none; see ablateHeads above). */
    ablateHeads(heads) { ablateHeads(this, heads); }
    /** The prompt's ids -> one pass on a CPU backend (the cache holds them). */
    forward(ids, { backend } = {}) { check(this.raw._forward(ids, this.#cpu(backend))); }
    /** forward() with every layer's attention call run by `attention` (the page's kernel; staged_calls.js). */
    async forwardWith(ids, attention) {
      check(this.raw._begin_forward(ids));
      return (await runStagedCalls(this.raw, attention, check)).last;
    }
    /** One more token through the cache (its attention row is then attention(l) [H, 1, S]). */
    step(id, { backend } = {}) { check(this.raw._step(checkInteger('id', id, { min: 0 }), this.#cpu(backend))); }
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
     * (each step keeps the logits it was drawn from: distribution({step}) for any step)}.
     */
    beginWriting(ids, settings = {}, { backend } = {}) { check(this.raw._begin_writing(ids, settings, this.#cpu(backend))); }
    /** The next token: {id, probability, position, top: [{id, probability, logit}], attention [L*H*(position+1)]}, or null when done. */
    nextToken() { return this.raw._next_token(); }
    /**
     * The writer goes on with `settings` until `count` tokens are written or it stops (the page's Play
     * and Next token). When the settings' draws differ from the writer's, the tokens past the first
     * `count` are forgotten, and those past maxNewTokens always. -> {written, firstChanged (copies of
     * steps from there on are stale), stopReason}.
     */
    writeTo(count, settings = {}) {
      const out = this.raw._write_to(settings, checkInteger('count', count, { min: 0 }));
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
    /** Head roles on [eos] + r + r (core/models/decoder_probes.h): {layers, heads, tokens, previous, first, induction [L*H], firstCopyLoss, secondCopyLoss}. */
    headRoles({ n = 20, seed = 0, backend } = {}) {
      const out = this.raw._head_roles(checkInteger('n', n, { min: 2 }), checkInteger('seed', seed, { min: 0 }), this.#cpu(backend));
      check(out.error);
      return out;
    }
    /** The last pass's logit lens: [layer 0..L][position] -> {id, probability}. */
    logitLens() { return this.raw._logit_lens(); }
  }

  // The registry's rows (core/models/model_kinds.h): each kind names the binding that loads it, whose
  // raw class and JS class are these.
  const MODEL_KINDS = JSON.parse(mod._model_kinds());
  const BINDINGS = {
    bert: { Raw: (kind) => new mod._RawBert(kind), make: (raw) => new Bert(raw) },
    marian: { Raw: () => new mod._RawMarian(), make: (raw) => new Marian(raw) },
    decoder: { Raw: (kind) => new mod._RawDecoder(kind), make: (raw, row) => new Decoder(raw, row.title) },
  };
  const CHECKPOINT_KINDS = Object.fromEntries(MODEL_KINDS.map((row) => [row.kind, {
    Raw: () => BINDINGS[row.binding].Raw(row.kind), make: (raw) => BINDINGS[row.binding].make(raw, row) }]));
  const WEIGHT_FORMATS = { safetensors: 'safetensors', 'model.safetensors': 'safetensors', bin: 'bin', 'pytorch_model.bin': 'bin' };
  // Index reads run this many at once (a .bin's local headers come ~1,000 ranges to a request).
  const INDEX_READS_AT_ONCE = 32;

  /**
   * Loads a checkpoint of a registered kind ('bert', 'distilbert', 'marian') tensor by tensor, so that a 440 MB file
   * is never held twice: config is config.json's text; size the bytes of the weights file, in format
   * 'safetensors' (model.safetensors, the default) or 'bin' (pytorch_model.bin; the file names work
   * too); read(offset, length) resolves to those bytes as a Uint8Array (a File's slice, a file handle's
   * read, a Hub download's range). A sharded checkpoint gives index (model.safetensors.index.json's text)
   * and shards [{name, size, read}] in place of size and read: every shard's header is read and checked
   * against the index (core/io/safetensors_shards.h), then each tensor from its shard. onProgress({bytes, total, tensor}). The loader asks for the byte
   * ranges of the file's index (raw_checkpoint.h), checks every tensor against config.json, then reads
   * only the tensors the model uses. Throws an AttnLabError naming the file and the tensor; nothing of
   * a failed load is kept.
   */
  async function loadCheckpoint(kind, { config, size, read, index, shards, onProgress = () => {}, chunkBytes = 16 * 1024 * 1024, format = 'safetensors' }) {
    if (!Object.hasOwn(CHECKPOINT_KINDS, kind)) throw new AttnLabError(`kind must be ${Object.keys(CHECKPOINT_KINDS).join(' or ')}, got ${JSON.stringify(kind)}`);
    const weights = Object.hasOwn(WEIGHT_FORMATS, format) ? WEIGHT_FORMATS[format] : null;
    if (!weights) throw new AttnLabError(`format must be 'safetensors' or 'bin' (or the file's name), got ${JSON.stringify(format)}`);
    checkInteger('chunkBytes', chunkBytes, { min: 1 });
    if (shards !== undefined && (!Array.isArray(shards) || weights !== 'safetensors' || typeof index !== 'string')) {
      throw new AttnLabError('a sharded checkpoint is {index: model.safetensors.index.json\'s text, shards: [{name, size, read}]}, in format \'safetensors\'');
    }
    const raw = CHECKPOINT_KINDS[kind].Raw();
    try {
      // The weights files, in the order the loader counts them (_index_file(), _load(i).file).
      let files;
      if (shards) {
        check(raw._open_sharded(String(config), index, Object.fromEntries(shards.map((s) => [String(s.name), Number(s.size)]))));
        const byName = new Map(shards.map((s) => [String(s.name), s]));
        files = raw._file_names().map((name) => ({ name, read: byName.get(name).read }));
      } else {
        check(raw._open(String(config), Number(size), weights));
        files = [{ name: weights === 'bin' ? 'pytorch_model.bin' : 'model.safetensors', read }];
      }
      for (let ranges = raw._index_reads(); ranges.length; ranges = raw._index_reads()) {
        const { name, read: readFile } = files[raw._index_file()];
        check(raw._index_give(await readRanges(readFile, ranges, name)));
      }
      check(raw._plan());
      const loads = Array.from({ length: raw._load_count() }, (_, i) => raw._load(i));
      const total = loads.reduce((sum, l) => sum + l.end - l.begin, 0);
      let bytes = 0;
      for (const [i, load] of loads.entries()) {
        for (let at = load.begin; at < load.end; at += chunkBytes) {
          const length = Math.min(chunkBytes, load.end - at);
          const { name, read: readFile } = files[load.file];
          check(raw._write(i, await readExactly(readFile, at, length, name, `tensor "${load.fileName}"`), at - load.begin));
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

  /**
   * A kind's check of config.json's text alone -> '' or what is wrong, the memory a model needs when it does
   * not fit included (core/models/model_memory.h, the one rule): the Hub clients ask it before the weights.
   */
  function checkConfig(kind, config) {
    if (!Object.hasOwn(CHECKPOINT_KINDS, kind)) throw new AttnLabError(`kind must be ${Object.keys(CHECKPOINT_KINDS).join(' or ')}, got ${JSON.stringify(kind)}`);
    return mod._check_config(kind, String(config));
  }

  /** loadCheckpoint('bert', ...): a BERT from model.safetensors or pytorch_model.bin ({kind: 'distilbert'}: a DistilBERT). */
  const loadBert = ({ kind = 'bert', ...options }) => loadCheckpoint(kind, options);
  /** loadCheckpoint('marian', ...): a Marian (opus-mt) model from model.safetensors or pytorch_model.bin. */
  const loadMarian = (options) => loadCheckpoint('marian', options);

  return { Bert, Marian, Decoder, loadCheckpoint, checkConfig, loadBert, loadMarian, modelKinds: MODEL_KINDS };
}
