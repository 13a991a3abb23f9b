// The model registry: every kind of model the labs read from a checkpoint, one row each (docs/style.md,
// point 6; transformers.js's MODEL_*_MAPPING_NAMES): the config.json model_types it reads, the lab that
// shows it, the files a checkpoint folder brings besides its weights, its tokenizer, and which binding
// class loads it. The JS side derives its tables from these rows (model_kinds_record(): the bindings'
// _model_kinds, written by scripts/gen_model_kinds.mjs into web/models/model_kinds.generated.js), so a
// kind is declared here once. The training labs have theirs beside it (core/trainers/registry.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../io/json.h"
#include "checkpoint_model.h"

namespace attnlab {

struct ModelKindLab {
  const char* id;       // web/labs/registry.js's lab id
  const char* title;
  const char* command;  // the CLI command that runs it
};

struct ModelKindRow {
  const char* id;     // the kind ("bert"); the registry's key
  const char* title;  // for people ("BERT")
  std::vector<std::string> model_types;  // config.json's model_type values it reads
  ModelKindLab lab;
  // The folder's files besides the weights. A required entry may name alternatives, the preferred first:
  // "tokenizer.json | vocab.json + merges.txt" (one of them, each of its files). web/models/kind_files.js reads it.
  std::vector<std::string> required, optional;
  const char* tokenizer;  // how it is read: "wordpiece", "sentencepiece" or "hf_tokenizers" (web/models/tokenizer_readers.js)
  const char* binding;    // the class that loads it: "bert", "marian" or "decoder" (wasm_bindings/raw_*.h)
  std::unique_ptr<ModelKind> (*make)();
};

// The rows, in the registry's order.
const std::vector<ModelKindRow>& model_kind_rows();
// A fresh kind (it keeps the config and plan of one load), or nullptr for an unknown id.
std::unique_ptr<ModelKind> make_model_kind(const std::string& id);
// The ids, in the registry's order: "bert", "distilbert", "marian", "gpt2".
std::vector<std::string> model_kind_ids();
// "bert, distilbert, marian or gpt2", for messages.
std::string model_kind_names();
// The rows as JS reads them: [{kind, title, modelTypes, lab: {id, title, command}, files: {required,
// optional}, tokenizer, binding}].
Json model_kinds_record();

}  // namespace attnlab
