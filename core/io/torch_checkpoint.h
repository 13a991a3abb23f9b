// pytorch_model.bin (torch.save's ZIP format, PyTorch >= 1.6) as an index of tensors, like
// SafeTensorsIndex (safetensors.h): names, dtypes, shapes, strides and where each tensor's bytes lie in
// the file, so that a 300 MB checkpoint is read tensor by tensor and never held whole.
//
// The archive (zip_reader.h) holds <prefix>/data.pkl, the state_dict pickled (torch_pickle.h), and one
// entry <prefix>/data/<key> per storage. A tensor is a strided view of a storage: element (i0, i1, ...)
// is storage element storage_offset + i0 x stride0 + i1 x stride1 + ..., so a transposed weight, a slice
// or two tensors sharing one storage (tied weights) are read as torch reads them.
//
// Streaming, after zip_reader.h's steps 1-3 (the end records, the central directory, then the local
// header of every entry, so that each knows its data_offset):
//   locate_torch_archive(directory)                 which entry is data.pkl (and byteorder)
//   data.pkl's bytes -> zip_check_crc, parse_torch_pickle
//   byteorder's bytes, when the archive has it -> zip_check_crc, check_torch_byteorder
//   build_torch_checkpoint_index(directory, archive, pickle)   storages matched to entries and sizes
//   each tensor's bytes [begin, end) -> torch_tensor_to_float (dense, row-major float32)
// parse_torch_checkpoint does all of it on a file in memory (tests, tools, the fuzz target).
// As everywhere in the core: "" or a message starting "pytorch_model.bin: ", never an exception.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch_pickle.h"
#include "zip_reader.h"

namespace attnlab {

// The archive's entries by role, from the central directory alone.
struct TorchArchive {
  std::string prefix;   // the folder every entry is in: "archive", or the stem of the name torch.save was given
  long pickle = -1;     // <prefix>/data.pkl, an index into ZipDirectory::entries
  long byteorder = -1;  // <prefix>/byteorder, when present (PyTorch >= 2.1 writes it), else -1
};

std::string locate_torch_archive(const ZipDirectory& directory, TorchArchive& out);

// The byteorder entry's bytes: "little" is read; "big" (a checkpoint saved on a big-endian machine)
// and anything else are refused.
std::string check_torch_byteorder(const std::uint8_t* bytes, std::uint64_t size);

struct TorchCheckpointIndex {
  std::vector<TorchTensor> tensors;    // in the state_dict's order; begin/end are file offsets
  std::vector<TorchStorage> storages;  // begin/end: the storage's entry in the file
  std::string prefix;
  const TorchTensor* find(const std::string& name) const;  // nullptr when absent
};

// The pickle's storages matched to the archive's entries: each named storage has an entry
// <prefix>/data/<key> of exactly numel x dtype size bytes, whose local header has been read; every
// entry under <prefix>/data/ is a storage the pickle names. Sets each storage's and tensor's byte range.
std::string build_torch_checkpoint_index(const ZipDirectory& directory, const TorchArchive& archive, const TorchPickle& pickle,
                                         TorchCheckpointIndex& out);

// Tensor t's elements as a dense row-major float32 array of t.numel() values, from the file's bytes
// [t.begin, t.end) (`size` of them), honouring its offset and strides; F16, BF16 and F64 are widened or
// rounded to float32 as decode_floats does (safetensors.h). Integer and bool tensors are refused, unless
// `integers` (a tensor a student printed, e.g. make_batch's int64 digits): then each is its value as a
// float, exact up to 2^24.
std::string torch_tensor_to_float(const TorchTensor& t, const std::uint8_t* bytes, std::uint64_t size, float* out,
                                  bool integers = false);

// The whole file in memory -> the index, every step above made and every entry's CRC-32 checked.
std::string parse_torch_checkpoint(const std::uint8_t* data, std::uint64_t size, TorchCheckpointIndex& out);

// A byte range of a file, [begin, end).
struct ByteRange {
  std::uint64_t begin = 0, end = 0;
};

// At most this many local headers are asked for at once (about 200 bytes each): an opus-mt or BERT
// checkpoint (~260 and ~200 storages) is one request.
constexpr std::size_t kTorchHeaderBatch = 1024;

// The streamed steps above as one object, for a caller that reads the file range by range (the page and
// the CLI, through wasm_bindings/raw_marian.cpp): wanted() says which ranges it needs next, give() takes
// their bytes, until done() and index() is built. What it asks for, in order:
//   1. the file's last min(size, kZipTailBytes) bytes: the end records
//   2. the central directory
//   3. the local headers of data.pkl and byteorder: 30 + name + 128 bytes each (zip_reader.h), cut at
//      the entry's room; a header with a longer extra field is asked for again, whole
//   4. data.pkl (refused over kTorchPickleMaxBytes before it is read) and byteorder (at most 64 bytes):
//      each CRC-32 checked, then unpickled / checked; a hostile pickle stops here, before step 5
//   5. the local headers of the storages (the entries under <prefix>/data/), kTorchHeaderBatch at a time
// then build_torch_checkpoint_index. The storages' own bytes are not read here (the caller reads just
// the tensors it needs, as ranges of them), so their CRC-32s are not checked; the other entries
// (version, .data/serialization_id) are not read at all.
class TorchCheckpointReader {
 public:
  explicit TorchCheckpointReader(std::uint64_t file_size);
  // The ranges to read next, all inside the file; empty once done() or after a refusal.
  const std::vector<ByteRange>& wanted() const { return wanted_; }
  // The bytes of every wanted range, concatenated in the order asked -> "" or the message starting
  // "pytorch_model.bin: " (after which wanted() is empty and the index stays empty).
  std::string give(const std::uint8_t* bytes, std::uint64_t size);
  bool done() const { return stage_ == Stage::done; }
  const TorchCheckpointIndex& index() const { return index_; }

 private:
  enum class Stage { tail, directory, first_headers, pickle, storage_headers, done, failed };
  std::string fail(std::string error);
  std::string read_headers(const std::uint8_t* bytes);
  void ask_headers(std::vector<std::size_t> entries);
  std::string next_storage_headers();

  std::uint64_t file_size_ = 0;
  Stage stage_ = Stage::tail;
  std::vector<ByteRange> wanted_;
  std::vector<std::size_t> asked_;    // the entries whose local headers wanted_ holds, in its order
  std::vector<std::size_t> pending_;  // storage entries whose local headers are still to be asked for
  ZipDirectory directory_;
  TorchArchive archive_;
  TorchPickle pickle_;
  TorchCheckpointIndex index_;
};

}  // namespace attnlab
