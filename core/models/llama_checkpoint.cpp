#include "llama_checkpoint.h"

#include <map>
#include <set>

#include "config_json.h"
#include "llama.h"

namespace attnlab {

namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

std::string plan_llama_load(const LlamaConfig& c, const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& plan) {
  plan = LoadPlan{};
  LoadPlan p;
  std::map<std::string, const CheckpointTensor*> index;
  for (const auto& t : tensors) index.emplace(t.name, &t);
  std::set<std::string> used;
  for (const DecoderTensorShape& spec : decoder_tensors(llama_spec(c), *decoder_names(c.model_type))) {
    auto it = index.find(spec.name);
    if (it == index.end()) {
      if (spec.name == "lm_head.weight")
        return file + " has no tensor \"lm_head.weight\", and config.json's tie_word_embeddings is false: is the unembedding tied?";
      return file + " has no tensor " + quoted(spec.name) + ": is it a " + c.model_type + " checkpoint with config.json's " +
             std::to_string(c.layers) + " layers" + (spec.name.find(".bias") != std::string::npos ? " and these biases?" : "?");
    }
    const CheckpointTensor& t = *it->second;
    const std::string tensor = file + ": tensor " + quoted(t.name);
    if (!is_float_dtype(t.dtype)) return tensor + " has dtype " + t.dtype + "; a weight must be F32, F16 or BF16";
    if (t.shape != spec.shape)
      return tensor + " has shape " + shape_string(t.shape) + " but config.json (hidden_size " + std::to_string(c.hidden_size) +
             ", " + std::to_string(c.heads) + " heads over " + std::to_string(c.kv_heads) + " key/value heads of " +
             std::to_string(c.head_dim) + ", intermediate_size " + std::to_string(c.intermediate_size) + ", vocab_size " +
             std::to_string(c.vocab_size) + ") needs " + shape_string(spec.shape);
    p.loads.push_back({spec.name, t.name, t.shape, spec.linear});
    used.insert(t.name);
  }
  for (const auto& t : tensors) {
    if (used.count(t.name)) continue;
    // What the model does not read: a tied lm_head, rotary buffers. Any other tensor is a sign of
    // another architecture (a bias this config does not declare), named rather than ignored.
    const bool known = t.name == "lm_head.weight" || t.name.find("rotary_emb.inv_freq") != std::string::npos;
    if (!known)
      return file + " has tensor " + quoted(t.name) + ", which a " + c.model_type +
             " decoder of this config.json does not have (attention_bias, mlp_bias or tie_word_embeddings set wrong?)";
    p.skipped.push_back(t.name);
  }
  plan = std::move(p);
  return {};
}

namespace {

class LlamaKind : public ModelKind {
 public:
  explicit LlamaKind(const char* id) : id_(id) {}
  const char* id() const override { return id_; }
  std::string read_config(const std::string& json) override { return parse_llama_config(json, id_, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    LoadPlan plan;
    std::string error = plan_llama_load(config_, tensors, file, plan);
    if (!error.empty()) return error;
    weights_ = held_format(plan, tensors);
    if (weights_ == WeightFormat::f32 && config_.stored_bytes == 2) {
      // config.json's torch_dtype promised 16 bits, but the file's weights are not all of one 16-bit
      // dtype: they are widened to float32, and must fit as such.
      error = check_weight_budget(config_.weight_count(), 4, work_shape(config_));
      if (!error.empty()) return file + " holds weights of more than one dtype, held as float32: " + error;
    }
    out = plan;
    return {};
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<LlamaModel>(config_, weights_); }
  Json summary() const override {
    Json out = Json::object();
    out.set("naming", Json(config_.tie_word_embeddings ? "tied unembedding" : "lm_head of its own"));
    out.set("config", to_record(config_, [](auto& f, auto& c) { llama_summary_fields(f, c); }));
    out.set("weights", Json(weights_ == WeightFormat::bf16 ? "BF16" : weights_ == WeightFormat::f16 ? "F16" : "F32"));
    return out;
  }

 private:
  // BF16 or F16 when every projection and embedding of the plan is stored so (they stay 16-bit in
  // memory); else float32.
  static WeightFormat held_format(const LoadPlan& plan, const std::vector<CheckpointTensor>& tensors) {
    std::map<std::string, std::string> dtype;
    for (const auto& t : tensors) dtype.emplace(t.name, t.dtype);
    std::string common;
    for (const TensorLoad& load : plan.loads) {
      const bool matrix = load.linear || load.shape.size() == 2;  // projections, embedding, lm_head
      if (!matrix) continue;
      const std::string& d = dtype[load.file_name];
      if (common.empty()) common = d;
      if (d != common) return WeightFormat::f32;
    }
    return common == "BF16" ? WeightFormat::bf16 : common == "F16" ? WeightFormat::f16 : WeightFormat::f32;
  }

  const char* id_;
  LlamaConfig config_;
  WeightFormat weights_ = WeightFormat::f32;
};

}  // namespace

std::unique_ptr<ModelKind> make_llama_kind() { return std::make_unique<LlamaKind>("llama"); }
std::unique_ptr<ModelKind> make_qwen2_kind() { return std::make_unique<LlamaKind>("qwen2"); }

}  // namespace attnlab
