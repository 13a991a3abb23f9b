// The Pretrained lab's BERT, callable from JS. A checkpoint is read in steps so that JS can stream the
// file tensor by tensor (a 440 MB model.safetensors is never held twice):
//   _open(config.json text, file size)      config checked
//   _header_length(first 8 bytes)           the header's length N (or why the file is not safetensors)
//   _plan(the N header bytes)               every check of the header, then which tensor goes where;
//                                           the model's float32 storage is allocated here
//   _write(i, bytes, offset)  ... _store(i) each planned tensor's bytes, in chunks, then widened,
//                                           packed and checked finite
//   _finish()                               the model is ready
// Then _forward (CPU backends), or _begin_forward and the staged calls of raw_staged.h (the kernel in
// JS, for WebGPU): one attention call per layer. Same rules as raw_api.h: every method returns "" or a message, nothing throws, and a failed
// load leaves the model the page had (it lives in another object).
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "models/bert_loader.h"
#include "raw_api.h"
#include "raw_staged.h"

namespace attnlab::wasm {

class RawBert {
 public:
  std::string _open(const std::string& config_json, double file_size);
  std::string _header_length(const val& first8);
  double _header_bytes() const { return double(header_size_); }
  std::string _plan(const val& header);
  int _load_count() const { return int(plan_.loads.size()); }
  // {name (canonical), file_name, dtype, shape, begin, end} of planned tensor i.
  val _load(int i) const;
  std::string _write(int i, const val& bytes, double offset);
  std::string _store(int i);
  std::string _finish();
  // {naming, mlm, separate_decoder, skipped: [...], config: {...}, parameters}
  val _summary() const;

  std::string _forward(const val& ids, const val& types, int backend);
  std::string _begin_forward(const val& ids, const val& types);
  StagedForward* staged() { return ready() ? model_.get() : nullptr; }  // for _next_call / _finish_call
  int _length() const { return ready() ? model_->length() : 0; }
  val _attention(int layer) const;  // [H, T, T]
  val _queries(int layer) const;    // [H, T, D]
  val _keys(int layer) const;       // [H, T, D]
  val _hidden(int layer) const;     // [T, E], layer 0 = the embeddings
  // [{id, probability, logit}] of the MLM head at a position of the last forward.
  val _predict(int position, int k) const;

 private:
  bool ready() const { return model_ && finished_; }
  std::string check_layer(int layer) const;
  std::string read_inputs(const val& ids, const val& types, std::vector<std::int32_t>& i, std::vector<std::int32_t>& t) const;

  BertConfig config_;
  std::uint64_t file_size_ = 0, header_size_ = 0;
  bool header_read_ = false;
  BertLoadPlan plan_;
  std::unique_ptr<BertModel> model_;
  std::vector<std::uint8_t> staging_;  // the tensor being read, when it cannot be read in place
  std::vector<bool> stored_;
  bool finished_ = false;
};

}  // namespace attnlab::wasm
