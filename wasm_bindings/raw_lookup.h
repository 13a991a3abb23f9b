// The Lookup lab, bound for JS (see raw_api.h for the rules: validate, return a message, never throw).
//   RawDigits         the digit asset (public/assets/mnist10k.bin.gz, inflated by the caller), parsed once
//   RawLookupTrainer  the notebook's AttentionTest on a seeded split of those digits
#pragma once

#include <emscripten/val.h>

#include <string>
#include <vector>

#include "data/mnist_asset.h"
#include "raw_api.h"
#include "trainers/lookup_trainer.h"

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

// config: {seed, heads, embedDim, batch, lr}; missing fields take the notebook's values.
class RawLookupTrainer : public RawLayer {
 public:
  RawLookupTrainer(const val& config, const RawDigits& digits);
  static std::string _config_error(const val& config, const RawDigits& digits);
  static val _defaults();

  std::string _train(int steps, int backend);  // CPU kernels; metrics in _metrics()
  val _metrics() const;                        // Float32Array [loss, top1] per step of the last _train
  int _steps_done() const { return trainer_.steps_done(); }
  int _epoch() const { return trainer_.epoch(); }
  std::string _set_lr(double lr);
  val _config() const;

  // Staged step (the WebGPU path): begin -> kernel forward -> middle -> kernel backward -> end.
  void _begin_step() { trainer_.begin_step(); }
  void _middle_step() { trainer_.middle_step(); }
  val _end_step();
  val _kernel_shape();
  val _kernel_view(const std::string& which);
  void _run_kernel_forward(int backend);
  void _run_kernel_backward(int backend);

  val _evaluate(int backend);                           // on the 2,000 held-out queries
  std::string _inspect(const val& query, int backend);  // {heldOut: index} or {pixels: P normalised floats}
  val _inspection() const;
  // {pixels: Uint8Array [N, P], labels: Uint8Array [N]} of 'database', 'heldOut' or 'training'.
  val _images(const std::string& part) const;

  ParameterList params() override { return trainer_.parameters(); }

 private:
  static LookupConfig parse(const val& config);
  LookupTrainer trainer_;
  std::vector<float> metrics_;
  LookupInspection inspection_;
};

}  // namespace attnlab::wasm
