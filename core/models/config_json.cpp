#include "config_json.h"

#include <cmath>

namespace attnlab {

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
  const double x = j->as_number();
  if (!(x == std::floor(x)) || x < double(f.lo) || x > double(f.hi)) {
    error = name + " must be a whole number in [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) + "], got " + write_json(*j);
    return;
  }
  v = int(x);
}

}  // namespace attnlab
