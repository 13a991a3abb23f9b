// The one driver of the staged-call protocol (core/staged_forward.h; bound once for every model and
// trainer in wasm_bindings/raw_staged.h): a model begins a pass (BERT's forward, Marian's encoder or
// decoder, a trainer's step), and this runs each attention call the pass leaves pending on the page's
// kernel, in order, until none is left: the forward calls, then a training step's backward call. The kernel is whatever `attention` is: a KernelRunner's forward (web/training/kernel_runner.js:
// WebGPU, SIMD128 or scalar, with the backend rules and the fallback on a lost device), or a check of
// every call against another kernel. No model-specific code here.

/**
 * raw: a raw object with the protocol's calls (_next_call, _finish_call, _next_backward, _finish_backward);
 * attention: {B, H, T, S, D, q, k, v, scale, readWeights, mask?, maskStrideB?, maskStrideH?} ->
 * {weights [B*H*T*S] (null allowed when readWeights is false), out [B*H*T*D]} (or a Promise of it);
 * check(message) throws the module's error for a message the model returns; backward (for a training
 * step): {B, H, T, S, D, scale, q, k, v, weights (null: recompute them), dOut, dWeights (or null)} ->
 * {dQ, dK, dV} (or a Promise of it). Each gets a second argument {index}: the forward call's place in the
 * pass (0, 1, ...), and for a backward call the place of the forward call it differentiates. Backward
 * calls come in the reverse order of the forward calls (the last layer's first, as backpropagation goes),
 * so a kernel that keeps each forward's weights where it ran (the GPU) keeps them apart by index.
 * -> {calls (how many ran, forward and backward), last (the last forward's result, with its `choice`
 * where the kernel gives one)}.
 */
export async function runStagedCalls(raw, attention, check, { backward = null } = {}) {
  let calls = 0;
  let last = null;
  for (let call = raw._next_call(); call !== null; call = raw._next_call()) {
    // The call's arrays are views into the module's heap: copied before anything else can move it.
    const args = { B: call.B, H: call.H, T: call.T, S: call.S, D: call.D, scale: call.scale, readWeights: call.readWeights,
      q: call.q.slice(), k: call.k.slice(), v: call.v.slice() };
    if (call.mask) Object.assign(args, { mask: call.mask.slice(), maskStrideB: call.maskStrideB, maskStrideH: call.maskStrideH });
    last = await attention(args, { index: calls });
    check(raw._finish_call(last.weights ?? null, last.out));
    calls += 1;
  }
  const forwardCalls = calls;
  for (let call = raw._next_backward(); call !== null; call = raw._next_backward()) {
    if (!backward) throw new Error('this pass has a backward call (a training step): give runStagedCalls a backward kernel');
    const copy = (view) => (view ? view.slice() : null);
    const { dQ, dK, dV } = await backward({ B: call.B, H: call.H, T: call.T, S: call.S, D: call.D, scale: call.scale,
      q: call.q.slice(), k: call.k.slice(), v: call.v.slice(), weights: copy(call.weights), dOut: call.dOut.slice(), dWeights: copy(call.dWeights) },
    { index: forwardCalls - 1 - (calls - forwardCalls) });
    check(raw._finish_backward(dQ, dK, dV));
    calls += 1;
  }
  return { calls, last };
}
