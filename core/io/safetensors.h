// The safetensors format (huggingface/safetensors): 8-byte little-endian header length N, N bytes of
// JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the raw little-endian data. Used for the PyTorch fixtures and for importing and exporting
// model weights (state_dicts). Malformed files get a message that names what is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnlab {

struct SafeTensor {
  std::string dtype;               // "F32", "F64", "I32", "I64", "U8", "BOOL"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;

  std::int64_t numel() const;
  std::vector<float> to_float() const;         // any numeric dtype
  std::vector<std::int32_t> to_int32() const;  // integer and bool dtypes
};

struct SafeTensorsFile {
  std::map<std::string, SafeTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Returns "" on success, else what is wrong with the file.
std::string parse_safetensors(const std::uint8_t* data, std::size_t size, SafeTensorsFile& out);

// F32 tensors, written in the order given (PyTorch reads any order).
struct NamedFloatTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data;
};
std::vector<std::uint8_t> write_safetensors(const std::vector<NamedFloatTensor>& tensors,
                                            const std::map<std::string, std::string>& metadata);

}  // namespace attnlab
