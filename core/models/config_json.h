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
#pragma once

#include <cstdint>
#include <string>

#include "../io/json.h"
#include "model_memory.h"
#include "../io/record.h"

namespace attnlab {

class ConfigJsonReader {
 public:
  // model: "BERT", "Marian": which config the message says a missing field belongs to.
  ConfigJsonReader(const Json& config, const char* model) : config_(config), model_(model) {}
  std::string error;  // the first problem; later fields are not read

  void operator()(const char*, int& v, const FileInt& f);

 private:
  const Json& config_;
  const char* model_;
};

// config.json's text -> "" and its object, or: "config.json is not JSON: ...", "config.json must hold a
// JSON object", or, when it names another model_type, "config.json: model_type is "x"; this lab reads
// <title> checkpoints (model_type "<model_type>")".
std::string read_config_object(const std::string& text, const char* model_type, const char* title, Json& out);

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
