#include "marian_checkpoint.h"

#include <map>
#include <set>

#include "marian.h"

namespace attnlab {

namespace {

using Shape = std::vector<std::int64_t>;

struct Spec {
  std::string name;
  Shape shape;
  bool linear;
};

void add_linear(std::vector<Spec>& specs, const std::string& name, int in, int out) {
  specs.push_back({name + ".weight", {out, in}, true});
  specs.push_back({name + ".bias", {out}, false});
}

void add_norm(std::vector<Spec>& specs, const std::string& name, int E) {
  specs.push_back({name + ".weight", {E}, false});
  specs.push_back({name + ".bias", {E}, false});
}

void add_attention(std::vector<Spec>& specs, const std::string& name, int E) {
  for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"}) add_linear(specs, name + "." + p, E, E);
}

std::vector<Spec> specs_of(const MarianConfig& c) {
  const int E = c.d_model;
  std::vector<Spec> specs = {{"final_logits_bias", {1, c.vocab_size}, false}};
  for (int l = 0; l < c.encoder_layers; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    add_attention(specs, p + "self_attn", E);
    add_norm(specs, p + "self_attn_layer_norm", E);
    add_linear(specs, p + "fc1", E, c.encoder_ffn);
    add_linear(specs, p + "fc2", c.encoder_ffn, E);
    add_norm(specs, p + "final_layer_norm", E);
  }
  for (int l = 0; l < c.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    add_attention(specs, p + "self_attn", E);
    add_norm(specs, p + "self_attn_layer_norm", E);
    add_attention(specs, p + "encoder_attn", E);
    add_norm(specs, p + "encoder_attn_layer_norm", E);
    add_linear(specs, p + "fc1", E, c.decoder_ffn);
    add_linear(specs, p + "fc2", c.decoder_ffn, E);
    add_norm(specs, p + "final_layer_norm", E);
  }
  return specs;
}

}  // namespace

std::string plan_marian_load(const MarianConfig& c, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                             LoadPlan& plan) {
  plan = LoadPlan{};
  std::map<std::string, const CheckpointTensor*> by_name;
  for (const auto& t : tensors) by_name[t.name] = &t;
  LoadPlan p;
  std::set<std::string> used;
  auto check = [&](const CheckpointTensor& t, const Shape& shape) -> std::string {
    const std::string tensor = file + ": tensor \"" + t.name + "\"";
    if (!is_float_dtype(t.dtype)) return tensor + " has dtype " + t.dtype + "; a weight must be F32, F16 or BF16";
    if (t.shape != shape)
      return tensor + " has shape " + shape_string(t.shape) + " but config.json (d_model " + std::to_string(c.d_model) +
             ", vocab_size " + std::to_string(c.vocab_size) + ", ffn " + std::to_string(c.encoder_ffn) + "/" +
             std::to_string(c.decoder_ffn) + ") needs " + shape_string(shape);
    return {};
  };
  // The shared embeddings under whichever of their tied names the file kept.
  const Shape embedding = {c.vocab_size, c.d_model};
  const CheckpointTensor* shared = nullptr;
  for (const char* name : {"model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"}) {
    auto it = by_name.find(name);
    if (it != by_name.end()) {
      shared = it->second;
      break;
    }
  }
  if (!shared)
    return file + " has no tensor \"model.shared.weight\" (nor model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight, "
                  "lm_head.weight): is it a MarianMTModel checkpoint?";
  std::string error = check(*shared, embedding);
  if (!error.empty()) return error;
  p.loads.push_back({"model.shared.weight", shared->name, embedding, true});  // packed: the output projection
  used.insert(shared->name);
  for (const auto& spec : specs_of(c)) {
    auto it = by_name.find(spec.name);
    if (it == by_name.end())
      return file + " has no tensor \"" + spec.name + "\": is it a Marian checkpoint with config.json's " +
             std::to_string(c.encoder_layers) + " + " + std::to_string(c.decoder_layers) + " layers?";
    error = check(*it->second, spec.shape);
    if (!error.empty()) return error;
    p.loads.push_back({spec.name, spec.name, spec.shape, spec.linear});
    used.insert(spec.name);
  }
  for (const auto& t : tensors)
    if (!used.count(t.name)) p.skipped.push_back(t.name);
  plan = std::move(p);
  return {};
}

namespace {

class MarianKind : public ModelKind {
 public:
  const char* id() const override { return "marian"; }
  std::string read_config(const std::string& json) override { return parse_marian_config(json, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    return plan_marian_load(config_, tensors, file, out);
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<MarianModel>(config_); }
  Json summary() const override {
    const auto fields = [](auto& f, auto& c) {
      marian_size_fields(f, c);
      marian_generation_fields(f, c);
    };
    Json out = Json::object();
    out.set("config", to_record(config_, fields));
    return out;
  }

 private:
  MarianConfig config_;
};

}  // namespace

std::unique_ptr<ModelKind> make_marian_kind() { return std::make_unique<MarianKind>(); }

}  // namespace attnlab
