// GPT-2 (Radford et al. 2019; Hugging Face's GPT2LMHeadModel in eval mode) as a row of the one decoder
// (decoder.h): LayerNorm, the gelu_new MLP, learned positions, as many key/value heads as query heads,
// a bias on every projection, Conv1D weights ([in, out]), the unembedding tied to wte; its tensors'
// names are decoder_names.cpp's "gpt2" row. Gpt2Model adds nothing to the decoder but config.json's
// record (the sizes under GPT-2's names), as transformers.js's classes add nothing to their base.
#pragma once

#include "decoder.h"
#include "gpt2_config.h"

namespace attnlab {

// config.json -> the decoder's row.
DecoderSpec gpt2_spec(const Gpt2Config& c);

class Gpt2Model : public Decoder {
 public:
  explicit Gpt2Model(const Gpt2Config& config) : Decoder(gpt2_spec(config), *decoder_names("gpt2")), c_(config) {}
  const Gpt2Config& config() const { return c_; }

 private:
  Gpt2Config c_;
};

}  // namespace attnlab
