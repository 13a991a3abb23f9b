// The one plan of every decoder kind's checkpoint: a walk over the kind's tensor table
// (decoder_tensors(spec, names), decoder.h), each tensor found in the file, its dtype and shape checked
// before a byte of it is read. What differs between kinds is data (DecoderCheckpointRules): a prefix some
// files put before every name (GPT-2's "transformer."), the words of the messages, and which tensors of
// the file that the table does not name are skipped. gpt2_checkpoint.cpp and llama_checkpoint.cpp
// state theirs.
#pragma once

#include <string>
#include <vector>

#include "checkpoint_model.h"
#include "decoder.h"

namespace attnlab {

struct DecoderCheckpointRules {
  // "GPT-2", "llama": "... has no tensor "x": is it a <model> checkpoint with config.json's L layers?";
  // and "... has tensor "x", which a <model> decoder of this config.json does not have".
  std::string model;
  // config.json's sizes the shapes follow, for a shape that differs: "n_embd 16, n_inner 64, ...".
  std::string sizes;
  // A prefix a checkpoint may put before every name (save_pretrained's "transformer." of
  // GPT2LMHeadModel), found by the token embedding's name; none when the file has it bare.
  std::vector<std::string> prefixes;
  // The biases follow config.json (Llama's attention_bias, mlp_bias): a missing one asks about them.
  bool biases_from_config = false;
  // A tensor of the file the table does not name: skipped when it contains one of `skipped` (a tied
  // lm_head, the attention's buffers), or when skip_unnamed; else refused with `unnamed_hint`.
  bool skip_unnamed = false;
  std::vector<std::string> skipped;
  std::string unnamed_hint;
};

// "" and the plan (and the prefix the file's names carry, "" for none), or a message starting with
// `file` and naming the tensor.
std::string plan_decoder_load(const DecoderSpec& spec, const DecoderNames& names, const DecoderCheckpointRules& rules,
                              const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& plan,
                              std::string& prefix);

}  // namespace attnlab
