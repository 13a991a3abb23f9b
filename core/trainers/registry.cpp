#include "registry.h"

#include "alignment_trainer.h"
#include "count_trainer.h"
#include "induction_trainer.h"
#include "lookup_data.h"
#include "lookup_trainer.h"

namespace attnlab {

namespace {

// ---- the Alignment lab (course notebook 01)

std::string alignment_config_error(const Json& config, const TrainerAssets&) {
  return AlignmentTrainer::config_error(config);
}
std::unique_ptr<Trainer> alignment_create(const Json& config, const TrainerAssets&) {
  return std::make_unique<AlignmentTrainer>(AlignmentTrainer::config_from(config));
}
double alignment_bytes(const Json& config) {
  return alignment_training_bytes(AlignmentTrainer::config_from(config));
}

// ---- the Lookup lab (course notebook 02): needs the digits

std::string lookup_config_error(const Json& config, const TrainerAssets& assets) {
  if (!assets.digits || assets.digits->count == 0) return "load the digit asset first (Digits.load)";
  return LookupTrainer::config_error(config, *assets.digits);
}
std::unique_ptr<Trainer> lookup_create(const Json& config, const TrainerAssets& assets) {
  const LookupConfig c = LookupTrainer::config_from(config);
  LookupData data;
  make_lookup_data(*assets.digits, c.seed, data, c.database);  // checked by lookup_config_error
  return std::make_unique<LookupTrainer>(c, std::move(data));
}
Json lookup_defaults(const std::string&) { return LookupTrainer::defaults(); }
// The training queries are what the lab's digit asset (10,000) leaves beside the database and the 2,000
// held out; the bound needs no asset.
double lookup_bytes(const Json& config) {
  const LookupConfig c = LookupTrainer::config_from(config);
  const int digits = kLookupDatabaseImages + kLookupHeldOutImages + kLookupTrainingImages;
  return lookup_training_bytes(c, digits - kLookupHeldOutImages - c.database);
}

// ---- the Count lab ("One query", course notebook 05)

std::string count_config_error(const Json& config, const TrainerAssets&) { return CountTrainer::config_error(config); }
std::unique_ptr<Trainer> count_create(const Json& config, const TrainerAssets&) {
  return std::make_unique<CountTrainer>(CountTrainer::config_from(config));
}

// ---- the Induction lab (past the notebooks: a two-layer transformer, induction heads)

std::string induction_config_error(const Json& config, const TrainerAssets&) { return InductionTrainer::config_error(config); }
std::unique_ptr<Trainer> induction_create(const Json& config, const TrainerAssets&) {
  return std::make_unique<InductionTrainer>(InductionTrainer::config_from(config));
}
double induction_bytes(const Json& config) {
  return induction_training_bytes(InductionTrainer::config_from(config));
}

}  // namespace

const std::vector<TrainerKind>& trainer_kinds() {
  static const std::vector<TrainerKind> kinds = {
      {"alignment", alignment_config_error, alignment_create, AlignmentTrainer::defaults, alignment_bytes},
      {"lookup", lookup_config_error, lookup_create, lookup_defaults, lookup_bytes},
      {"count", count_config_error, count_create, CountTrainer::defaults, nullptr},
      {"induction", induction_config_error, induction_create, InductionTrainer::defaults, induction_bytes},
  };
  return kinds;
}

const TrainerKind* find_trainer_kind(const std::string& id) {
  for (const TrainerKind& kind : trainer_kinds())
    if (id == kind.id) return &kind;
  return nullptr;
}

std::string unknown_trainer_message(const std::string& id) {
  std::string ids;
  for (const TrainerKind& kind : trainer_kinds()) ids += (ids.empty() ? "" : ", ") + std::string(kind.id);
  return "unknown trainer '" + id + "': the trainers are " + ids;
}

std::string trainer_config_error(const std::string& id, const Json& config, const TrainerAssets& assets) {
  const TrainerKind* kind = find_trainer_kind(id);
  return kind ? kind->config_error(config, assets) : unknown_trainer_message(id);
}

std::unique_ptr<Trainer> create_trainer(const std::string& id, const Json& config, const TrainerAssets& assets,
                                        std::string& error) {
  error = trainer_config_error(id, config, assets);
  if (!error.empty()) return nullptr;
  return find_trainer_kind(id)->create(config, assets);
}

}  // namespace attnlab
