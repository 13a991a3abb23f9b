// The Translation lab's Marian model, callable from JS. A checkpoint is read in steps so JS can stream
// the file (as raw_bert.h does): _open(config.json, file size) -> _header_length(first 8 bytes) ->
// _plan(header bytes) -> per planned tensor _write(i, bytes, offset) ... _store(i) -> _finish().
// Then _encode, _decode (teacher-forced) and _generate (greedy or beam search) on a CPU backend. Same
// rules as raw_api.h: every method returns "" or a message; a failed load leaves the model the page had.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "models/marian_loader.h"
#include "raw_api.h"

namespace attnlab::wasm {

class RawMarian {
 public:
  std::string _open(const std::string& config_json, double file_size);
  std::string _header_length(const val& first8);
  double _header_bytes() const { return double(header_size_); }
  std::string _plan(const val& header);
  int _load_count() const { return int(plan_.loads.size()); }
  val _load(int i) const;  // {name, fileName, dtype, shape, begin, end}
  std::string _write(int i, const val& bytes, double offset);
  std::string _store(int i);
  std::string _finish();
  val _summary() const;

  std::string _encode(const val& ids, int backend);
  std::string _decode(const val& target, int backend);
  // -> {error} or {ids, score, cross: [Float32Array [L*H*S] per generated token], steps: [{beams, scores, finished}]}
  val _generate(int num_beams, int max_length, int backend);
  int _source_length() const { return ready() ? model_->source_length() : 0; }
  val _encoder_attention(int layer) const;  // [H, S, S]
  val _decoder_attention(int layer) const;  // [H, T, T] of the last _decode
  val _cross_attention(int layer) const;    // [H, T, S] of the last _decode
  val _logits() const;                      // [T, V] of the last _decode

 private:
  bool ready() const { return model_ && finished_; }
  std::string read_ids(const char* what, const val& ids, std::vector<std::int32_t>& out) const;

  MarianConfig config_;
  std::uint64_t file_size_ = 0, header_size_ = 0;
  bool header_read_ = false;
  SafeTensorsIndex index_;
  MarianLoadPlan plan_;
  std::unique_ptr<MarianModel> model_;
  std::vector<std::uint8_t> staging_;
  std::vector<float> dense_;
  std::vector<bool> stored_;
  bool finished_ = false, decoded_ = false;
};

}  // namespace attnlab::wasm
