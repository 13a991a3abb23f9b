// The idiomatic JS API over the raw Embind entries (bindings.cpp). It owns three rules:
//   1. a raw call that returns a message becomes a thrown AttnLabError (the instance keeps working);
//   2. results are copied out of the WASM heap at once (slice), since heap growth detaches views;
//   3. every object that holds C++ memory has delete(), and using it afterwards is a clear error.
// Documented in docs/api.md.
import { AttnLabError, check, checkInteger } from './js/checks.js';
import { layerClasses } from './js/layers.js';
import { trainerClasses } from './js/trainers.js';
import { checkpointModels } from './js/checkpoint_loader.js';

export { AttnLabError };

export function wrapModule(mod, { build }) {
  const layers = layerClasses(mod);
  const trainers = trainerClasses(mod);
  const checkpoints = checkpointModels(mod);
  const values = () => mod._result().slice();
  const grad = () => mod._result_grad().slice();
  const loss = () => mod._result_loss();

  return {
    version: mod._version(),
    build, // 'simd', 'scalar' or (Node) 'simd-threads': which WASM module is running
    cpuBackends: [...mod._backends()],
    AttnLabError,
    // Embedding, Linear, MultiheadAttention, SelfAttention, Adam, Rng (js/layers.js)
    ...layers,
    // Digits, Trainer, AlignmentTrainer, LookupTrainer, CountTrainer; trainerIds() (the registered ids:
    // ['alignment', 'lookup', 'count']); createTrainer(id, config, assets) (js/trainers.js)
    ...trainers,
    // Bert, Marian, Decoder; loadCheckpoint(kind, ...), checkConfig(kind, config), unreadArchitecture(config), loadBert, loadMarian; modelKinds: the registry's rows (js/checkpoint_loader.js; the classes: js/bert_model.js, marian_model.js, decoder_model.js)
    ...checkpoints,
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
    /**
     * A state_dict saved with torch.save (bytes: Uint8Array of the .pt file) -> {name: {dtype: 'F32', shape,
     * data: Float32Array}} (F16, BF16 and F64 tensors widened or rounded to float32; an integer or bool
     * tensor keeps its dtype and has no data). Throws an AttnLabError naming `file` and what is wrong.
     */
    readTorchStateDict(bytes, file = 'the .pt file') {
      const raw = new mod._RawTorchFile();
      try {
        const error = raw._read(bytes);
        if (error) throw new AttnLabError(error.replace(/^pytorch_model\.bin: /, `${file}: `));
        const out = {};
        for (let i = 0; i < raw._count(); i++) {
          const data = raw._floats(i);
          out[raw._name(i)] = { dtype: data ? 'F32' : raw._dtype(i), shape: raw._shape(i), data: data ?? null };
        }
        return out;
      } finally {
        raw.delete();
      }
    },
    /**
     * A file of one tensor, torch.save(t, 'step.pt') (or a state_dict of one entry) -> {name, dtype, shape,
     * data: Float32Array}, integers included (as floats, exact up to 2^24). Throws naming `file`.
     */
    readTorchTensor(bytes, file = 'the .pt file') {
      const raw = new mod._RawTorchFile();
      try {
        const error = raw._read(bytes);
        if (error) throw new AttnLabError(error.replace(/^pytorch_model\.bin: /, `${file}: `));
        if (raw._count() !== 1) throw new AttnLabError(`${file} holds ${raw._count()} tensors; save one, as torch.save(t, "step.pt") does`);
        const data = raw._numbers(0);
        if (!data) throw new AttnLabError(`${file}: its tensor has dtype ${raw._dtype(0)}, which is not read`);
        return { name: raw._name(0), dtype: raw._dtype(0), shape: raw._shape(0), data };
      } finally {
        raw.delete();
      }
    },
    /** Single-thread f32x4 multiply-add rate in GFLOP/s, measured for about `seconds`. */
    simd128PeakGflops(seconds = 0.25) { return mod._simd128_peak_gflops(seconds); },
    _module: mod,
  };
}
