#include "model_kinds.h"

#include "bert_checkpoint.h"
#include "distilbert_checkpoint.h"
#include "gpt2_checkpoint.h"
#include "hooked_transformer.h"
#include "llama_checkpoint.h"
#include "marian_checkpoint.h"

namespace attnlab {

namespace {

const ModelKindLab kPretrained = {"pretrained", "Pretrained", "attnlab pretrained"};
const ModelKindLab kWriting = {"writing", "Writing", "attnlab generate"};
// Every decoder (GPT-2, Llama, Qwen2) reads its tokenizer through @huggingface/tokenizers: tokenizer.json, or
// without it GPT-2's own vocab.json + merges.txt (the first alternative that is there is read, and the one
// the Hub clients fetch first); tokenizer_config.json (BOS/EOS, the chat template) and generation_config.json
// (its ends) where there, so a download by Hub id chats as a folder does.
const std::vector<std::string> kDecoderRequired = {"config.json", "tokenizer.json | vocab.json + merges.txt"};
const std::vector<std::string> kDecoderOptional = {"tokenizer_config.json", "generation_config.json"};
const std::vector<std::string> kBertRequired = {"config.json", "vocab.txt"}, kBertOptional = {"tokenizer_config.json"};

}  // namespace

const std::vector<ModelKindRow>& model_kind_rows() {
  // One row per kind.
  static const std::vector<ModelKindRow> rows = {
      {"bert", "BERT", {"bert"}, kPretrained, kBertRequired, kBertOptional, "wordpiece", "bert", make_bert_kind},
      // DistilBERT: BERT's maths under other names and without token types (distilbert_checkpoint.h).
      {"distilbert", "DistilBERT", {"distilbert"}, kPretrained, kBertRequired, kBertOptional, "wordpiece", "bert", make_distilbert_kind},
      {"marian", "Marian (opus-mt)", {"marian"}, {"translation", "Translation", "attnlab translate"},
       {"config.json", "source.spm", "target.spm", "vocab.json"}, {}, "sentencepiece", "marian", make_marian_kind},
      // GPT-2, Llama and Qwen2: rows of the one decoder (decoder.h; gpt2.h, llama.h), read by the same opener.
      {"gpt2", "GPT-2", {"gpt2"}, kWriting, kDecoderRequired, kDecoderOptional, "hf_tokenizers", "decoder", make_gpt2_kind},
      {"llama", "Llama", {"llama"}, kWriting, kDecoderRequired, kDecoderOptional, "hf_tokenizers", "decoder", make_llama_kind},
      {"qwen2", "Qwen2", {"qwen2"}, kWriting, kDecoderRequired, kDecoderOptional, "hf_tokenizers", "decoder", make_qwen2_kind},
      // The Induction lab's trained model (TransformerLens's HookedTransformer): config.json alone, which
      // web/models/hooked_transformer.js writes from the export's metadata beside the weights; its tokens
      // are the lab's (ids, or the text task's characters: web/tokenizers/induction_tokenizer.js).
      {"hooked_transformer", "TransformerLens", {"hooked_transformer"}, kWriting, {"config.json"}, {}, "induction", "decoder",
       make_hooked_transformer_kind},
#ifdef ATTNLAB_TEST_DECODER_KIND
      // The test module's kind only (CMakeLists.txt: attnlab-test-kind): Llama's reader and spec under its own
      // name row (decoder_names.cpp), so that tests/node/decoder_kind_rows.test.mjs shows a decoder added in
      // C++ opened by the page's and the CLI's code with no JavaScript edited, only the generated table.
      {"test_decoder", "Test decoder", {"test_decoder"}, kWriting, kDecoderRequired, kDecoderOptional, "hf_tokenizers", "decoder",
       [] { return make_llama_style_kind("test_decoder"); }},
#endif
  };
  return rows;
}

std::unique_ptr<ModelKind> make_model_kind(const std::string& id) {
  for (const ModelKindRow& row : model_kind_rows())
    if (id == row.id) return row.make();
  return nullptr;
}

std::vector<std::string> model_kind_ids() {
  std::vector<std::string> ids;
  for (const ModelKindRow& row : model_kind_rows()) ids.push_back(row.id);
  return ids;
}

std::string model_kind_names() {
  const auto ids = model_kind_ids();
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i == 0 ? "" : i + 1 == ids.size() ? " or " : ", ") + ids[i];
  return out;
}

Json model_kinds_record() {
  auto strings = [](const std::vector<std::string>& list) {
    Json out = Json::array();
    for (const std::string& s : list) out.push(Json(s));
    return out;
  };
  Json rows = Json::array();
  for (const ModelKindRow& row : model_kind_rows()) {
    Json lab = Json::object(), files = Json::object(), out = Json::object();
    lab.set("id", Json(row.lab.id));
    lab.set("title", Json(row.lab.title));
    lab.set("command", Json(row.lab.command));
    files.set("required", strings(row.required));
    files.set("optional", strings(row.optional));
    out.set("kind", Json(row.id));
    out.set("title", Json(row.title));
    out.set("modelTypes", strings(row.model_types));
    out.set("lab", lab);
    out.set("files", files);
    out.set("tokenizer", Json(row.tokenizer));
    out.set("binding", Json(row.binding));
    rows.push(out);
  }
  return rows;
}

}  // namespace attnlab
