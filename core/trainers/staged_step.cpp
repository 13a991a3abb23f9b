#include "staged_step.h"

#include <algorithm>

namespace attnlab {

namespace {

// Results into the trainer's own buffers (a CPU kernel may have written them there already).
void store(float* to, const float* from, std::size_t n) {
  if (to != from) std::copy(from, from + n, to);
}

}  // namespace

std::unique_ptr<StagedStep> SingleCallTrainer::staged_step() { return std::make_unique<StagedTrainerStep>(*this); }

void StagedTrainerStep::begin() {
  t_.begin_step();
  stage_ = Stage::forward;
  weights_kept_ = false;
}

void StagedTrainerStep::middle() {
  t_.middle_step();
  stage_ = Stage::backward;
}

bool StagedTrainerStep::next_call(AttentionForward& call) {
  if (stage_ != Stage::forward) return false;
  call = t_.kernel_forward_args();
  call.weights = nullptr;
  call.out = nullptr;
  return true;
}

void StagedTrainerStep::finish_call(const float* weights, const float* out) {
  const AttentionForward f = t_.kernel_forward_args();
  store(f.out, out, f.shape.q_size());
  if (weights) store(f.weights, weights, f.shape.weights_size());
  weights_kept_ = weights != nullptr;
  middle();
}

std::string StagedTrainerStep::check_pending() const {
  switch (stage_) {
    case Stage::forward: return {};
    case Stage::idle: return "no training step is under way: begin one first";
    default: return "the step's forward call is finished; its backward call is next";
  }
}

bool StagedTrainerStep::next_backward(AttentionBackward& call) {
  if (stage_ != Stage::backward) return false;
  call = t_.kernel_backward_args();
  if (!weights_kept_) call.weights = nullptr;
  call.d_q = call.d_k = call.d_v = nullptr;
  return true;
}

void StagedTrainerStep::finish_backward(const float* d_q, const float* d_k, const float* d_v) {
  const AttentionBackward b = t_.kernel_backward_args();
  store(b.d_q, d_q, b.shape.q_size());
  store(b.d_k, d_k, b.shape.kv_size());
  store(b.d_v, d_v, b.shape.kv_size());
  stage_ = Stage::done;
}

std::string StagedTrainerStep::check_finished() const {
  switch (stage_) {
    case Stage::done: return {};
    case Stage::idle: return "no training step is under way: begin one first";
    case Stage::forward: return "the step's forward call is still pending";
    default: return "the step's backward call is still pending";
  }
}

StepMetrics StagedTrainerStep::end() {
  stage_ = Stage::idle;
  return t_.end_step();
}

}  // namespace attnlab
