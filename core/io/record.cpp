#include "record.h"

#include <limits>

#include "../validate.h"

namespace attnlab {

std::string check_array_record(const char* name, const Json* v) {
  if (v && v->is_array()) return {};
  return std::string(name) + " must be a Float32Array (or an array of numbers), got " + Json::js_type_name(v);
}

namespace {

double number_or_nan(const Json& v) {
  return v.is_number() ? v.as_number() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::string read_int32s(const char* name, const Json& array, std::vector<std::int32_t>& out) {
  const std::vector<Json>& items = array.items();
  out.resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double d = number_or_nan(items[i]);
    std::string error = check_int32_element(name, i, d);
    if (!error.empty()) {
      out.clear();
      return error;
    }
    out[i] = std::int32_t(d);
  }
  return {};
}

std::vector<float> read_floats(const Json& array) {
  std::vector<float> out(array.items().size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = float(number_or_nan(array.items()[i]));
  return out;
}

}  // namespace attnlab
