// A GPT-2 checkpoint's config.json (Hugging Face's GPT2Config): the sizes the weights must have and the
// end-of-text token generation stops at. Messages start with "config.json" and name the field.
#pragma once

#include <string>

#include "config_json.h"

namespace attnlab {

struct Gpt2Config {
  int vocab_size = 0;   // V
  int n_embd = 0;       // E
  int n_layer = 0;      // L
  int n_head = 0;       // H
  int n_inner = 0;      // F: config.json's null (or absence) means 4 E
  int n_positions = 0;  // P: the longest text (older configs call it n_ctx)
  int eos_token_id = -1;  // <|endoftext|>: -1 when the config names none inside the vocabulary
  double layer_norm_epsilon = 1e-5;

  int head_dim() const { return n_embd / n_head; }  // D
};

// config.json's fields, declared once (config_json.h): read from the file with their ranges and
// defaults (GPT2Config's), and written by the same list as the config the page's summary shows.
template <class Fields, class Config>
void gpt2_config_fields(Fields& f, Config& c) {
  f("vocabSize", c.vocab_size, FileInt{"vocab_size", 1, 1000000});
  f("hiddenSize", c.n_embd, FileInt{"n_embd", 1, 8192});
  f("layers", c.n_layer, FileInt{"n_layer", 1, 128});
  f("heads", c.n_head, FileInt{"n_head", 1, 128});
  f("innerSize", c.n_inner, FileIntOr{"n_inner", 1, 65536, 4 * c.n_embd});  // null: GPT2MLP's 4 x n_embd
  f("maxPositions", c.n_positions, FileIntOr{"n_positions", 1, 65536, 1024, "n_ctx"});
  // Past the vocabulary it is no end (parse_gpt2_config makes it -1).
  f("eosId", c.eos_token_id, FileIntOr{"eos_token_id", 0, 1000000, 50256});
  f(kNotShown, c.layer_norm_epsilon, FilePositiveOr{"layer_norm_epsilon", 1, 1e-5});
}

// "" and `out`, or what is wrong with config.json.
std::string parse_gpt2_config(const std::string& text, Gpt2Config& out);

}  // namespace attnlab
