#include "mnist_asset.h"

#include <algorithm>
#include <cstring>

namespace attnlab {

namespace {

std::uint32_t read_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

std::uint16_t read_u16(const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); }

void write_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = std::uint8_t(v >> (8 * i));
}

void write_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = std::uint8_t(v);
  p[1] = std::uint8_t(v >> 8);
}

}  // namespace

std::string parse_mnist_asset(const std::uint8_t* data, std::size_t size, MnistAsset& out) {
  out = MnistAsset{};
  if (size < kMnistAssetHeaderBytes)
    return "digit asset: " + std::to_string(size) + " bytes is shorter than its 16-byte header";
  if (std::memcmp(data, "MNST", 4) != 0)
    return "digit asset: bad magic (expected \"MNST\"; a gzip file starts with 1f 8b and must be inflated first)";
  const std::uint32_t version = read_u32(data + 4);
  if (version != kMnistAssetVersion)
    return "digit asset: version " + std::to_string(version) + " is not supported (expected 1)";
  const std::uint32_t count = read_u32(data + 8);
  const int rows = read_u16(data + 12), cols = read_u16(data + 14);
  if (count == 0 || rows == 0 || cols == 0)
    return "digit asset: empty (count " + std::to_string(count) + ", " + std::to_string(rows) + "x" +
           std::to_string(cols) + " pixels)";
  if (count > 1000000) return "digit asset: count " + std::to_string(count) + " is more than 1,000,000 images";
  const std::size_t pixels = std::size_t(count) * rows * cols;
  const std::size_t expected = kMnistAssetHeaderBytes + pixels + count;
  if (size != expected)
    return "digit asset: " + std::to_string(size) + " bytes, expected " + std::to_string(expected) + " for " +
           std::to_string(count) + " images of " + std::to_string(rows) + "x" + std::to_string(cols) +
           " pixels and their labels";
  const std::uint8_t* labels = data + kMnistAssetHeaderBytes + pixels;
  for (std::uint32_t i = 0; i < count; ++i)
    if (labels[i] > 9)
      return "digit asset: label " + std::to_string(i) + " is " + std::to_string(labels[i]) + " (labels are 0..9)";
  out.count = int(count);
  out.rows = rows;
  out.cols = cols;
  out.pixels.assign(data + kMnistAssetHeaderBytes, labels);
  out.labels.assign(labels, labels + count);
  return {};
}

std::vector<std::uint8_t> write_mnist_asset(const MnistAsset& asset) {
  std::vector<std::uint8_t> bytes(kMnistAssetHeaderBytes + asset.pixels.size() + asset.labels.size());
  std::memcpy(bytes.data(), "MNST", 4);
  write_u32(bytes.data() + 4, kMnistAssetVersion);
  write_u32(bytes.data() + 8, std::uint32_t(asset.count));
  write_u16(bytes.data() + 12, std::uint16_t(asset.rows));
  write_u16(bytes.data() + 14, std::uint16_t(asset.cols));
  std::copy(asset.pixels.begin(), asset.pixels.end(), bytes.begin() + kMnistAssetHeaderBytes);
  std::copy(asset.labels.begin(), asset.labels.end(), bytes.begin() + kMnistAssetHeaderBytes + asset.pixels.size());
  return bytes;
}

}  // namespace attnlab
