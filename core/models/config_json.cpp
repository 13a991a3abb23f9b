#include "config_json.h"

#include <cmath>

#include "bert_config.h"

namespace attnlab {

namespace {

// The range check of both whole-number rows (FileInt, FileIntOr): "" when the number j is a whole
// number in [lo, hi], else the message config_json.h gives for it, about the field `name`.
std::string whole_number_error(const std::string& name, const Json& j, long lo, long hi) {
  const double x = j.as_number();
  if (x == std::floor(x) && x >= double(lo) && x <= double(hi)) return {};
  return name + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + write_json(j);
}

}  // namespace

void ConfigJsonReader::operator()(const char*, int& v, const FileInt& f) {
  if (!error.empty()) return;
  const Json* j = config_.find(f.file_name);
  const std::string name = std::string("config.json: \"") + f.file_name + "\"";
  if (!j) {
    if (f.required) error = name + " is missing (is this a " + model_ + " config?)";
    return;
  }
  if (!j->is_number()) {
    error = name + " must be a number, got " + Json::js_typeof(j);
    return;
  }
  error = whole_number_error(name, *j, f.lo, f.hi);
  if (error.empty()) v = int(j->as_number());
}

const Json* ConfigJsonReader::given(const char* file_name) const {
  if (!error.empty()) return nullptr;
  const Json* j = config_.find(file_name);
  return j && !j->is_null() ? j : nullptr;
}

void ConfigJsonReader::operator()(const char*, int& v, const FileIntOr& f) {
  if (!error.empty()) return;
  v = f.fallback;
  for (const char* field : {f.older_name, f.file_name}) {
    const Json* j = field ? given(field) : nullptr;
    if (!j) continue;
    const std::string name = std::string("config.json: \"") + field + "\"";
    if (!j->is_number()) {
      error = name + " must be a number or null, got " + Json::js_typeof(j);
      return;
    }
    error = whole_number_error(name, *j, f.lo, f.hi);
    if (!error.empty()) return;
    v = int(j->as_number());
  }
}

void ConfigJsonReader::operator()(const char*, double& v, const FilePositiveOr& f) {
  if (!error.empty()) return;
  v = f.fallback;
  const Json* j = given(f.file_name);
  if (!j) return;
  if (!j->is_number() || !(j->as_number() > 0 && j->as_number() < f.hi)) {
    error = std::string("config.json: \"") + f.file_name + "\" must be a number in (0, " + write_json(Json(f.hi)) + "), got " + write_json(*j);
    return;
  }
  v = j->as_number();
}

void ConfigJsonReader::operator()(const char*, bool& v, const FileBoolOr& f) {
  if (!error.empty()) return;
  v = f.fallback;
  const Json* j = given(f.file_name);
  if (!j) return;
  if (!j->is_bool()) {
    error = std::string("config.json: \"") + f.file_name + "\" must be true or false, got " + write_json(*j);
    return;
  }
  v = j->as_bool();
}

namespace {

// Mistral (MistralConfig) has Llama's layers and names, and attention over a sliding window of the
// last sliding_window keys, which this core's decoder (decoder.h: a causal mask over every earlier
// token) does not compute.
std::string mistral_lacks(const Json& config) {
  const Json* window = config.find("sliding_window");
  if (window && window->is_number())
    return "Mistral's sliding-window attention (sliding_window " + write_json(*window) + ") is not read here";
  return "Mistral checkpoints are not read here";
}

// Architectures that a lab may be handed (a Hub id's config.json, checkConfig) and this core does not
// compute, each said with what it lacks in place of the sentence for any other model_type.
struct UnreadArchitecture {
  const char* model_type;
  std::string (*lacks)(const Json& config);
};
const UnreadArchitecture kUnreadArchitectures[] = {{"mistral", mistral_lacks}};

// The entry of kUnreadArchitectures for config's model_type, or nullptr.
const UnreadArchitecture* unread_entry(const Json& config) {
  const Json* type = config.find("model_type");
  if (!type || !type->is_string()) return nullptr;
  for (const UnreadArchitecture& unread : kUnreadArchitectures)
    if (type->as_string() == unread.model_type) return &unread;
  return nullptr;
}

}  // namespace

std::string unread_architecture(const std::string& text) {
  Json config;
  if (!parse_json(text, config).empty() || !config.is_object()) return {};
  const UnreadArchitecture* unread = unread_entry(config);
  return unread ? unread->lacks(config) : std::string();
}

std::string read_config_object(const std::string& text, const char* model_type, const char* title, Json& out) {
  std::string error = parse_json(text, out);
  if (!error.empty()) return "config.json is not JSON: " + error;
  if (!out.is_object()) return "config.json must hold a JSON object";
  const Json* type = out.find("model_type");
  if (!type || !type->is_string() || type->as_string() == model_type) return {};
  const std::string reads = std::string("this lab reads ") + title + " checkpoints (model_type \"" + model_type + "\")";
  if (const UnreadArchitecture* unread = unread_entry(out))
    return "config.json's model_type is \"" + type->as_string() + "\": " + unread->lacks(out) + "; " + reads;
  return "config.json: model_type is \"" + type->as_string() + "\"; " + reads;
}

std::string check_weight_budget(std::uint64_t weights, int bytes_each, const WorkShape& work) {
  return check_model_memory(model_memory(weights, bytes_each, work), bytes_each);
}

}  // namespace attnlab
