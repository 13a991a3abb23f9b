// The Translation lab's Marian model, callable from JS. A checkpoint (model.safetensors or
// pytorch_model.bin) is read in steps so JS can stream the file:
//   _open(config.json, file size, "safetensors" | "bin")
//   while _index_reads() names ranges [b0, e0, b1, e1, ...]: _index_give(their bytes, concatenated)
//     (safetensors: the first 8 bytes, then the header; bin: core/io/torch_checkpoint.h's
//     TorchCheckpointReader: the end records, the central directory, local headers, data.pkl)
//   _plan()   every check against config.json, the model allocated
//   per planned tensor: _write(i, bytes, offset) ... over its byte range [begin, end), then _store(i)
//   _finish()
// Then _encode, _decode (teacher-forced) and _generate (greedy or beam search) on a CPU backend. Same
// rules as raw_api.h: every method returns "" or a message; a failed load leaves the model the page had.
// Memory beyond the model while loading: one tensor's bytes (staging), plus its dense float32 copy only
// when it is not already dense little-endian F32 (F16, BF16, F64, or a strided view of a .bin).
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "models/marian_loader.h"
#include "raw_api.h"
#include "raw_staged.h"

namespace attnlab::wasm {

class RawMarian {
 public:
  std::string _open(const std::string& config_json, double file_size, const std::string& format);
  val _index_reads() const;  // [begin, end, begin, end, ...]: [] once the index is read (or refused)
  std::string _index_give(const val& bytes);
  std::string _plan();
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
  // The same passes staged around a kernel that runs in JS (the page's WebGPU; core/models/marian.h),
  // through raw_staged.h's _next_call / _finish_call: _begin_encode(ids) (a call per encoder layer),
  // then _begin_decode(target) (two per decoder layer: causal self-attention, then cross-attention).
  // The views of the attentions are then as after _encode and _decode.
  std::string _begin_encode(const val& ids);
  std::string _begin_decode(const val& target);
  StagedForward* staged() { return ready() ? model_.get() : nullptr; }  // for _next_call / _finish_call
  int _source_length() const { return ready() ? model_->source_length() : 0; }
  val _encoder_attention(int layer) const;  // [H, S, S]
  val _decoder_attention(int layer) const;  // [H, T, T] of the last _decode
  val _cross_attention(int layer) const;    // [H, T, S] of the last _decode
  val _logits() const;                      // [T, V] of the last _decode

 private:
  bool ready() const { return model_ && finished_; }
  std::string read_ids(const char* what, const val& ids, std::vector<std::int32_t>& out) const;
  std::string give_safetensors(const std::uint8_t* bytes, std::uint64_t size);
  std::uint64_t tensor_bytes(int i) const { return sources_[std::size_t(i)].end - sources_[std::size_t(i)].begin; }

  MarianConfig config_;
  bool bin_ = false;
  std::string file_;  // "model.safetensors" or "pytorch_model.bin", for messages
  std::uint64_t file_size_ = 0, header_size_ = 0;
  std::vector<ByteRange> reads_;  // safetensors: what _index_reads asks for next
  bool index_read_ = false;
  SafeTensorsIndex safetensors_;
  std::unique_ptr<TorchCheckpointReader> torch_;
  // Per planned tensor, where its bytes are and how to decode them: a safetensors entry is a contiguous
  // TorchTensor (stride row-major, offset 0).
  std::vector<TorchTensor> sources_;
  MarianLoadPlan plan_;
  std::unique_ptr<MarianModel> model_;
  // One tensor's bytes at a time, held as floats so a dense F32 tensor is decoded in place (4-aligned).
  std::vector<float> staging_;
  int staged_ = -1;  // the planned tensor staging_ holds
  std::vector<float> dense_;
  std::vector<bool> stored_;
  bool finished_ = false;
};

}  // namespace attnlab::wasm
