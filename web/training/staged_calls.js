// The one driver of the staged-forward protocol (core/staged_forward.h; bound once for every model in
// wasm_bindings/raw_staged.h): a model begins a pass (BERT's forward, Marian's encoder or decoder), and
// this runs each attention call the pass leaves pending on the page's kernel, in order, until none is
// left. The kernel is whatever `attention` is: a KernelRunner's forward (web/training/kernel_runner.js:
// WebGPU, SIMD128 or scalar, with the backend rules and the fallback on a lost device), or a check of
// every call against another kernel. No model-specific code here.

/**
 * raw: a raw model object with _next_call() and _finish_call(weights, out); attention: {B, H, T, S, D,
 * q, k, v, scale, mask?, maskStrideB?, maskStrideH?} -> {weights [B*H*T*S], out [B*H*T*D]} (or a Promise
 * of it); check(message) throws the module's error for a message the model returns.
 * -> {calls (how many ran), last (the last call's result, with its `choice` where the kernel gives one)}.
 */
export async function runStagedCalls(raw, attention, check) {
  let calls = 0;
  let last = null;
  for (let call = raw._next_call(); call !== null; call = raw._next_call()) {
    // The call's arrays are views into the module's heap: copied before anything else can move it.
    const args = { B: call.B, H: call.H, T: call.T, S: call.S, D: call.D, scale: call.scale,
      q: call.q.slice(), k: call.k.slice(), v: call.v.slice() };
    if (call.mask) Object.assign(args, { mask: call.mask.slice(), maskStrideB: call.maskStrideB, maskStrideH: call.maskStrideH });
    last = await attention(args);
    check(raw._finish_call(last.weights, last.out));
    calls += 1;
  }
  return { calls, last };
}
