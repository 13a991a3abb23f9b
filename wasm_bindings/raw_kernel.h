// The attention kernel itself, callable from JS: the reference that the WebGPU backend and the
// benchmark compare against. Same rules as raw_api.h (validate, return a message, never throw).
#pragma once

#include <emscripten/val.h>

#include <string>

namespace attnlab::wasm {

// args: {B, H, T, S, D, q, k, v, mask?, maskStrideB?, maskStrideH?, scale?, backend}
// Results: _kernel_weights(), _kernel_out().
std::string _attention_forward(const emscripten::val& args);
// args: {B, H, T, S, D, q, k, v, weights, dOut, dWeights?, scale?, backend}
// Results: _kernel_d_q(), _kernel_d_k(), _kernel_d_v().
std::string _attention_backward(const emscripten::val& args);
emscripten::val _kernel_weights();
emscripten::val _kernel_out();
emscripten::val _kernel_d_q();
emscripten::val _kernel_d_k();
emscripten::val _kernel_d_v();

}  // namespace attnlab::wasm
