#include "gpt2_checkpoint.h"

#include <map>
#include <set>

#include "gpt2.h"

namespace attnlab {

namespace {

struct Spec {
  std::string name;  // GPT2Model's
  std::vector<std::int64_t> shape;
  bool conv1d;  // a Conv1D weight [in, out]: the model packs it
};

std::vector<Spec> gpt2_specs(const Gpt2Config& c) {
  const std::int64_t E = c.n_embd, F = c.n_inner;
  std::vector<Spec> specs = {{"wte.weight", {c.vocab_size, E}, false}, {"wpe.weight", {c.n_positions, E}, false}};
  auto norm = [&](const std::string& name) {
    specs.push_back({name + ".weight", {E}, false});
    specs.push_back({name + ".bias", {E}, false});
  };
  auto conv1d = [&](const std::string& name, std::int64_t in, std::int64_t out) {
    specs.push_back({name + ".weight", {in, out}, true});
    specs.push_back({name + ".bias", {out}, false});
  };
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    norm(p + "ln_1");
    conv1d(p + "attn.c_attn", E, 3 * E);
    conv1d(p + "attn.c_proj", E, E);
    norm(p + "ln_2");
    conv1d(p + "mlp.c_fc", E, F);
    conv1d(p + "mlp.c_proj", F, E);
  }
  norm("ln_f");
  return specs;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

std::string plan_gpt2_load(const Gpt2Config& c, const std::vector<CheckpointTensor>& tensors, const std::string& file,
                           Gpt2LoadPlan& plan) {
  plan = Gpt2LoadPlan{};
  Gpt2LoadPlan p;
  std::map<std::string, const CheckpointTensor*> index;
  for (const auto& t : tensors) index.emplace(t.name, &t);
  const bool prefixed = index.count("transformer.wte.weight") != 0;
  const std::string prefix = prefixed ? "transformer." : "";
  std::set<std::string> used;
  for (const Spec& spec : gpt2_specs(c)) {
    auto it = index.find(prefix + spec.name);
    if (it == index.end())
      return file + " has no tensor " + quoted(prefix + spec.name) + ": is it a GPT-2 checkpoint with config.json's " +
             std::to_string(c.n_layer) + " layers?";
    const CheckpointTensor& t = *it->second;
    const std::string tensor = file + ": tensor " + quoted(t.name);
    if (!is_float_dtype(t.dtype)) return tensor + " has dtype " + t.dtype + "; a weight must be F32, F16 or BF16";
    if (t.shape != spec.shape)
      return tensor + " has shape " + shape_string(t.shape) + " but config.json (n_embd " + std::to_string(c.n_embd) + ", n_inner " +
             std::to_string(c.n_inner) + ", vocab_size " + std::to_string(c.vocab_size) + ", n_positions " +
             std::to_string(c.n_positions) + ") needs " + shape_string(spec.shape);
    p.loads.push_back({spec.name, t.name, t.shape, spec.conv1d});
    used.insert(t.name);
  }
  for (const auto& t : tensors)
    if (!used.count(t.name)) p.skipped.push_back(t.name);  // attn.bias / masked_bias buffers, the tied lm_head
  p.naming = prefixed ? "\"transformer.\" prefix" : "no prefix";
  plan = std::move(p);
  return {};
}

namespace {

class Gpt2Kind : public ModelKind {
 public:
  const char* id() const override { return "gpt2"; }
  std::string read_config(const std::string& json) override { return parse_gpt2_config(json, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    std::string error = plan_gpt2_load(config_, tensors, file, plan_);
    if (error.empty()) out = plan_;
    return error;
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<Gpt2Model>(config_); }
  Json summary() const override {
    Json out = Json::object();
    out.set("naming", Json(plan_.naming));
    out.set("config", to_record(config_, [](auto& f, auto& c) { gpt2_summary_fields(f, c); }));
    return out;
  }

 private:
  Gpt2Config config_;
  Gpt2LoadPlan plan_;
};

}  // namespace

std::unique_ptr<ModelKind> make_gpt2_kind() { return std::make_unique<Gpt2Kind>(); }

}  // namespace attnlab
