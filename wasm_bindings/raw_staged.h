// The staged-forward protocol (core/staged_forward.h) as JS sees it, bound once for every model that
// offers it (bind_staged below; RawBert, RawMarian, RawSelfAttention):
//   _next_call() -> {B, H, T, S, D, scale, q [B*H*T*D], k, v [B*H*S*D], mask [T*S...] or null,
//                   maskStrideB, maskStrideH, readWeights}, or null when no call is pending (the pass is
//                   done). The arrays are views into the heap: copy them before anything else runs in
//                   the module. readWeights false: the model never reads the weights back.
//   _finish_call(weights [B*H*T*S], each in [0, 1], or null when readWeights is false, out [B*H*T*D])
//                   -> "" or what is wrong; the pass moves on to its next call.
//   _next_backward() -> {B, H, T, S, D, scale, q, k, v, weights (the forward's, or null: recompute them),
//                   dOut [B*H*T*D], dWeights [B*H*T*S] or null}, or null when no backward call is pending
//                   (a forward-only model never has one)
//   _finish_backward(dQ [B*H*T*D], dK, dV [B*H*S*D], finite) -> "" or what is wrong
// One JS driver runs these on the page's kernel (wasm_bindings/js/staged_calls.js).
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>

#include "staged_forward.h"

namespace attnlab::wasm {

using emscripten::val;

// model: the raw object's model, or nullptr when none is loaded.
val next_call_record(StagedForward* model);
std::string finish_call_checked(StagedForward* model, const val& weights, const val& out);
val next_backward_record(StagedForward* model);
std::string finish_backward_checked(StagedForward* model, const val& d_q, const val& d_k, const val& d_v);

// Adds _next_call and _finish_call to a raw class that has `StagedForward* staged()`.
template <class Raw, class... Bases>
void bind_staged(const emscripten::class_<Raw, Bases...>& c) {
  c.function("_next_call", emscripten::optional_override([](Raw& raw) { return next_call_record(raw.staged()); }));
  c.function("_finish_call", emscripten::optional_override(
                                 [](Raw& raw, const val& weights, const val& out) { return finish_call_checked(raw.staged(), weights, out); }));
  c.function("_next_backward", emscripten::optional_override([](Raw& raw) { return next_backward_record(raw.staged()); }));
  c.function("_finish_backward", emscripten::optional_override([](Raw& raw, const val& d_q, const val& d_k, const val& d_v) {
               return finish_backward_checked(raw.staged(), d_q, d_k, d_v);
             }));
}

}  // namespace attnlab::wasm
