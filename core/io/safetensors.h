// The safetensors format (huggingface/safetensors): 8-byte little-endian header length N, N bytes of
// JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the raw little-endian data. Used for the PyTorch fixtures and for importing and exporting
// model weights (state_dicts). Malformed files get a message that names what is wrong.
//
// The parser makes the reference implementation's checks (read_metadata, Metadata::validate) and the
// same ones as web/io/safetensors.js: a header length under kSafetensorsMaxHeaderBytes, UTF-8 JSON,
// known dtypes, a byte size (shape product times dtype size) computed without overflow, and
// data_offsets that, sorted, tile the data section exactly (no overlap, no gap, no trailing bytes).
// Every input, however hostile, gets "" or an error string: no overflow, no huge allocation, no abort
// (tests/fuzz/fuzz_safetensors.cpp runs it under libFuzzer with ASan and UBSan).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnlab {

// The reference's MAX_HEADER_SIZE: a header only describes tensors; 100 MB of it is already absurd.
constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100000000;

struct SafeTensor {
  std::string dtype;               // "F32", "F16", "BF16", "F64", "I32", "I64", "I8", "U8", "BOOL"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // after parse_safetensors: numel() * dtype size bytes

  // The product of the dims; -1 for a negative dim or a product past int64 (never for a parsed tensor).
  std::int64_t numel() const;
  std::vector<float> to_float() const;         // any numeric dtype
  std::vector<std::int32_t> to_int32() const;  // integer and bool dtypes
};

struct SafeTensorsFile {
  std::map<std::string, SafeTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Returns "" on success, else what is wrong with the file (and `out` is left empty).
std::string parse_safetensors(const std::uint8_t* data, std::size_t size, SafeTensorsFile& out);

// ---- Reading a large file without holding it: the header first, then each tensor's bytes.
// A checkpoint of 440 MB is read tensor by tensor (web/pretrained/checkpoint_reader.js): only the
// header is parsed here, with every check of parse_safetensors, and the caller reads each tensor's
// byte range [begin, end) of the file straight into its destination.

struct SafeTensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte offsets in the file (the data section's offsets plus 8 + header)
  std::uint64_t end = 0;
  std::int64_t numel() const;
};

struct SafeTensorsIndex {
  std::vector<SafeTensorsEntry> entries;  // in the header's order
  std::map<std::string, std::string> metadata;
  std::uint64_t data_start = 0;
  const SafeTensorsEntry* find(const std::string& name) const;  // nullptr when absent
};

// The header's length N from the file's first 8 bytes, checked against the cap and the file size.
std::string safetensors_header_length(const std::uint8_t* first8, std::uint64_t file_size, std::uint64_t& header_size);
// The N header bytes (after the first 8) of a file of file_size bytes -> the index, or what is wrong.
std::string parse_safetensors_index(const std::uint8_t* header, std::uint64_t header_size, std::uint64_t file_size,
                                    SafeTensorsIndex& out);

// n little-endian elements of a float dtype (F32, F16, BF16, F64) as float32; false for other dtypes.
bool decode_floats(const std::string& dtype, const std::uint8_t* bytes, std::size_t n, float* out);

// F32 tensors, written in the order given (PyTorch reads any order).
struct NamedFloatTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data;
};
std::vector<std::uint8_t> write_safetensors(const std::vector<NamedFloatTensor>& tensors,
                                            const std::map<std::string, std::string>& metadata);

}  // namespace attnlab
