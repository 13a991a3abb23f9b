// DistilBERT (Sanh et al. 2019; Hugging Face's DistilBertModel and DistilBertForMaskedLM) in the model
// registry. Its forward is BERT's: the same post-LayerNorm blocks, GELU (erf), LayerNorm eps 1e-12, the
// same MLM head; it has half the layers, no token type embeddings and no pooler, and names its tensors
// its own way. So the kind builds a BertModel (bert.h), with token types that stay zero, from
// config.json's DistilBertConfig fields and these names:
//
//   BertModel's                                   DistilBERT's ("distilbert." prefix in ...ForMaskedLM)
//   embeddings.{word,position}_embeddings, .LayerNorm   the same
//   encoder.layer.N.attention.self.{query,key,value}    transformer.layer.N.attention.{q,k,v}_lin
//   encoder.layer.N.attention.output.dense              transformer.layer.N.attention.out_lin
//   encoder.layer.N.attention.output.LayerNorm          transformer.layer.N.sa_layer_norm
//   encoder.layer.N.intermediate.dense / output.dense   transformer.layer.N.ffn.lin1 / ffn.lin2
//   encoder.layer.N.output.LayerNorm                    transformer.layer.N.output_layer_norm
//   cls.predictions.transform.dense / .LayerNorm        vocab_transform / vocab_layer_norm
//   cls.predictions.bias / decoder.weight               vocab_projector.bias / .weight (tied)
#pragma once

#include <memory>
#include <string>

#include "bert_config.h"
#include "checkpoint_model.h"

namespace attnlab {

// config.json's DistilBertConfig sizes, declared once (config_json.h), in the summary's BERT names.
template <class Fields, class Config>
void distilbert_config_fields(Fields& f, Config& c) {
  f("vocabSize", c.vocab_size, FileInt{"vocab_size", 1, 1000000});
  f("hiddenSize", c.hidden_size, FileInt{"dim", 1, 8192});
  f("layers", c.num_hidden_layers, FileInt{"n_layers", 1, 64});
  f("heads", c.num_attention_heads, FileInt{"n_heads", 1, 128});
  f("intermediateSize", c.intermediate_size, FileInt{"hidden_dim", 1, 32768});
  f("maxPositions", c.max_position_embeddings, FileInt{"max_position_embeddings", 1, 8192});
}

// "" and `out` (as the BertConfig of the same model), or what is wrong with config.json.
std::string parse_distilbert_config(const std::string& text, BertConfig& out);

// The registry's DistilBERT (model_type "distilbert").
std::unique_ptr<ModelKind> make_distilbert_kind();

}  // namespace attnlab
