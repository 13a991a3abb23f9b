// Every lab's trainer by id: how to check a config, make a trainer from it, and the defaults. Adding a
// trainer is its files and one line in registry.cpp's table; the WASM binding (one generic class), the
// JS API (lab.createTrainer, lab.trainerIds) and the native tests find it here.
//
// Configs are Json objects in the JS names of docs/api.md (core/io/record.h); absent fields take the
// course notebook's values, and null reads as {}.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../data/mnist_asset.h"
#include "../io/json.h"
#include "trainer.h"

namespace attnlab {

// Data a trainer is made from beside its config; each trainer says which it needs.
struct TrainerAssets {
  const MnistAsset* digits = nullptr;  // the Lookup lab's digits (public/assets/mnist10k.bin.gz)
};

struct TrainerKind {
  const char* id;  // "alignment", "lookup", "count"
  // "" or what is wrong with the config (or the assets) for this trainer.
  std::string (*config_error)(const Json& config, const TrainerAssets& assets);
  // A trainer; call config_error first (on a config it refuses, the result is undefined).
  std::unique_ptr<Trainer> (*create)(const Json& config, const TrainerAssets& assets);
  // The default config, with the notebook's step count ("steps"). `variant` picks among a trainer's
  // tasks (Alignment: copy, reverse, pointer; an unknown one reads as the first); others ignore it.
  Json (*defaults)(const std::string& variant);
  // An upper bound on the bytes a model of this config needs to train, or nullptr where the trainer has
  // no estimate. Defined for a config whose only problem is being over budget.
  double (*training_bytes)(const Json& config);
};

// The registered trainers, in the order of their labs.
const std::vector<TrainerKind>& trainer_kinds();
// nullptr for an unknown id.
const TrainerKind* find_trainer_kind(const std::string& id);
// "unknown trainer 'x': the trainers are alignment, lookup, count"
std::string unknown_trainer_message(const std::string& id);

// The registry's calls by id: an unknown id gives unknown_trainer_message.
std::string trainer_config_error(const std::string& id, const Json& config, const TrainerAssets& assets);
// nullptr and `error` when the id or the config is refused.
std::unique_ptr<Trainer> create_trainer(const std::string& id, const Json& config, const TrainerAssets& assets,
                                        std::string& error);

}  // namespace attnlab
