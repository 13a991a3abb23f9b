// A Marian (opus-mt) checkpoint's config.json (Hugging Face's MarianConfig): the sizes the weights must
// have and the settings generate() follows. Messages start with "config.json" and name the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

struct MarianConfig {
  int vocab_size = 0;
  int d_model = 0;  // E
  int encoder_layers = 0, decoder_layers = 0;
  int encoder_heads = 0, decoder_heads = 0;
  int encoder_ffn = 0, decoder_ffn = 0;
  int max_positions = 0;
  int pad_id = 0, eos_id = 0, decoder_start_id = 0;
  bool scale_embedding = true;  // the embeddings are multiplied by sqrt(d_model)
  // generate()'s defaults from the config.
  int num_beams = 1;
  int max_length = 0;  // of the generated ids, the decoder start token included (HF's counting)
  double length_penalty = 1.0;
  bool early_stopping = false;
  std::vector<int> bad_words;  // single-token bad_words_ids (the pad token, for Marian)
  int forced_eos_id = -1;      // forced_eos_token_id: the last token max_length allows is this one

  std::uint64_t weight_floats() const;
};

// "" and `out`, or what is wrong with config.json.
std::string parse_marian_config(const std::string& text, MarianConfig& out);

}  // namespace attnlab
