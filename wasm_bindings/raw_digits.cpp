#include "raw_digits.h"

#include <algorithm>

namespace attnlab::wasm {

namespace {

bool is_uint8_array(const val& v) {
  return !v.isUndefined() && !v.isNull() && v.instanceof(val::global("Uint8Array"));
}

val bytes_copy(const std::uint8_t* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data)).call<val>("slice");
}

}  // namespace

std::string RawDigits::_load(const val& bytes) {
  if (!is_uint8_array(bytes)) return "the digit asset must be a Uint8Array (the inflated mnist10k.bin.gz)";
  const std::size_t n = bytes["length"].as<std::size_t>();
  std::vector<std::uint8_t> copy(n);
  val(emscripten::typed_memory_view(n, copy.data())).call<void>("set", bytes);
  MnistAsset parsed;
  std::string error = parse_mnist_asset(copy.data(), copy.size(), parsed);
  if (!error.empty()) return error;
  asset_ = std::move(parsed);
  return {};
}

val RawDigits::_images(int first, int count) const {
  first = std::max(0, std::min(first, asset_.count));
  count = std::max(0, std::min(count, asset_.count - first));
  const std::size_t P = std::size_t(asset_.pixels_per_image());
  val out = val::object();
  out.set("pixels", bytes_copy(asset_.pixels.data() + first * P, count * P));
  out.set("labels", bytes_copy(asset_.labels.data() + first, std::size_t(count)));
  out.set("rows", asset_.rows);
  out.set("cols", asset_.cols);
  return out;
}

}  // namespace attnlab::wasm
