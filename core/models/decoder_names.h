// The names of a decoder's tensors, one table per kind (llama.cpp's src/llama-arch.cpp
// LLM_TENSOR_NAMES): the decoder (decoder.h) knows its tensors by role, a kind by the names its
// checkpoints spell. A layer's name has "%d" where the layer's index goes; ".weight" and ".bias" are
// added. A role the table leaves out is a tensor the kind does not have: a table with attn_qkv has one
// fused projection for q, k and v (GPT-2's c_attn), one with attn_q/attn_k/attn_v three.
#pragma once

#include <string>
#include <vector>

namespace attnlab {

enum class DecoderTensor {
  token_embd,   // [V, E]
  pos_embd,     // [P, E]: learned positions only
  attn_norm,    // [E]
  attn_qkv,     // fused [E -> (H + 2 Hkv) D]
  attn_q,       // [E -> H D]
  attn_k,       // [E -> Hkv D]
  attn_v,       // [E -> Hkv D]
  attn_out,     // [H D -> E]
  ffn_norm,     // [E]
  ffn_up,       // [E -> F]
  ffn_gate,     // [E -> F]: gated MLPs only
  ffn_down,     // [F -> E]
  output_norm,  // [E]
  output,       // [V, E]: a separate unembedding only
};

struct DecoderTensorName {
  DecoderTensor tensor;
  const char* name;
};

struct DecoderNames {
  const char* kind;
  std::vector<DecoderTensorName> names;
  bool has(DecoderTensor t) const;
  // The name of `t` (in layer `layer` for a layer's tensor), without ".weight"; "" when the kind has none.
  std::string name(DecoderTensor t, int layer = -1) const;
};

// The table of a decoder kind ("gpt2", "llama"), or nullptr.
const DecoderNames* decoder_names(const std::string& kind);
// The same for a kind that must have one (a decoder row of model_kinds.cpp): "" and the table, or the
// message naming the kind whose table is missing, so that such a row is refused, never dereferenced
// (tests/core/test_model_kinds.cpp walks the rows).
std::string find_decoder_names(const std::string& kind, const DecoderNames*& out);

}  // namespace attnlab
