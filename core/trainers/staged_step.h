// A trainer's staged step (trainer.h: begin_step, middle_step, end_step) as the staged-call protocol
// of every model (core/staged_forward.h): one forward call (q, k, v -> weights, out), then one backward
// call (d_out [, d_weights] -> d_q, d_k, d_v). So the one JS driver (wasm_bindings/js/staged_calls.js) runs
// a training step's kernel on the page's backend exactly as it runs BERT's or Marian's, with the same
// rules for a lost GPU device.
//
//   begin()        the trainer's begin_step: the batch, the layers before the attention; the forward call pending
//   the calls      finish_call runs the trainer's middle_step (loss, gradient of the output), then the
//                  backward call is pending; finish_backward stores d_q, d_k, d_v
//   end()          the trainer's end_step: the rest of the backward, Adam -> the step's metrics
#pragma once

#include <string>

#include "../staged_forward.h"
#include "trainer.h"

namespace attnlab {

class StagedTrainerStep : public StagedForward {
 public:
  explicit StagedTrainerStep(Trainer& trainer) : t_(trainer) {}

  void begin();
  // The middle of the step, for a caller that ran the forward kernel itself on the trainer's buffers.
  void middle();
  // "" when the backward call has been finished (end() may run), else what is missing.
  std::string check_finished() const;
  StepMetrics end();

  bool next_call(AttentionForward& call) override;
  // weights may be null when needs_weights() is false (then a backward call recomputes them).
  void finish_call(const float* weights, const float* out) override;
  std::string check_pending() const override;
  bool needs_weights() const override { return t_.kernel_reads_weights(); }
  bool next_backward(AttentionBackward& call) override;
  void finish_backward(const float* d_q, const float* d_k, const float* d_v) override;

 private:
  enum class Stage { idle, forward, backward, done };
  Trainer& t_;
  Stage stage_ = Stage::idle;
  bool weights_kept_ = false;  // the trainer's weights buffer holds this step's forward weights
};

}  // namespace attnlab
