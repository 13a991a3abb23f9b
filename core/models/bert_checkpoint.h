// Which tensors of a BERT checkpoint (model.safetensors or pytorch_model.bin) go where, and the BERT
// entry of the model registry (model_kinds.h). Checkpoints spell the same weight in
// several ways: with the "bert." prefix of BertForMaskedLM / BertForPreTraining or without it (BertModel);
// LayerNorm as weight/bias (newer) or gamma/beta (converted from TensorFlow). Each expected tensor is
// looked up under every spelling, and its dtype and shape are checked against config.json before a
// byte of it is read. Tensors the encoder does not use (the pooler, the next-sentence head, an
// int64 position_ids buffer) are counted and skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bert_config.h"
#include "checkpoint_model.h"

namespace attnlab {

// One weight the model needs, by its canonical name (BertModel's, LayerNorm as weight/bias), with the
// shape it has in the file. A Linear weight [out, in] is stored transposed in the model.
struct BertTensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  bool transpose = false;  // a Linear weight: the model keeps W^T [in, out] for its matrix product
};

// The encoder's weights, then (mlm) the masked-language-model head's.
std::vector<BertTensorSpec> bert_encoder_specs(const BertConfig& c);
std::vector<BertTensorSpec> bert_mlm_specs(const BertConfig& c);

struct BertLoadPlan : LoadPlan {
  bool mlm_head = false;          // the checkpoint has the MLM head (cls.predictions.*)
  bool separate_decoder = false;  // ... with its own decoder weight (else tied to the word embeddings)
  std::string naming;             // "bert. prefix, LayerNorm gamma/beta" and the like, for the page
};

// How a family of checkpoints spells BertModel's names: BERT's own (bert_naming), or DistilBERT's
// (distilbert_checkpoint.h), whose model is BertModel with other names and no token types.
struct BertNaming {
  const char* model;  // "BERT", "DistilBERT": for messages
  // The names a checkpoint may give a canonical tensor, most common first; `encoder`: not the MLM head.
  std::vector<std::string> (*spellings)(const std::string& canonical, bool encoder);
  bool token_types;     // the checkpoint has token type embeddings (else they stay zero)
  const char* prefix;   // the prefix of the encoder's names in the head-carrying checkpoints ("bert.")
};
const BertNaming& bert_naming();

// "" and the plan, or a message starting with `file` and naming the tensor.
std::string plan_bert_load(const BertConfig& config, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                           BertLoadPlan& plan, const BertNaming& naming = bert_naming());

// A kind of the registry whose model is a BertModel: its id, its config.json reader and its naming.
std::unique_ptr<ModelKind> make_bert_family_kind(const char* id, std::string (*read_config)(const std::string&, BertConfig&),
                                                 const BertNaming& naming);

// The registry's BERT (model_type "bert"): BertModel, with the MLM head when the checkpoint has it.
std::unique_ptr<ModelKind> make_bert_kind();

}  // namespace attnlab
