#include "llama_checkpoint.h"

#include <map>

#include "config_json.h"
#include "decoder_checkpoint.h"
#include "llama.h"

namespace attnlab {

namespace {

// Llama's and Qwen2's files: save_pretrained's names, bare; what the model does not read is a tied
// lm_head and old files' rotary buffers, and any other tensor is another architecture's (a bias this
// config does not declare), named.
DecoderCheckpointRules llama_checkpoint_rules(const LlamaConfig& c) {
  DecoderCheckpointRules r;
  r.model = c.model_type;
  r.sizes = "hidden_size " + std::to_string(c.hidden_size) + ", " + std::to_string(c.heads) + " heads over " +
            std::to_string(c.kv_heads) + " key/value heads of " + std::to_string(c.head_dim) + ", intermediate_size " +
            std::to_string(c.intermediate_size) + ", vocab_size " + std::to_string(c.vocab_size);
  r.biases_from_config = true;
  r.skipped = {"lm_head.weight", "rotary_emb.inv_freq"};
  r.unnamed_hint = "(attention_bias, mlp_bias or tie_word_embeddings set wrong?)";
  return r;
}

class LlamaKind : public ModelKind {
 public:
  explicit LlamaKind(const char* id) : id_(id) {}
  const char* id() const override { return id_; }
  std::string read_config(const std::string& json) override { return parse_llama_config(json, id_, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    const DecoderNames* names = nullptr;
    LoadPlan plan;
    std::string prefix;  // none: these files' names are bare
    std::string error = find_decoder_names(id_, names);
    if (error.empty()) error = plan_decoder_load(llama_spec(config_), *names, llama_checkpoint_rules(config_), tensors, file, plan, prefix);
    if (!error.empty()) return error;
    weights_ = held_format(plan, tensors);
    if (weights_ == WeightFormat::f32 && config_.stored_bytes == 2) {
      // config.json's torch_dtype promised 16 bits, but the file's weights are not all of one 16-bit
      // dtype: they are widened to float32, and must fit as such.
      error = check_weight_budget(config_.weight_count, 4, work_shape(config_));
      if (!error.empty()) return file + " holds weights of more than one dtype, held as float32: " + error;
    }
    out = plan;
    return {};
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<LlamaModel>(config_, weights_); }
  Json summary() const override {
    Json out = Json::object();
    out.set("naming", Json(config_.tie_word_embeddings ? "tied unembedding" : "lm_head of its own"));
    out.set("config", config_record(config_, [](auto& f, auto& c) { llama_config_fields(f, c); }));
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
std::unique_ptr<ModelKind> make_llama_style_kind(const char* id) { return std::make_unique<LlamaKind>(id); }

}  // namespace attnlab
