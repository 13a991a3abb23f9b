// The lab trainers, bound for JS (see raw_api.h for the rules: validate, return a message, never throw).
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "raw_api.h"
#include "trainers/alignment_trainer.h"

namespace attnlab::wasm {

// config: {task: 'copy'|'reverse'|'pointer', seed, dModel, heads, batch, lr, vocab, length, pairs,
//          keyRange, valueRange, uniqueKeys, positional}; missing fields take the notebook's defaults.
class RawAlignmentTrainer : public RawLayer {
 public:
  explicit RawAlignmentTrainer(const val& config);
  static std::string _config_error(const val& config);
  static val _defaults(const std::string& task);
  static double _training_bytes(const val& config);  // alignment_training_bytes; call _config_error first

  std::string _train(int steps, int backend);  // CPU kernels; metrics in _metrics()
  val _metrics() const;                        // Float32Array [loss, accuracy] per step of the last _train
  int _steps_done() const { return trainer_.steps_done(); }
  std::string _set_lr(double lr);
  val _config() const;

  // Staged step (the WebGPU path): begin -> kernel forward -> middle -> kernel backward -> end.
  void _begin_step() { trainer_.begin_step(); }
  void _middle_step() { trainer_.middle_step(); }
  val _end_step();
  val _kernel_shape();
  val _kernel_view(const std::string& which);  // q k v weights out dOut dQ dK dV; writable views
  void _run_kernel_forward(int backend);
  void _run_kernel_backward(int backend);

  val _evaluate(int samples, int backend);
  std::string _inspect(const val& sample, int backend);  // {tokens} or {keys, values, query}
  val _inspection() const;
  val _fixed_sample() const;

  ParameterList params() override { return trainer_.parameters(); }

 private:
  static AlignmentConfig parse(const val& config);
  AlignmentTrainer trainer_;
  std::vector<float> metrics_;
  AlignmentInspection inspection_;
};

}  // namespace attnlab::wasm
