// Which tensors of a GPT-2 checkpoint (model.safetensors or pytorch_model.bin) go where, and the GPT-2
// entry of the model registry (model_kinds.h). Checkpoints spell the names two ways: the gpt2
// repository's GPT2Model names (wte.weight, h.0.attn.c_attn.weight) or save_pretrained's of
// GPT2LMHeadModel ("transformer." before each). Both may carry the attention's buffers (h.N.attn.bias,
// the causal mask; h.N.attn.masked_bias) and lm_head.weight; GPT-2 ties the unembedding to wte, as
// from_pretrained does (tie_word_embeddings), so those are counted and skipped. Conv1D weights are
// stored [in, out]; each is checked against config.json before a byte of it is read, by the walk every
// decoder kind's plan is (decoder_checkpoint.h), with GPT-2's rules.
#pragma once

#include <memory>

#include "checkpoint_model.h"

namespace attnlab {

// The registry's GPT-2 (model_type "gpt2"): Gpt2Model.
std::unique_ptr<ModelKind> make_gpt2_kind();

}  // namespace attnlab
