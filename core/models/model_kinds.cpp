#include "model_kinds.h"

#include "bert_checkpoint.h"
#include "distilbert_checkpoint.h"
#include "gpt2_checkpoint.h"
#include "marian_checkpoint.h"

namespace attnlab {

namespace {

struct Entry {
  const char* id;
  std::unique_ptr<ModelKind> (*make)();
};

// One line per kind.
const Entry kKinds[] = {
    {"bert", make_bert_kind},
    {"distilbert", make_distilbert_kind},
    {"marian", make_marian_kind},
    {"gpt2", make_gpt2_kind},
};

}  // namespace

std::unique_ptr<ModelKind> make_model_kind(const std::string& id) {
  for (const Entry& e : kKinds)
    if (id == e.id) return e.make();
  return nullptr;
}

std::vector<std::string> model_kind_ids() {
  std::vector<std::string> ids;
  for (const Entry& e : kKinds) ids.push_back(e.id);
  return ids;
}

std::string model_kind_names() {
  const auto ids = model_kind_ids();
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i == 0 ? "" : i + 1 == ids.size() ? " or " : ", ") + ids[i];
  return out;
}

}  // namespace attnlab
