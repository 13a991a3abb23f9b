// A BERT checkpoint's config.json (Hugging Face's BertConfig): the sizes the weights must have.
// Every field is checked against the file's own meaning and against what a browser tab can hold;
// messages start with "config.json" and name the field.
#pragma once

#include <cstdint>
#include <string>

#include "../io/record.h"
#include "model_memory.h"

namespace attnlab {

struct BertConfig {
  int vocab_size = 0;
  int hidden_size = 0;         // E
  int num_hidden_layers = 0;   // L
  int num_attention_heads = 0; // H
  int intermediate_size = 0;   // the feed-forward's width (4E in bert-base)
  int max_position_embeddings = 0;
  int type_vocab_size = 2;     // token types (segments A and B); older configs omit it (BertConfig's 2)
  double layer_norm_eps = 1e-12;
  std::string hidden_act = "gelu";

  int head_dim() const { return hidden_size / num_attention_heads; }  // D
  // Floats of the encoder's weights (the MLM head adds about vocab_size + E^2 more).
  std::uint64_t encoder_floats() const;
};

// config.json's sizes, declared once (config_json.h): read from the file with their ranges, and
// written by the same list as the config the page's summary shows.
template <class Fields, class Config>
void bert_config_fields(Fields& f, Config& c) {
  f("vocabSize", c.vocab_size, FileInt{"vocab_size", 1, 1000000});
  f("hiddenSize", c.hidden_size, FileInt{"hidden_size", 1, 8192});
  f("layers", c.num_hidden_layers, FileInt{"num_hidden_layers", 1, 64});
  f("heads", c.num_attention_heads, FileInt{"num_attention_heads", 1, 128});
  f("intermediateSize", c.intermediate_size, FileInt{"intermediate_size", 1, 32768});
  f("maxPositions", c.max_position_embeddings, FileInt{"max_position_embeddings", 1, 8192});
  f("typeVocabSize", c.type_vocab_size, FileInt{"type_vocab_size", 1, 16, false});
}

// The most bytes of weights any model may have: the heap's budget (model_memory.h), before its work.
constexpr std::uint64_t kMaxBertWeightBytes = kModelBudgetBytes;

// "" and `out`, or what is wrong with config.json.
std::string parse_bert_config(const std::string& text, BertConfig& out);

}  // namespace attnlab
