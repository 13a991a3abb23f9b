// Loading any model of the registry (core/models/model_kinds.h) from JS, streamed: the binding of
// core/models/checkpoint_loader.h, the one loader, bound once. Each model's raw class (RawBert,
// RawMarian) is a RawCheckpoint of its kind, adding only what is run on the loaded model. In JS,
// loadCheckpoint (wasm_bindings/attnlab.js) drives the steps:
//   _open(config.json text, file size, "safetensors" | "bin"), or _open_sharded(config, index text, sizes)
//   while _index_reads() names ranges [b0, e0, b1, e1, ...]: _index_give(their bytes, concatenated)
//   _plan()   every check against config.json, the model allocated
//   per planned tensor i: _write(i, bytes, offset) ... over its byte range [begin, end) of _load(i), then _store(i)
//   _finish()
//   _summary()   JSON text: {kind, file, config: {...}, skipped, parameters, ...what the kind adds}
// Same rules as raw_api.h: every method returns "" or a message; a failed load leaves the model the page
// had (it lives in another object).
#pragma once

#include <emscripten/val.h>

#include <string>
#include <utility>

#include "models/checkpoint_loader.h"

namespace attnlab::wasm {

using emscripten::val;

// [layer, head, layer, head, ...] from JS -> "" and the heads (checked against layers x heads_per_layer),
// or what is wrong.
std::string read_head_pairs(const val& pairs, int layers, int heads_per_layer, HeadAblation& out);

class RawCheckpoint {
 public:
  explicit RawCheckpoint(std::string kind) : kind_(std::move(kind)) {}
  virtual ~RawCheckpoint() = default;

  std::string _open(const std::string& config_json, double file_size, const std::string& format);
  // A sharded safetensors checkpoint: model.safetensors.index.json's text and {shard file name: size}.
  std::string _open_sharded(const std::string& config_json, const std::string& index_json, const val& sizes);
  val _index_reads() const;  // [begin, end, begin, end, ...]: [] once the index is read (or refused)
  int _index_file() const { return loader_.index_file(); }  // the file _index_reads() are of (_file_names())
  val _file_names() const;   // the weights files, in the order _index_file() and _load(i).file count them
  std::string _index_give(const val& bytes);
  std::string _plan() { return loader_.plan(); }
  int _load_count() const { return loader_.load_count(); }
  val _load(int i) const;  // {name, fileName, dtype, shape, begin, end, file (its place in _file_names())}
  std::string _write(int i, const val& bytes, double offset);
  std::string _store(int i) { return loader_.store(i); }
  std::string _finish() { return loader_.finish(); }
  std::string _summary() const;
  // The heads a pass can switch off (the model's ablation_layers() x ablation_heads()): {layers, heads}.
  val _head_grid() const;

  // The loaded model (nullptr until _finish has succeeded): for _next_call / _finish_call (raw_staged.h).
  StagedForward* staged() const { return loader_.model(); }

 protected:
  CheckpointModel* model() const { return loader_.model(); }
  // A pass's heads switched off, [layer, head, layer, head, ...] numbered from 0 (undefined or []: none),
  // read against the loaded model's ablation_layers() x ablation_heads(): "" or what is wrong.
  std::string read_heads_off(const val& pairs, HeadAblation& out) const;

 private:
  std::string kind_;  // the registry's id (core/models/model_kinds.h)
  CheckpointLoader loader_;
};

// The model registry's rows (core/models/model_kinds.h) as JSON: what the JS tables derive from.
std::string _model_kinds();

// A kind's check of config.json alone ("" or what is wrong, the memory it needs included: model_memory.h),
// as _open makes it: what the Hub clients ask before a weights file is downloaded.
std::string _check_config(const std::string& kind, const std::string& config_json);

// config_json.h's unread_architecture: what the core lacks for an architecture it knows and does not read, or "".
std::string _unread_architecture(const std::string& config_json);

}  // namespace attnlab::wasm
