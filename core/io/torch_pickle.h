// A restricted unpickler for the data.pkl of a torch.save'd state_dict (pytorch_model.bin).
//
// A pickle is a program: GLOBAL names any function of any module and REDUCE calls it, so Python's
// pickle.load on a downloaded checkpoint can run anything. This reader calls nothing. It runs only the
// opcodes torch.save (pickle protocol 2) writes for a state_dict, and matches each GLOBAL against an
// allowlist that turns it into a tag:
//   collections.OrderedDict          OrderedDict() -> an empty ordered dict
//   torch._utils._rebuild_tensor_v2  (storage, storage_offset, size, stride, requires_grad,
//                                     backward_hooks[, metadata]) -> a tensor record
//   torch.FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,
//   ShortStorage, CharStorage, ByteStorage, BoolStorage   -> a dtype, only inside a storage reference
// Storages come through BINPERSID as ('storage', <storage type>, key, location, numel): the tensor's
// bytes are the archive's entry <prefix>/data/<key>. Any other global, opcode or shape of arguments is
// refused with a message that names it and its byte offset; so is misuse of the stack or memo, a
// tensor whose size, stride and offset reach past its storage, and a top level that is not a dict of
// names to tensors.
//
// Opcodes: PROTO (2, first), GLOBAL, BINPERSID, REDUCE, BUILD, MARK, STOP, EMPTY_DICT, SETITEM,
// SETITEMS, EMPTY_TUPLE, TUPLE, TUPLE1, TUPLE2, TUPLE3, BINUNICODE, BININT1, BININT2, BININT, LONG1,
// NONE, NEWTRUE, NEWFALSE, BINPUT, LONG_BINPUT, BINGET, LONG_BINGET (what torch 1.13's torch.save
// writes for state_dicts, plus the integer and memo forms bigger checkpoints need and None).
//
// A hostile pickle cannot make it allocate much or run long: the input is capped (kTorchPickleMaxBytes),
// every opcode consumes at least a byte and does work linear in what it pops, and objects, the stack,
// marks, memo keys, strings, tensors, storages and dimensions each have a cap below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

// A data.pkl describes ~70-100 bytes per tensor (bert-base: 14 KB): 16 MB would be ~160,000 tensors.
constexpr std::uint64_t kTorchPickleMaxBytes = 16u << 20;
// Objects built (strings, integers, tuples, dicts, tensors ...): ~15 per tensor, so ~70,000 tensors;
// at most 24 bytes each, and 32 more for a dict.
constexpr std::uint64_t kTorchPickleMaxObjects = 1u << 20;
// Values on the stack at once (torch's pickles hold a handful).
constexpr std::uint64_t kTorchPickleMaxStack = 1u << 20;
// Nested MARKs (torch's pickles nest 3: SETITEMS, the tensor's arguments, the storage reference).
constexpr std::uint64_t kTorchPickleMaxMarks = 64;
// Memo keys (BINPUT / LONG_BINPUT) below this; torch numbers them 0, 1, 2, ... one per object.
constexpr std::uint64_t kTorchPickleMaxMemoKey = kTorchPickleMaxObjects;
// A string (a tensor's name, a storage key or location) longer than this is refused.
constexpr std::uint64_t kTorchPickleMaxString = 1u << 16;
// Dimensions of a tensor.
constexpr std::size_t kTorchMaxRank = 64;
// Tensors rebuilt, storages named, and the state_dict's entries: each at most this many (the largest
// checkpoints have tens of thousands). A memoized tensor or argument tuple can be reused at 2 bytes a
// time, so without these caps a 16 MB pickle could describe a gigabyte of tensor records.
constexpr std::size_t kTorchPickleMaxTensors = 1u << 17;
// The elements of a tensor whose strides make elements meet (an expanded tensor: stride 0): read up to
// this many (64 MB of floats), refused beyond; any other tensor has at most its storage's elements.
constexpr std::int64_t kTorchMaxOverlappingElements = std::int64_t(1) << 24;
// The dimensions of all rebuilt tensors together, and of all the state_dict's entries together.
constexpr std::size_t kTorchPickleMaxDims = 1u << 19;
// Items of all tuples together (~17 per tensor), and of all dicts together (~1 per tensor and module).
constexpr std::size_t kTorchPickleMaxTupleItems = 1u << 22;
constexpr std::size_t kTorchPickleMaxDictItems = 1u << 20;
// A storage key (torch.save's are "0", "1", ...).
constexpr std::size_t kTorchStorageKeyMax = 64;

struct TorchStorage {
  std::string key;    // the archive's entry <prefix>/data/<key> holds its bytes
  std::string dtype;  // "F32", "F64", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"
  std::int64_t numel = 0;  // elements, as the pickle says (the entry must hold numel x dtype size bytes)
  // Set by build_torch_checkpoint_index (torch_checkpoint.h): the entry's bytes [begin, end) in the file.
  std::uint64_t begin = 0, end = 0;
};

struct TorchTensor {
  std::string name;   // the state_dict's key
  std::string dtype;  // its storage's dtype
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;  // in elements, all >= 0 (torch has no negative strides)
  std::int64_t storage_offset = 0;   // in elements
  std::size_t storage = 0;           // index into TorchPickle::storages
  std::int64_t numel() const;        // checked not to overflow when parsed
  bool is_contiguous() const;        // row-major and dense: its elements are one run of the storage
  // The storage elements it reaches: [storage_offset, storage_offset + span) with span = 1 + the sum of
  // (size - 1) x stride, or 0 for a tensor with no elements; checked to lie inside the storage.
  std::int64_t span = 0;
  // Set by build_torch_checkpoint_index: the file bytes holding that span, [begin, end).
  std::uint64_t begin = 0, end = 0;
};

struct TorchPickle {
  std::vector<TorchTensor> tensors;    // in the state_dict's order (a tied weight appears under each name)
  std::vector<TorchStorage> storages;  // in the order the pickle first names them
  const TorchTensor* find(const std::string& name) const;  // nullptr when absent
};

// Bytes per element of a dtype above; 0 for another.
std::size_t torch_dtype_size(const std::string& dtype);

// data.pkl's bytes -> the state_dict's tensors and storages, or "pytorch_model.bin: entry <entry_name>,
// byte N: ..." saying what is wrong (and `out` is left empty).
std::string parse_torch_pickle(const std::uint8_t* data, std::uint64_t size, const std::string& entry_name, TorchPickle& out);

}  // namespace attnlab
