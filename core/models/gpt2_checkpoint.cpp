#include "gpt2_checkpoint.h"

#include <map>
#include <set>

#include "gpt2.h"

namespace attnlab {

namespace {

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
  // The decoder's tensors for GPT-2's row, under the "gpt2" table's names (Conv1D weights [in, out]).
  for (const DecoderTensorShape& spec : decoder_tensors(gpt2_spec(c), *decoder_names("gpt2"))) {
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
    p.loads.push_back({spec.name, t.name, t.shape, spec.linear});
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
