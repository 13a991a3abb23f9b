// The Translation lab's Marian model, callable from JS: loaded as every checkpoint model is
// (raw_checkpoint.h), then _encode, _decode (teacher-forced) and _generate (greedy or beam search) on a
// CPU backend, or the staged passes around a kernel in JS. Same rules as raw_api.h: every method returns
// "" or a message.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "models/marian.h"
#include "raw_api.h"
#include "raw_checkpoint.h"
#include "raw_staged.h"

namespace attnlab::wasm {

class RawMarian : public RawCheckpoint {
 public:
  RawMarian() : RawCheckpoint("marian") {}

  std::string _encode(const val& ids, int backend);
  // heads (here and in _generate, _begin_decode): the decoder's cross-attention heads switched off,
  // [layer, head, ...] (undefined: none), for that pass alone.
  std::string _decode(const val& target, int backend, const val& heads);
  // -> {error} or {ids, score, cross: [Float32Array [L*H*S] per generated token], steps: [{beams, scores, finished}]}
  val _generate(int num_beams, int max_length, int backend, const val& heads);
  // The same passes staged around a kernel that runs in JS (the page's WebGPU; core/models/marian.h),
  // through raw_staged.h's _next_call / _finish_call: _begin_encode(ids) (a call per encoder layer),
  // then _begin_decode(target) (two per decoder layer: causal self-attention, then cross-attention).
  // The views of the attentions are then as after _encode and _decode.
  std::string _begin_encode(const val& ids);
  std::string _begin_decode(const val& target, const val& heads);
  val _encoder_attention(int layer) const;  // [H, S, S]
  val _decoder_attention(int layer) const;  // [H, T, T] of the last _decode
  val _cross_attention(int layer) const;    // [H, T, S] of the last _decode
  val _logits() const;                      // [T, V] of the last _decode

 private:
  MarianModel* marian() const { return static_cast<MarianModel*>(model()); }  // nullptr until loaded
  std::string read_ids(const char* what, const val& ids, std::vector<std::int32_t>& out) const;
};

}  // namespace attnlab::wasm
