#include "raw_torch_file.h"

namespace attnlab::wasm {

std::string RawTorchFile::_read(const val& bytes) {
  if (!bytes.instanceof(val::global("Uint8Array"))) return "the file's bytes must be a Uint8Array";
  bytes_.resize(bytes["length"].as<std::size_t>());
  val(emscripten::typed_memory_view(bytes_.size(), bytes_.data())).call<void>("set", bytes);
  std::string error = parse_torch_checkpoint(bytes_.data(), bytes_.size(), index_);
  if (!error.empty()) {
    index_ = TorchCheckpointIndex{};
    std::vector<std::uint8_t>().swap(bytes_);
  }
  return error;
}

val RawTorchFile::_shape(int i) const {
  val out = val::array();
  if (ok(i))
    for (std::int64_t d : index_.tensors[std::size_t(i)].shape) out.call<void>("push", double(d));
  return out;
}

namespace {

val dense_copy(const TorchTensor& t, const std::vector<std::uint8_t>& bytes, bool integers) {
  std::vector<float> dense(std::size_t(t.numel()));
  if (!torch_tensor_to_float(t, bytes.data() + t.begin, t.end - t.begin, dense.data(), integers).empty()) return val::undefined();
  return val::global("Float32Array").new_(val(emscripten::typed_memory_view(dense.size(), dense.data())));
}

}  // namespace

val RawTorchFile::_floats(int i) const {
  return ok(i) ? dense_copy(index_.tensors[std::size_t(i)], bytes_, false) : val::undefined();
}

val RawTorchFile::_numbers(int i) const {
  return ok(i) ? dense_copy(index_.tensors[std::size_t(i)], bytes_, true) : val::undefined();
}

}  // namespace attnlab::wasm
