// Helpers for the Lookup lab's tests: the real digit asset (through zlib, where the build has it),
// a synthetic asset of the same shape, and the PyTorch fixture as LookupData.
#pragma once

#include <string>

#include "data/mnist_asset.h"
#include "rng.h"
#include "test_support.h"
#include "trainers/lookup_data.h"

#if ATTNLAB_HAVE_ZLIB
#include <zlib.h>
#endif

namespace attnlab::testing {

// public/assets/mnist10k.bin.gz, inflated and parsed. Returns "" or why it cannot be had here.
inline std::string load_digit_asset(MnistAsset& out) {
#if ATTNLAB_HAVE_ZLIB
  const std::string path = std::string(ATTNLAB_ASSETS_DIR) + "/mnist10k.bin.gz";
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return "cannot open " + path + " (node scripts/build_mnist_asset.mjs writes it)";
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  const bool ok = n == 0;
  gzclose(file);
  if (!ok) return "cannot inflate " + path;
  return parse_mnist_asset(bytes.data(), bytes.size(), out);
#else
  (void)out;
  return "this build has no zlib to inflate public/assets/mnist10k.bin.gz (apt-get install zlib1g-dev)";
#endif
}

// 10,000 28x28 "digits" with the real asset's shape: class c (= i % 10) is a bright bar in rows
// 2c..2c+5 over faint noise, so a model can learn which class a query is.
inline MnistAsset synthetic_digit_asset(int count = 10000) {
  MnistAsset a;
  a.count = count;
  a.rows = a.cols = 28;
  a.pixels.resize(std::size_t(count) * 784);
  a.labels.resize(count);
  Rng rng(99);
  for (int i = 0; i < count; ++i) {
    const int c = i % 10;
    a.labels[i] = std::uint8_t(c);
    for (int p = 0; p < 784; ++p) {
      const int row = p / 28;
      const bool bar = row >= 2 * c && row < 2 * c + 6;
      a.pixels[std::size_t(i) * 784 + p] = std::uint8_t(bar ? 150 + rng.below(100) : rng.below(40));
    }
  }
  return a;
}

inline LookupData synthetic_lookup_data(std::uint32_t seed = 0) {
  LookupData d;
  const std::string error = make_lookup_data(synthetic_digit_asset(), seed, d);
  REQUIRE_MESSAGE(error.empty(), error);
  return d;
}

// The fixture's images as a part of LookupData.
inline LookupImages fixture_images(const SafeTensorsFile& f, const std::string& pixels, const std::string& labels) {
  LookupImages images;
  const SafeTensor& p = f.tensors.at(pixels);
  images.pixels = p.bytes;
  for (std::int32_t label : f.tensors.at(labels).to_int32()) images.labels.push_back(std::uint8_t(label));
  images.asset_index.assign(images.labels.size(), -1);
  return images;
}

}  // namespace attnlab::testing
