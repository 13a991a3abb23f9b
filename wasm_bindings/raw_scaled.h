// The Scaled dot-product lab's core, callable from JS: the score stages the kernel fuses (Q K^T, the
// scale, the mask), the entropy of each row of weights, and the course's SelfAttention in its three
// stages (project; the kernel on any backend, in JS; finish). Same rules as raw_api.h.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "layers/self_attention.h"
#include "raw_api.h"
#include "raw_staged.h"

namespace attnlab::wasm {

// args: {T, S, D, q [T, D], k [S, D], scale, mask? [T, S] additive}
// Results: _stage_scores(), _stage_scaled(), _stage_masked() [T, S].
std::string _attention_score_stages(const emscripten::val& args);
emscripten::val _stage_scores();
emscripten::val _stage_scaled();
emscripten::val _stage_masked();
// weights [rows, cols] -> _entropies() [rows] (nats; Float64Array).
std::string _row_entropies(const emscripten::val& weights, int rows, int cols);
emscripten::val _entropies();

class RawSelfAttention : public RawLayer {
 public:
  RawSelfAttention(int input_dim, float dropout, std::uint32_t seed);
  static std::string _config_error(int input_dim, double dropout);
  // x [batch * length, input_dim]; mask [batch, length, length] additive, or null; dropout (train) drawn
  // from `seed`. Then raw_staged.h's one call: the kernel's weights finish the layer.
  std::string _begin(const val& x, int batch, int length, const val& mask, bool train, double seed);
  StagedForward* staged() { return &layer_; }  // for _next_call / _finish_call
  val _queries() const { return view_of(layer_.queries()); }
  val _keys() const { return view_of(layer_.keys()); }
  val _values() const { return view_of(layer_.values()); }
  val _weights() const { return view_of(layer_.weights()); }
  val _output() const { return view_of(layer_.output()); }
  float _scale() const { return layer_.scale(); }
  ParameterList params() override { return layer_.parameters(); }

 private:
  Rng rng_;
  SelfAttention layer_;
};

}  // namespace attnlab::wasm
