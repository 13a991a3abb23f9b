#include "bert_checkpoint.h"

#include <set>

namespace attnlab {

namespace {

using Shape = std::vector<std::int64_t>;

std::string shape_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

void add_linear(std::vector<BertTensorSpec>& specs, const std::string& name, int in, int out) {
  specs.push_back({name + ".weight", {out, in}, true});
  specs.push_back({name + ".bias", {out}, false});
}

void add_layer_norm(std::vector<BertTensorSpec>& specs, const std::string& name, int E) {
  specs.push_back({name + ".weight", {E}, false});
  specs.push_back({name + ".bias", {E}, false});
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The spellings of a canonical name a checkpoint may use, most common first.
std::vector<std::string> spellings(const std::string& name, bool encoder) {
  std::vector<std::string> bases = {name};
  if (ends_with(name, "LayerNorm.weight")) bases.push_back(name.substr(0, name.size() - 6) + "gamma");
  if (ends_with(name, "LayerNorm.bias")) bases.push_back(name.substr(0, name.size() - 4) + "beta");
  if (!encoder) return bases;
  std::vector<std::string> out;
  for (const auto& b : bases) out.push_back("bert." + b);
  for (const auto& b : bases) out.push_back(b);
  return out;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The entry for `spec` under any spelling, checked; nullptr and no error when it is simply absent.
std::string find_checked(const SafeTensorsIndex& index, const BertTensorSpec& spec, bool encoder, const BertConfig& c,
                         const SafeTensorsEntry*& found) {
  found = nullptr;
  for (const auto& name : spellings(spec.name, encoder)) {
    if ((found = index.find(name))) break;
  }
  if (!found) return {};
  const std::string tensor = "model.safetensors: tensor " + quoted(found->name);
  const std::string& d = found->dtype;
  if (d != "F32" && d != "F16" && d != "BF16" && d != "F64")
    return tensor + " has dtype " + d + "; a weight must be F32, F16 or BF16";
  if (found->shape != spec.shape)
    return tensor + " has shape " + shape_string(found->shape) + " but config.json (hidden_size " +
           std::to_string(c.hidden_size) + ", intermediate_size " + std::to_string(c.intermediate_size) + ", vocab_size " +
           std::to_string(c.vocab_size) + ") needs " + shape_string(spec.shape);
  return {};
}

std::string missing(const std::string& name, bool encoder) {
  const auto names = spellings(name, encoder);
  std::string also;
  for (std::size_t i = 1; i < names.size(); ++i) also += (i > 1 ? ", " : "") + quoted(names[i]);
  return "model.safetensors has no tensor " + quoted(names[0]) + (also.empty() ? "" : " (nor " + also + ")");
}

}  // namespace

std::vector<BertTensorSpec> bert_encoder_specs(const BertConfig& c) {
  const int E = c.hidden_size, F = c.intermediate_size;
  std::vector<BertTensorSpec> specs = {
      {"embeddings.word_embeddings.weight", {c.vocab_size, E}, false},
      {"embeddings.position_embeddings.weight", {c.max_position_embeddings, E}, false},
      {"embeddings.token_type_embeddings.weight", {c.type_vocab_size, E}, false},
  };
  add_layer_norm(specs, "embeddings.LayerNorm", E);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    add_linear(specs, p + "attention.self.query", E, E);
    add_linear(specs, p + "attention.self.key", E, E);
    add_linear(specs, p + "attention.self.value", E, E);
    add_linear(specs, p + "attention.output.dense", E, E);
    add_layer_norm(specs, p + "attention.output.LayerNorm", E);
    add_linear(specs, p + "intermediate.dense", E, F);
    add_linear(specs, p + "output.dense", F, E);
    add_layer_norm(specs, p + "output.LayerNorm", E);
  }
  return specs;
}

std::vector<BertTensorSpec> bert_mlm_specs(const BertConfig& c) {
  const int E = c.hidden_size;
  std::vector<BertTensorSpec> specs;
  add_linear(specs, "cls.predictions.transform.dense", E, E);
  add_layer_norm(specs, "cls.predictions.transform.LayerNorm", E);
  specs.push_back({"cls.predictions.bias", {c.vocab_size}, false});
  return specs;
}

std::string plan_bert_load(const BertConfig& c, const SafeTensorsIndex& index, BertLoadPlan& plan) {
  plan = BertLoadPlan{};
  BertLoadPlan p;
  std::set<std::string> used;
  auto take = [&](const BertTensorSpec& spec, const SafeTensorsEntry* e) {
    p.loads.push_back({spec, *e});
    used.insert(e->name);
  };
  for (const auto& spec : bert_encoder_specs(c)) {
    const SafeTensorsEntry* e = nullptr;
    std::string error = find_checked(index, spec, true, c, e);
    if (!error.empty()) return error;
    if (!e) return missing(spec.name, true) + ": is it a BERT checkpoint with config.json's " +
                   std::to_string(c.num_hidden_layers) + " layers?";
    take(spec, e);
  }
  // The MLM head: all of it or none (a checkpoint of BertModel has none).
  const auto head = bert_mlm_specs(c);
  std::vector<const SafeTensorsEntry*> found(head.size());
  int present = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    std::string error = find_checked(index, head[i], false, c, found[i]);
    if (!error.empty()) return error;
    present += found[i] != nullptr;
  }
  if (present > 0 && present < int(head.size())) {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (!found[i]) return missing(head[i].name, false) + ", though it has the rest of the masked-language-model head";
  }
  if (present == int(head.size())) {
    p.mlm_head = true;
    for (std::size_t i = 0; i < head.size(); ++i) take(head[i], found[i]);
    // Tied to the word embeddings unless the file stores the decoder (then its own copy is used).
    const BertTensorSpec decoder{"cls.predictions.decoder.weight", {c.vocab_size, c.hidden_size}, false};
    const SafeTensorsEntry* d = nullptr;
    std::string error = find_checked(index, decoder, false, c, d);
    if (!error.empty()) return error;
    if (d) {
      take(decoder, d);
      p.separate_decoder = true;
    }
  }
  for (const auto& e : index.entries)
    if (!used.count(e.name)) p.skipped.push_back(e.name);
  const bool prefixed = index.find("bert.embeddings.word_embeddings.weight") != nullptr;
  bool gamma = false;
  for (const auto& e : index.entries) gamma = gamma || ends_with(e.name, "LayerNorm.gamma");
  p.naming = std::string(prefixed ? "\"bert.\" prefix" : "no prefix") + ", LayerNorm as " + (gamma ? "gamma/beta" : "weight/bias");
  plan = std::move(p);
  return {};
}

}  // namespace attnlab
