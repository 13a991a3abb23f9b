// A checkpoint's config.json read through its kind's declared record (record.h): each whole-number field
// is declared once, with the name config.json gives it and its range, e.g.
//
//   template <class Fields, class Config>
//   void bert_size_fields(Fields& f, Config& c) {
//     f("hiddenSize", c.hidden_size, FileInt{"hidden_size", 1, 8192});
//     ...
//   }
//
// ConfigJsonReader reads those fields from config.json with the messages below; RecordWriter writes the
// same list, by the record's names, as the summary the page shows (to_record). Every message starts
// with config.json and names the field:
//   missing (required)   config.json: "F" is missing (is this a <Model> config?)
//   not a number         config.json: "F" must be a number, got <typeof>
//   out of range         config.json: "F" must be a whole number in [lo, hi], got <value>
//
// A field with a default is a row too, its default and range in the row (the rows below FileInt), so a
// kind's config reader lists its fields instead of reading each by hand:
//
//   f("innerSize", c.n_inner, FileIntOr{"n_inner", 1, 65536, 4 * c.n_embd});
//   f(kNotShown, c.layer_norm_epsilon, FilePositiveOr{"layer_norm_epsilon", 1, 1e-5});
//
// Absent or null (config.json's way of saying "the default") reads as the default, which may be
// computed from the fields declared above it (they are read first). config_record() writes such a
// declaration as the summary, leaving out the fields declared kNotShown. Their messages:
//   not a number         config.json: "F" must be a number or null, got <typeof>
//   out of range         config.json: "F" must be a whole number in [lo, hi], got <value>
//   not in (0, hi)       config.json: "F" must be a number in (0, hi), got <value>
//   not a boolean        config.json: "F" must be true or false, got <value>
#pragma once

#include <cstdint>
#include <string>

#include "../io/json.h"
#include "model_memory.h"
#include "../io/record.h"

namespace attnlab {

// A whole number with a default. older_name: the field's older spelling (GPT-2's n_ctx for
// n_positions), read first, so that the newer one wins where a config has both.
struct FileIntOr {
  const char* file_name;
  long lo, hi;
  int fallback;
  const char* older_name = nullptr;
};
// A number in (0, hi) with a default (a norm's epsilon, rope_theta).
struct FilePositiveOr {
  const char* file_name;
  double hi;
  double fallback;
};
// true or false, with a default.
struct FileBoolOr {
  const char* file_name;
  bool fallback;
};

// The record name of a field that is read from config.json but not shown in the summary.
constexpr const char* kNotShown = nullptr;

class ConfigJsonReader {
 public:
  // model: "BERT", "Marian": which config the message says a missing field belongs to.
  ConfigJsonReader(const Json& config, const char* model) : config_(config), model_(model) {}
  std::string error;  // the first problem; later fields are not read

  void operator()(const char*, int& v, const FileInt& f);
  void operator()(const char*, int& v, const FileIntOr& f);
  void operator()(const char*, double& v, const FilePositiveOr& f);
  void operator()(const char*, bool& v, const FileBoolOr& f);
  // A field of the summary without a row: its kind reads it by hand (Llama's eos_token_id, a number or
  // a list).
  void operator()(const char*, int&) {}

 private:
  // The field, or nullptr when it is absent or null (or a problem was found before).
  const Json* given(const char* file_name) const;
  const Json& config_;
  const char* model_;
};

// The summary's writer of a config declaration: every field under its record name, as RecordWriter
// writes it, except those declared kNotShown.
class ConfigRecordWriter : public RecordWriter {
 public:
  using RecordWriter::operator();
  void operator()(const char* name, int v, const FileIntOr&) { show(name, v); }
  void operator()(const char* name, double v, const FilePositiveOr&) { show(name, v); }
  void operator()(const char* name, bool v, const FileBoolOr&) { show(name, v); }

 private:
  template <typename V>
  void show(const char* name, V v) {
    if (name != kNotShown) (*this)(name, v);
  }
};

// A config declaration as the summary's record.
template <typename T, typename Declare>
Json config_record(const T& value, Declare declare) {
  ConfigRecordWriter w;
  declare(w, value);
  return std::move(w.out);
}

// config.json's text -> "" and its object, or: "config.json is not JSON: ...", "config.json must hold a
// JSON object", or, when it names another model_type, "config.json: model_type is "x"; this lab reads
// <title> checkpoints (model_type "<model_type>")". An architecture this core knows and does not compute
// is named with what it lacks: "config.json's model_type is "mistral": Mistral's sliding-window attention
// (sliding_window 4096) is not read here; this lab reads ..." (config_json.cpp's kUnreadArchitectures).
std::string read_config_object(const std::string& text, const char* model_type, const char* title, Json& out);

// What this core lacks to compute an architecture it knows and does not read, from config.json's text
// ("Mistral's sliding-window attention (sliding_window 4096) is not read here"); "" for any other config
// (a model_type a kind reads, one it has never heard of, or text that is not a JSON object). The JS
// registry says it for a model_type no lab reads (web/models/registry.js: kindForLab).
std::string unread_architecture(const std::string& text);

// "" when `weights` weights of `bytes_each` bytes (4: float32; 2: a 16-bit checkpoint held at 16 bits)
// and the work of a run on `work`'s shape fit a browser tab's WebAssembly memory (model_memory.h: the one
// rule), else the message saying how much memory the model needs.
std::string check_weight_budget(std::uint64_t weights, int bytes_each, const WorkShape& work);

// Reads the declared fields of `config` (a Json object): "" or the first problem.
template <typename T, typename Declare>
std::string read_config_fields(const Json& config, const char* model, T& value, Declare declare) {
  ConfigJsonReader r(config, model);
  declare(r, value);
  return r.error;
}

}  // namespace attnlab
