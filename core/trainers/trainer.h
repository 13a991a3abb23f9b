// What every lab's trainer offers, so that one binding (wasm_bindings/raw_trainer.h), one JS class and
// one WebGPU path serve every lab. A lab's trainer is a class that implements Trainer plus one line in
// registry.cpp (its id, config check, constructor, defaults).
//
// Axis letters (core/shape.h): B batch, H heads, T query length, S key length, D head dim, E model dim.
//
// Records (configs, evaluations, inspections) cross as Json objects (core/io/json.h) declared once per
// struct (core/io/record.h), with the JS names of docs/api.md. Every call that takes input from outside
// checks it and returns "" or a message; nothing throws.
#pragma once

#include <memory>
#include <string>

#include "../backend.h"
#include "../io/json.h"
#include "../attention.h"
#include "../layers/parameter.h"

namespace attnlab {

class StagedStep;  // staged_step.h

// One training step's figures.
struct StepMetrics {
  int step = 0;          // steps done after this one
  int epoch = 0;         // the pass over the training data this step drew from (1, 2, ...); 0 where a
                         // trainer draws fresh samples every step and has no epochs
  float loss = 0.0f;     // the lab's loss on the step's batch
  float accuracy = 0.0f; // the lab's accuracy on that batch (Alignment: token accuracy; Lookup: top-1 label match)
};

class Trainer {
 public:
  virtual ~Trainer() = default;

  // ---- the run
  // The config the trainer was made with (lr as last set), as a Json object in JS names, with facts
  // that follow from it (sizes, the notebook's step count).
  virtual Json config_record() const = 0;
  virtual int steps_done() const = 0;
  virtual int epoch() const { return 0; }  // see StepMetrics::epoch; 0 before the first step
  virtual void set_lr(double lr) = 0;      // the caller checks lr (0 < lr <= 1)
  // One training step on a CPU backend (scalar or simd128): the next batch, forward, loss, backward,
  // the gradients summed over the shards in order, Adam.
  virtual StepMetrics step(Backend backend) = 0;

  // ---- the staged step: step() with its attention calls run outside C++ (the page's WebGPU kernel):
  // begin(), then the calls of the staged-call protocol (core/staged_forward.h: the forward calls, then
  // the backward calls), then end() -> the step's metrics. The kernel runs on the whole batch. Nothing
  // else may be called between begin() and end(). One object per trainer, made once.
  virtual std::unique_ptr<StagedStep> staged_step() = 0;

  // ---- looking at the model (CPU backends)
  // The current parameters on held-out or fresh data. options: a Json object of the lab's evaluation
  // settings (Alignment: {samples}); "" and `out`, or what is wrong with the options.
  virtual std::string evaluate_record(const Json& options, Backend backend, Json& out) = 0;
  // A forward pass on one input the caller gives (Alignment: {tokens} or {keys, values, query};
  // Lookup: {heldOut} or {pixels}): attention weights [H, T, S], their head mean [T, S], and the
  // lab's outputs. "" and `out`, or what is wrong with the input (the trainer is unchanged).
  virtual std::string inspect_record(const Json& input, Backend backend, Json& out) = 0;
  // Training data the caller gives instead of the lab's own draw (the Induction lab's --data). "" or what
  // is wrong with it (the trainer is unchanged); a lab that only draws its own data says so.
  virtual std::string set_data_record(const Json& input) {
    (void)input;
    return "this lab draws its own training data";
  }
  // A named part of the trainer's data, for display (Alignment: "fixedSample"; Lookup: "database",
  // "heldOut", "training"). "" and `out`, or a message naming the parts there are.
  virtual std::string data_record(const std::string& part, Json& out) const = 0;

  // Every trainable parameter, in PyTorch's state_dict order and with its names ("tok_emb.weight",
  // "mha.in_proj_weight", ...), so weights move to and from the course notebook's models unchanged.
  virtual ParameterList parameters() = 0;
};

// A trainer whose step has one attention call (the labs of one attention layer: Alignment, Lookup, One
// query): its staged step is StagedTrainerStep (staged_step.h) over these three parts.
//   begin_step() -> kernel forward on kernel_forward_args()    (q, k, v -> weights, out)
//   middle_step() -> kernel backward on kernel_backward_args() (dOut [, dWeights] -> dQ, dK, dV)
//   end_step()
class SingleCallTrainer : public Trainer {
 public:
  std::unique_ptr<StagedStep> staged_step() override;

  virtual void begin_step() = 0;
  virtual void middle_step() = 0;
  virtual StepMetrics end_step() = 0;
  // The attention call that the stages leave to the caller, with its kernel's arguments (core/attention.h):
  // q [B, H, T, D], k, v [B, H, S, D], weights [B, H, T, S], out [B, H, T, D]; and for the backward
  // d_out [, d_weights] in, d_q, d_k, d_v out. Valid from begin_step() to end_step().
  virtual AttentionForward kernel_forward_args() = 0;
  virtual AttentionBackward kernel_backward_args() = 0;
  // True when the model reads the attention weights after the kernel (a loss on them, as the Lookup
  // lab's retrieval), so a kernel outside C++ must write the weights back too.
  virtual bool kernel_reads_weights() const = 0;
};

}  // namespace attnlab
