// The Lookup lab's digit asset, bound for JS (see raw_api.h for the rules: validate, return a message,
// never throw): public/assets/mnist10k.bin.gz, inflated by the caller, parsed once and shared by every
// trainer made from it (raw_trainer.h).
#pragma once

#include <emscripten/val.h>

#include <string>

#include "data/mnist_asset.h"
#include "raw_api.h"

namespace attnlab::wasm {

class RawDigits {
 public:
  // bytes: a Uint8Array of the inflated asset. "" or what is wrong with it; nothing is kept on error.
  std::string _load(const val& bytes);
  int _count() const { return asset_.count; }
  // {pixels: Uint8Array [N, P], labels: Uint8Array [N], rows, cols} copies, for drawing.
  val _images(int first, int count) const;
  const MnistAsset& asset() const { return asset_; }

 private:
  MnistAsset asset_;
};

}  // namespace attnlab::wasm
