// libFuzzer target for parse_safetensors (core/io/safetensors.cpp), built with ASan and UBSan by
// tests/fuzz/run_cpp_fuzz.sh. Beyond "no crash, no UB, no leak, no allocation past -malloc_limit_mb",
// every accepted file must satisfy what the checks promise, and an F32-only file must survive a
// write/read round trip; a broken promise aborts, which libFuzzer reports with the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/safetensors.h"

using namespace attnlab;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

std::size_t element_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "F64" || dtype == "I64") return 8;
  return 1;  // I8, U8, BOOL: the parser accepts no other dtype
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SafeTensorsFile file;
  const std::string error = parse_safetensors(data, size, file);
  if (!error.empty()) {
    require(file.tensors.empty() && file.metadata.empty(), "a failed parse leaves the output empty");
    return 0;
  }
  require(size >= 8, "an accepted file has its 8-byte length");
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | data[i];
  require(header <= kSafetensorsMaxHeaderBytes && header <= size - 8, "the header fits the cap and the file");

  // The tensors tile the data section: their sizes add up to it exactly.
  std::uint64_t total = 0;
  bool all_f32 = true;
  for (const auto& [name, t] : file.tensors) {
    const std::size_t element = element_size(t.dtype);
    require(t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64" || t.dtype == "I32" ||
                t.dtype == "I64" || t.dtype == "I8" || t.dtype == "U8" || t.dtype == "BOOL", "a known dtype");
    const std::int64_t n = t.numel();
    require(n >= 0, "numel() of a parsed tensor does not overflow");
    require(t.bytes.size() == std::uint64_t(n) * element, "bytes = numel * dtype size");
    require(t.to_float().size() == std::size_t(n) && t.to_int32().size() == std::size_t(n), "readers give numel values");
    total += t.bytes.size();
    all_f32 = all_f32 && t.dtype == "F32";
  }
  require(total == size - 8 - header, "the tensors cover the data section exactly");

  // Written back (F32 only: the writer writes F32) and read again: the same names, shapes and bytes.
  if (all_f32) {
    std::vector<std::vector<float>> values;
    std::vector<NamedFloatTensor> named;
    for (const auto& [name, t] : file.tensors) values.push_back(t.to_float());
    std::size_t i = 0;
    for (const auto& [name, t] : file.tensors) named.push_back({name, t.shape, values[i++].data()});
    const std::vector<std::uint8_t> bytes = write_safetensors(named, file.metadata);
    SafeTensorsFile again;
    require(parse_safetensors(bytes.data(), bytes.size(), again).empty(), "what the writer writes parses");
    require(again.metadata == file.metadata, "metadata round-trips");
    require(again.tensors.size() == file.tensors.size(), "every tensor round-trips");
    for (const auto& [name, t] : file.tensors) {
      const auto it = again.tensors.find(name);
      require(it != again.tensors.end() && it->second.shape == t.shape && it->second.bytes == t.bytes,
              "names, shapes and bytes round-trip");
    }
  }
  return 0;
}
