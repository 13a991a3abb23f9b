// The one loader of every checkpoint model kind (checkpoint_model.h), from model.safetensors or
// pytorch_model.bin, sans-IO: it never reads a file itself, it says which byte ranges it needs and is
// given them, so the page (a File, a Hub download), the CLI (a file handle) and the native tests (a
// file in memory, load_checkpoint below) drive the same steps:
//
//   open(kind, config.json's text, file size, "safetensors" | "bin")   the config checked
//     or open_sharded(kind, config.json's text, model.safetensors.index.json's text, each shard's size)
//   while index_reads() is not empty: give_index(their bytes, concatenated in order)
//        safetensors: the first 8 bytes, then the header (sharded: of file index_file(), each in turn);
//        bin: torch_checkpoint.h's TorchCheckpointReader (end records, directory, headers, data.pkl)
//   plan()                   the kind's plan: every name, dtype and shape checked; the model allocated
//   per planned tensor i:    write(i, bytes, offset) over its byte range [begin, end) of file
//                            load_file(i), then store(i)
//   finish()                 the model is ready: take() it
//
// Memory beyond the model while loading: a dense F32 tensor the model keeps as stored (an embedding, a
// bias), or a dense BF16/F16 one a model holds at 16 bits (storage_16), is written straight into the
// model's storage; any other goes through one staging buffer sized for the largest such tensor, plus a
// dense float32 copy when it is not dense F32 and the model does not take its 16 bits
// (set_linear_weight_16). Every weight is checked finite and within ±kMaxInputMagnitude as it is
// stored (a 16-bit one widened a few thousand values at a time).
// As everywhere in the core: "" or a message naming the file and the tensor, never an exception; a
// failed load is dropped whole (the caller keeps the model it had).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../io/safetensors.h"
#include "../io/safetensors_shards.h"
#include "../io/torch_checkpoint.h"
#include "checkpoint_model.h"

namespace attnlab {

class CheckpointLoader {
 public:
  std::string open(std::unique_ptr<ModelKind> kind, const std::string& config_json, std::uint64_t file_size, const std::string& format);
  // A sharded safetensors checkpoint (safetensors_shards.h): the index's text, and the size of each of
  // its shards in the order parse_safetensors_shard_index lists them. Every shard's header is read; the
  // index and the headers must agree tensor for tensor.
  std::string open_sharded(std::unique_ptr<ModelKind> kind, const std::string& config_json, const std::string& index_json,
                           const std::vector<std::uint64_t>& shard_sizes);
  // The ranges to read next: empty once the index is read (or refused).
  const std::vector<ByteRange>& index_reads() const;
  // The file index_reads() are of: 0, or the shard being read (its place in shard_names()).
  int index_file() const { return shard_; }
  // The weights files: {"model.safetensors"}, {"pytorch_model.bin"}, or the shards in the index's order.
  const std::vector<std::string>& file_names() const { return files_; }
  std::string give_index(const std::uint8_t* bytes, std::uint64_t size);
  std::string plan();

  int load_count() const { return int(plan_.loads.size()); }
  const TensorLoad& load(int i) const { return plan_.loads[std::size_t(i)]; }
  // Where tensor i lies in the file ([begin, end)), its dtype and layout.
  const TorchTensor& source(int i) const { return sources_[std::size_t(i)]; }
  // Which file tensor i's bytes are in (its place in file_names(): 0 unless sharded).
  int load_file(int i) const { return source_files_[std::size_t(i)]; }
  // Where `n` bytes of tensor i at `offset` (from its begin) go: "" and `out` (n writable bytes), or why not.
  std::string write_target(int i, std::uint64_t offset, std::uint64_t n, std::uint8_t*& out);
  std::string write(int i, const std::uint8_t* bytes, std::uint64_t n, std::uint64_t offset);
  std::string store(int i);
  std::string finish();

