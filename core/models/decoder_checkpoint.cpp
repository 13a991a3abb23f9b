#include "decoder_checkpoint.h"

#include <map>
#include <set>

namespace attnlab {

namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// `name` is `suffix`, or ends in "." and `suffix` (a layer's "model.layers.0.self_attn.rotary_emb.inv_freq").
bool ends_with_part(const std::string& name, const std::string& suffix) {
  if (name == suffix) return true;
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         name[name.size() - suffix.size() - 1] == '.';
}

}  // namespace

std::string plan_decoder_load(const DecoderSpec& spec, const DecoderNames& names, const DecoderCheckpointRules& rules,
                              const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& plan,
                              std::string& prefix) {
  plan = LoadPlan{};
  prefix.clear();
  std::map<std::string, const CheckpointTensor*> index;
  for (const auto& t : tensors) index.emplace(t.name, &t);
  const std::vector<DecoderTensorShape> table = decoder_tensors(spec, names);
  std::string found;  // the prefix the file's names carry
  for (const std::string& candidate : rules.prefixes)
    if (index.count(candidate + table.front().name)) {
      found = candidate;
      break;
    }
  const std::string unembedding = spec.tied_unembedding ? "" : names.name(DecoderTensor::output) + ".weight";
  LoadPlan p;
  std::set<std::string> used;
  for (const DecoderTensorShape& wanted : table) {
    const std::string name = found + wanted.name;
    auto it = index.find(name);
    if (it == index.end()) {
      if (wanted.name == unembedding)
        return file + " has no tensor " + quoted(name) + ", and config.json's tie_word_embeddings is false: is the unembedding tied?";
      const bool bias = rules.biases_from_config && wanted.name.find(".bias") != std::string::npos;
      return file + " has no tensor " + quoted(name) + ": is it a " + rules.model + " checkpoint with config.json's " +
             std::to_string(spec.n_layer) + " layers" + (bias ? " and these biases?" : "?");
    }
    const CheckpointTensor& t = *it->second;
    const std::string tensor = file + ": tensor " + quoted(t.name);
    if (!is_float_dtype(t.dtype)) return tensor + " has dtype " + t.dtype + "; a weight must be F32, F16 or BF16";
    if (t.shape != wanted.shape)
      return tensor + " has shape " + shape_string(t.shape) + " but config.json (" + rules.sizes + ") needs " + shape_string(wanted.shape);
    p.loads.push_back({wanted.name, t.name, t.shape, wanted.linear});
    used.insert(t.name);
  }
  for (const auto& t : tensors) {
    if (used.count(t.name)) continue;
    bool known = rules.skip_unnamed;
    for (const std::string& s : rules.skipped) known = known || ends_with_part(t.name, s);
    // Any other tensor is a sign of another architecture (a bias this config does not declare), named
    // rather than ignored.
    if (!known)
      return file + " has tensor " + quoted(t.name) + ", which a " + rules.model + " decoder of this config.json does not have " +
             rules.unnamed_hint;
    p.skipped.push_back(t.name);
  }
  plan = std::move(p);
  prefix = found;
  return {};
}

}  // namespace attnlab
