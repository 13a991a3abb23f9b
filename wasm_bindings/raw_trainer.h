// Every lab's trainer, bound for JS through one class (see raw_api.h for the rules: validate, return a
// message, never throw). A trainer is picked by its registry id (core/trainers/registry.h); configs,
// inputs and results cross as JSON text of declared records (core/io/json.h, core/io/record.h), with
// typed arrays handed over beside the text as blobs. wasm_bindings/attnlab.js encodes and decodes them.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "io/json.h"
#include "raw_api.h"
#include "trainers/registry.h"
#include "trainers/staged_step.h"

namespace attnlab::wasm {

// The data assets a trainer may take (TrainerAssets in core/trainers/registry.h), as their bound
// objects: only the digits so far (raw_digits.h, the Lookup lab's), passed as null by the other labs.
class RawDigits;

class RawTrainer : public RawLayer {
 public:
  // id: "alignment", "lookup"; config: JSON text of the config record; digits: the digit asset, or null
  // for a trainer that needs none. Call _config_error first.
  RawTrainer(const std::string& id, const std::string& config, const RawDigits* digits);
  static std::string _config_error(const std::string& id, const std::string& config, const RawDigits* digits);
  // JSON text of the default config (`variant`: the Alignment lab's task); "" for an unknown id.
  static std::string _defaults(const std::string& id, const std::string& variant);
  // The trainer's estimate of the bytes a config needs to train; -1 where it has none. _config_error first.
  static double _training_bytes(const std::string& id, const std::string& config);
  // JSON text: the registered ids, in order.
  static std::string _trainer_ids();

  std::string _train(int steps, int backend);  // CPU kernels; metrics in _metrics()
  val _metrics() const;                        // Float32Array [loss, accuracy] per step of the last _train
  int _steps_done() const { return trainer_->steps_done(); }
  int _epoch() const { return trainer_->epoch(); }
  std::string _set_lr(double lr);
  std::string _config() const;  // JSON text of the config record

  // Staged step (the WebGPU path): _begin_step, then its calls through raw_staged.h's protocol
  // (_next_call/_finish_call, _next_backward/_finish_backward: core/trainers/staged_step.h), then
  // _end_step.
  void _begin_step() { step_->begin(); }
  std::string _end_step();     // JSON text: {step, epoch?, loss, accuracy}; epoch for trainers that have them
  StagedForward* staged() { return step_.get(); }  // for the protocol's calls

  // Record calls: "" and the record in _result() / _blob(i), or what is wrong with the input.
  std::string _evaluate(const std::string& options, int backend);
  std::string _inspect(const std::string& input, int backend);
  std::string _data(const std::string& part);
  // JSON text of the training data the caller gives (the Induction lab's {sequences}) -> "" or what is
  // wrong with it (the trainer is unchanged).
  std::string _set_data(const std::string& input);
  std::string _result() const { return result_text_; }
  val _blob(int i) const;  // a typed array view (Float32Array, Int32Array, Uint8Array): copy it at once
  void _release();         // frees the last record once JS has its copy (an image set is megabytes)

  ParameterList params() override { return trainer_->parameters(); }

 private:
  std::string keep(std::string error, Json record);

  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<StagedStep> step_;  // over trainer_
  std::vector<float> metrics_;
  Json result_;
  std::string result_text_;
  std::vector<const Json*> blobs_;  // into result_
};

}  // namespace attnlab::wasm