  bool finished() const { return finished_; }
  const std::string& file() const { return file_; }
  const ModelKind* kind() const { return kind_.get(); }
  const LoadPlan& loaded() const { return plan_; }
  CheckpointModel* model() const { return finished_ ? model_.get() : nullptr; }
  // The finished model, handed over (the loader is spent).
  std::unique_ptr<CheckpointModel> take() { return finished_ ? std::move(model_) : nullptr; }
  // {kind, file, skipped, parameters, ...the kind's summary}
  Json summary() const;

 private:
  bool in_place(int i) const;
  std::uint8_t* in_place_target(int i) const;  // the model's storage of an in-place tensor
  std::string give_safetensors(const std::uint8_t* bytes, std::uint64_t size);
  // After the last shard's header: the index and the shards hold the same tensors, each once.
  std::string check_shards() const;
  const std::string& file_of(int i) const { return files_[std::size_t(source_files_[std::size_t(i)])]; }

  std::unique_ptr<ModelKind> kind_;
  std::string file_;  // "model.safetensors" or "pytorch_model.bin" (or the index's name), for messages
  std::vector<std::string> files_;  // the weights files (several when sharded)
  std::vector<std::uint64_t> sizes_;
  int shard_ = 0;                    // the file whose header index_reads() asks for
  SafetensorsShardIndex shards_;     // sharded only
  std::vector<int> entry_files_;     // per entry of safetensors_, the file it is in
  std::uint64_t file_size_ = 0, header_size_ = 0;
  std::vector<ByteRange> reads_;  // safetensors: what index_reads asks for next
  bool index_read_ = false;
  SafeTensorsIndex safetensors_;
  std::unique_ptr<TorchCheckpointReader> torch_;
  // Per planned tensor, where its bytes are and how to decode them (a safetensors entry is a contiguous
  // TorchTensor: row-major strides, offset 0).
  std::vector<TorchTensor> sources_;
  std::vector<int> source_files_;
  LoadPlan plan_;
  std::unique_ptr<CheckpointModel> model_;
  std::vector<float> staging_;  // held as floats so that a dense F32 tensor is decoded in place (4-aligned)
  int staged_ = -1;             // the planned tensor staging_ holds
  std::vector<float> dense_;
  std::vector<bool> stored_;
  bool finished_ = false;
};

// "safetensors" for model.safetensors, "bin" for pytorch_model.bin (either spelling), "" otherwise.
std::string checkpoint_format(const std::string& format_or_file);

// A whole checkpoint in memory (native tests, tools, fuzz targets), through the same steps:
// kind id, config.json's text, the weights file's bytes and format -> "" and the model (and, when
// asked, the loader's summary and plan), or the message.
std::string load_checkpoint(const std::string& kind, const std::string& config_json, const std::uint8_t* data, std::size_t size,
                            const std::string& format, std::unique_ptr<CheckpointModel>& model, Json* summary = nullptr,
                            LoadPlan* plan = nullptr);

// A sharded safetensors checkpoint in memory: the index's text and its shards by file name.
std::string load_sharded_checkpoint(const std::string& kind, const std::string& config_json, const std::string& index_json,
                                    const std::map<std::string, std::vector<std::uint8_t>>& shards, std::unique_ptr<CheckpointModel>& model,
                                    Json* summary = nullptr);

// The same, as the model class the kind builds (BertModel, MarianModel).
template <class Model>
std::string load_checkpoint_as(const std::string& kind, const std::string& config_json, const std::uint8_t* data, std::size_t size,
                               const std::string& format, std::unique_ptr<Model>& model, Json* summary = nullptr,
                               LoadPlan* plan = nullptr) {
  std::unique_ptr<CheckpointModel> loaded;
  std::string error = load_checkpoint(kind, config_json, data, size, format, loaded, summary, plan);
  if (error.empty()) model.reset(static_cast<Model*>(loaded.release()));
  return error;
}

}  // namespace attnlab
