// A trainer's step as the staged-call protocol of every model (core/staged_forward.h), so that the one
// JS driver (wasm_bindings/js/staged_calls.js) runs a training step's kernel on the page's backend
// exactly as it runs BERT's or Marian's, with the same rules for a lost GPU device:
//
//   begin()        the step's batch and everything before its first attention call
//   the calls      the forward calls (q, k, v -> weights, out), then the backward calls
//                  (d_out [, d_weights] -> d_q, d_k, d_v): one each for a lab of one attention layer,
//                  one a layer (in order, then in reverse) for the Induction lab's transformer
//   end()          the rest of the backward, Adam -> the step's metrics
//
// StagedTrainerStep is the step of a SingleCallTrainer (trainer.h: begin_step, middle_step, end_step):
//   begin()        the trainer's begin_step: the batch, the layers before the attention; the forward call pending
//   the calls      finish_call runs the trainer's middle_step (loss, gradient of the output), then the
//                  backward call is pending; finish_backward stores d_q, d_k, d_v
//   end()          the trainer's end_step: the rest of the backward, Adam -> the step's metrics
#pragma once

#include <string>

#include "../staged_forward.h"
#include "trainer.h"

namespace attnlab {

class StagedStep : public StagedForward {
 public:
  virtual void begin() = 0;
  // "" when every call has been finished (end() may run), else what is missing.
  virtual std::string check_finished() const = 0;
  virtual StepMetrics end() = 0;
};

class StagedTrainerStep : public StagedStep {
 public:
  explicit StagedTrainerStep(SingleCallTrainer& trainer) : t_(trainer) {}

  void begin() override;
  // The middle of the step, for a caller that ran the forward kernel itself on the trainer's buffers.
  void middle();
  std::string check_finished() const override;
  StepMetrics end() override;

  bool next_call(AttentionForward& call) override;
  // weights may be null when needs_weights() is false (then a backward call recomputes them).
  void finish_call(const float* weights, const float* out) override;
  std::string check_pending() const override;
  bool needs_weights() const override { return t_.kernel_reads_weights(); }
  bool next_backward(AttentionBackward& call) override;
  void finish_backward(const float* d_q, const float* d_k, const float* d_v) override;

 private:
  enum class Stage { idle, forward, backward, done };
  SingleCallTrainer& t_;
  Stage stage_ = Stage::idle;
  bool weights_kept_ = false;  // the trainer's weights buffer holds this step's forward weights
};

}  // namespace attnlab
