#include "gpt2_checkpoint.h"

#include "decoder_checkpoint.h"
#include "gpt2.h"

namespace attnlab {

namespace {

// GPT-2's files: the gpt2 repository's bare names or GPT2LMHeadModel's "transformer." before each; every
// tensor the table does not name (the attention's bias and masked_bias buffers, the tied lm_head) skipped.
DecoderCheckpointRules gpt2_checkpoint_rules(const Gpt2Config& c) {
  DecoderCheckpointRules r;
  r.model = "GPT-2";
  r.sizes = "n_embd " + std::to_string(c.n_embd) + ", n_inner " + std::to_string(c.n_inner) + ", vocab_size " +
            std::to_string(c.vocab_size) + ", n_positions " + std::to_string(c.n_positions);
  r.prefixes = {"transformer."};
  r.skip_unnamed = true;
  return r;
}

class Gpt2Kind : public ModelKind {
 public:
  const char* id() const override { return "gpt2"; }
  std::string read_config(const std::string& json) override { return parse_gpt2_config(json, config_); }
  std::string plan(const std::vector<CheckpointTensor>& tensors, const std::string& file, LoadPlan& out) override {
    const DecoderNames* names = nullptr;
    LoadPlan plan;
    std::string error = find_decoder_names(id(), names);
    if (error.empty()) error = plan_decoder_load(gpt2_spec(config_), *names, gpt2_checkpoint_rules(config_), tensors, file, plan, prefix_);
    if (error.empty()) out = plan;
    return error;
  }
  std::unique_ptr<CheckpointModel> build() const override { return std::make_unique<Gpt2Model>(config_); }
  Json summary() const override {
    Json out = Json::object();
    out.set("naming", Json(prefix_.empty() ? "no prefix" : "\"" + prefix_ + "\" prefix"));
    out.set("config", config_record(config_, [](auto& f, auto& c) { gpt2_config_fields(f, c); }));
    return out;
  }

 private:
  Gpt2Config config_;
  std::string prefix_;  // the prefix the file's names carry ("transformer."), "" for none
};

}  // namespace

std::unique_ptr<ModelKind> make_gpt2_kind() { return std::make_unique<Gpt2Kind>(); }

}  // namespace attnlab
