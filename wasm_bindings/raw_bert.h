// The Pretrained lab's BERT, callable from JS: loaded as every checkpoint model is (raw_checkpoint.h),
// then _forward (CPU backends), or _begin_forward and the staged calls of raw_staged.h (the kernel in JS,
// for WebGPU): one attention call per layer. Same rules as raw_api.h: every method returns "" or a
// message, nothing throws.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "models/bert.h"
#include "raw_api.h"
#include "raw_checkpoint.h"
#include "raw_staged.h"

namespace attnlab::wasm {

class RawBert : public RawCheckpoint {
 public:
  // kind: a registry id whose model is a BertModel ("bert", "distilbert").
  explicit RawBert(const std::string& kind) : RawCheckpoint(kind) {}

  // heads: the pass's heads switched off, [layer, head, ...] (undefined: none), for this pass alone.
  std::string _forward(const val& ids, const val& types, int backend, const val& heads);
  std::string _begin_forward(const val& ids, const val& types, const val& heads);
  int _length() const { return bert() ? bert()->length() : 0; }
  val _attention(int layer) const;  // [H, T, T]
  val _queries(int layer) const;    // [H, T, D]
  val _keys(int layer) const;       // [H, T, D]
  val _hidden(int layer) const;     // [T, E], layer 0 = the embeddings
  // [{id, probability, logit}] of the MLM head at a position of the last forward.
  val _predict(int position, int k) const;

 private:
  BertModel* bert() const { return static_cast<BertModel*>(model()); }  // nullptr until loaded
  std::string check_layer(int layer) const;
  std::string read_inputs(const val& ids, const val& types, std::vector<std::int32_t>& i, std::vector<std::int32_t>& t) const;
};

}  // namespace attnlab::wasm
