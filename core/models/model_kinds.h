// The model registry: every kind of model the labs read from a checkpoint, by config.json's
// model_type. The training labs have theirs beside it (core/trainers/registry.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "checkpoint_model.h"

namespace attnlab {

// A fresh kind (it keeps the config and plan of one load), or nullptr for an unknown id.
std::unique_ptr<ModelKind> make_model_kind(const std::string& id);
// The ids, in the registry's order: "bert", "distilbert", "marian", "gpt2".
std::vector<std::string> model_kind_ids();
// "bert, distilbert, marian or gpt2", for messages.
std::string model_kind_names();

}  // namespace attnlab
