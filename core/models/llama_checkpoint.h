// Which tensors of a Llama or Qwen2 checkpoint (model.safetensors or pytorch_model.bin) go where, and
// their entries in the model registry (model_kinds.h). The names are save_pretrained's of
// LlamaForCausalLM / Qwen2ForCausalLM (model.layers.N.self_attn.q_proj.weight, ...; decoder_names.cpp).
// A tied checkpoint may still carry lm_head.weight (a .bin's shared storage): it is counted and skipped,
// as from_pretrained ties it; an untied one must have it. Older files' rotary buffers
// (self_attn.rotary_emb.inv_freq) are skipped too: inv_freq is computed from config.json. Any other tensor
// is refused by name. The plan is the walk of every decoder kind (decoder_checkpoint.h) with these rules.
#pragma once

#include <memory>

#include "checkpoint_model.h"

namespace attnlab {

// The registry's Llama (model_type "llama") and Qwen2 (model_type "qwen2"): LlamaModel.
std::unique_ptr<ModelKind> make_llama_kind();
std::unique_ptr<ModelKind> make_qwen2_kind();
// A kind read as Llama's (its config reader, spec and checkpoint rules) under another id, which is both
// config.json's model_type and its row of decoder_names.cpp: the test module's kind "test_decoder"
// (model_kinds.cpp), a decoder added by its name row and registry row alone.
std::unique_ptr<ModelKind> make_llama_style_kind(const char* id);

}  // namespace attnlab
