// A Marian (opus-mt) checkpoint's config.json (Hugging Face's MarianConfig): the sizes the weights must
// have and the settings generate() follows. Messages start with "config.json" and name the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../io/record.h"

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

// config.json's sizes, declared once (config_json.h): read from the file with their ranges, and written
// by the same list as the config the page's summary shows. The token ids' range depends on vocab_size,
// read before them.
template <class Fields, class Config>
void marian_size_fields(Fields& f, Config& c) {
  f("vocabSize", c.vocab_size, FileInt{"vocab_size", 2, 1000000});
  f("dModel", c.d_model, FileInt{"d_model", 1, 8192});
  f("encoderLayers", c.encoder_layers, FileInt{"encoder_layers", 1, 64});
  f("decoderLayers", c.decoder_layers, FileInt{"decoder_layers", 1, 64});
  f("encoderHeads", c.encoder_heads, FileInt{"encoder_attention_heads", 1, 128});
  f("decoderHeads", c.decoder_heads, FileInt{"decoder_attention_heads", 1, 128});
  f("encoderFfn", c.encoder_ffn, FileInt{"encoder_ffn_dim", 1, 65536});
  f("decoderFfn", c.decoder_ffn, FileInt{"decoder_ffn_dim", 1, 65536});
  f("maxPositions", c.max_positions, FileInt{"max_position_embeddings", 1, 8192});
  f("padId", c.pad_id, FileInt{"pad_token_id", 0, c.vocab_size - 1});
  f("eosId", c.eos_id, FileInt{"eos_token_id", 0, c.vocab_size - 1});
}

// generate()'s settings from config.json, optional: absent ones keep the defaults parse_marian_config
// gives them first (decoding starts from the pad token; max_length min(positions, 512)).
template <class Fields, class Config>
void marian_generation_fields(Fields& f, Config& c) {
  f("decoderStartId", c.decoder_start_id, FileInt{"decoder_start_token_id", 0, c.vocab_size - 1, false});
  f("numBeams", c.num_beams, FileInt{"num_beams", 1, 64, false});
  f("maxLength", c.max_length, FileInt{"max_length", 2, 8192, false});
}

// "" and `out`, or what is wrong with config.json.
std::string parse_marian_config(const std::string& text, MarianConfig& out);

}  // namespace attnlab
