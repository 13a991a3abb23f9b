#include "bert_checkpoint.h"

#include <map>
#include <set>

#include "bert.h"

namespace attnlab {

namespace {

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

// BERT's spellings of a canonical name, most common first.
std::vector<std::string> bert_spellings(const std::string& name, bool encoder) {
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

using Index = std::map<std::string, const CheckpointTensor*>;

// The tensor for `spec` under any spelling, checked; nullptr and no error when it is simply absent.
std::string find_checked(const Index& index, const std::string& file, const BertNaming& naming, const BertTensorSpec& spec, bool encoder,
                         const BertConfig& c, const CheckpointTensor*& found) {
  found = nullptr;
  for (const auto& name : naming.spellings(spec.name, encoder)) {
    auto it = index.find(name);
    if (it != index.end()) {
      found = it->second;
      break;
    }
  }
  if (!found) return {};
  const std::string tensor = file + ": tensor " + quoted(found->name);
  const std::string& d = found->dtype;
  if (!is_float_dtype(d)) return tensor + " has dtype " + d + "; a weight must be F32, F16 or BF16";
  if (found->shape != spec.shape)
    return tensor + " has shape " + shape_string(found->shape) + " but config.json (hidden_size " +
           std::to_string(c.hidden_size) + ", intermediate_size " + std::to_string(c.intermediate_size) + ", vocab_size " +
           std::to_string(c.vocab_size) + ") needs " + shape_string(spec.shape);
  return {};
}

std::string missing(const std::string& file, const BertNaming& naming, const std::string& name, bool encoder) {
  const auto names = naming.spellings(name, encoder);
  std::string also;
  for (std::size_t i = 1; i < names.size(); ++i) also += (i > 1 ? ", " : "") + quoted(names[i]);
  return file + " has no tensor " + quoted(names[0]) + (also.empty() ? "" : " (nor " + also + ")");
}

}  // namespace

const BertNaming& bert_naming() {
  static const BertNaming naming{"BERT", bert_spellings, true, "bert."};
  return naming;
}

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

std::string plan_bert_load(const BertConfig& c, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                           BertLoadPlan& plan, const BertNaming& naming) {
  plan = BertLoadPlan{};
  BertLoadPlan p;
  Index index;
  for (const auto& t : tensors) index.emplace(t.name, &t);
  std::set<std::string> used;
  auto take = [&](const BertTensorSpec& spec, const CheckpointTensor* t) {
    p.loads.push_back({spec.name, t->name, t->shape, spec.transpose});
    used.insert(t->name);
  };
  for (const auto& spec : bert_encoder_specs(c)) {
    if (!naming.token_types && spec.name == "embeddings.token_type_embeddings.weight") continue;  // zero: none
    const CheckpointTensor* t = nullptr;
    std::string error = find_checked(index, file, naming, spec, true, c, t);
    if (!error.empty()) return error;
    if (!t) return missing(file, naming, spec.name, true) + ": is it a " + naming.model + " checkpoint with config.json's " +
                   std::to_string(c.num_hidden_layers) + " layers?";
    take(spec, t);
  }
  // The MLM head: all of it or none (a checkpoint of BertModel has none).
  const auto head = bert_mlm_specs(c);
  std::vector<const CheckpointTensor*> found(head.size());
  int present = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    std::string error = find_checked(index, file, naming, head[i], false, c, found[i]);
    if (!error.empty()) return error;
    present += found[i] != nullptr;
  }
  if (present > 0 && present < int(head.size())) {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (!found[i]) return missing(file, naming, head[i].name, false) + ", though it has the rest of the masked-language-model head";
  }
  if (present == int(head.size())) {
    p.mlm_head = true;
    for (std::size_t i = 0; i < head.size(); ++i) take(head[i], found[i]);
    // Tied to the word embeddings unless the file stores the decoder (then its own copy is used).
    const BertTensorSpec decoder{"cls.predictions.decoder.weight", {c.vocab_size, c.hidden_size}, false};
    const CheckpointTensor* d = nullptr;
    std::string error = find_checked(index, file, naming, decoder, false, c, d);
    if (!error.empty()) return error;
    if (d) {
      take(decoder, d);
      p.separate_decoder = true;
    }
  }
  for (const auto& t : tensors)
    if (!used.count(t.name)) p.skipped.push_back(t.name);
  const bool prefixed = index.count(std::string(naming.prefix) + "embeddings.word_embeddings.weight") != 0;
  bool gamma = false;
  for (const auto& t : tensors) gamma = gamma || ends_with(t.name, "LayerNorm.gamma");
  p.naming = (prefixed ? "\"" + std::string(naming.prefix) + "\" prefix" : std::string("no prefix")) + ", LayerNorm as " +
             (gamma ? "gamma/beta" : "weight/bias");
  plan = std::move(p);
  return {};
}

namespace {

class BertKind : public ModelKind {
 public:
  BertKind(const char* id, std::string (*read)(const std::string&, BertConfig&), const BertNaming& naming)
      : id_(id), read_(read), naming_(naming) {}
  const char* id() const override { return id_; }
  std::string read_config(const std::string& json) override { return read_(json, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    std::string error = plan_bert_load(config_, tensors, file, plan_, naming_);
    if (error.empty()) out = plan_;
    return error;
  }
  std::unique_ptr<CheckpointModel> build() const override {
    return std::make_unique<BertModel>(config_, plan_.mlm_head, plan_.separate_decoder);
  }
  Json summary() const override {
    Json out = Json::object();
    out.set("naming", Json(plan_.naming));
    out.set("mlm", Json(plan_.mlm_head));
    out.set("separateDecoder", Json(plan_.separate_decoder));
    out.set("config", to_record(config_, [](auto& f, auto& c) { bert_config_fields(f, c); }));
    return out;
  }

 private:
  const char* id_;
  std::string (*read_)(const std::string&, BertConfig&);
  const BertNaming& naming_;
  BertConfig config_;
  BertLoadPlan plan_;
};

}  // namespace

std::unique_ptr<ModelKind> make_bert_family_kind(const char* id, std::string (*read_config)(const std::string&, BertConfig&),
                                                 const BertNaming& naming) {
  return std::make_unique<BertKind>(id, read_config, naming);
}

std::unique_ptr<ModelKind> make_bert_kind() { return make_bert_family_kind("bert", parse_bert_config, bert_naming()); }

}  // namespace attnlab
