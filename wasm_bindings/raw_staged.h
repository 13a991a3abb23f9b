// The staged-forward protocol (core/staged_forward.h) as JS sees it, bound once for every model that
// offers it (bind_staged below; RawBert, RawMarian, RawSelfAttention):
//   _next_call() -> {B, H, T, S, D, scale, q [B*H*T*D], k, v [B*H*S*D], mask [T*S...] or null,
//                   maskStrideB, maskStrideH}, or null when no call is pending (the pass is done).
//                   The arrays are views into the heap: copy them before anything else runs in the module.
//   _finish_call(weights [B*H*T*S], each in [0, 1], out [B*H*T*D]) -> "" or what is wrong; the pass
//                   moves on to its next call.
// One JS driver runs these on the page's kernel (web/training/staged_calls.js).
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

// Adds _next_call and _finish_call to a raw class that has `StagedForward* staged()`.
template <class Raw, class... Bases>
void bind_staged(const emscripten::class_<Raw, Bases...>& c) {
  c.function("_next_call", emscripten::optional_override([](Raw& raw) { return next_call_record(raw.staged()); }));
  c.function("_finish_call", emscripten::optional_override(
                                 [](Raw& raw, const val& weights, const val& out) { return finish_call_checked(raw.staged(), weights, out); }));
}

}  // namespace attnlab::wasm
