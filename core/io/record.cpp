#include "record.h"

#include <limits>
#include <sstream>

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
    // As doubles, so that 3.5, 1e10 or 2^32 + 5 are named, never truncated or wrapped.
    const double d = number_or_nan(items[i]);
    if (!(d == std::floor(d) && d >= -2147483648.0 && d <= 2147483647.0)) {
      std::ostringstream text;
      text.precision(17);
      text << name << "[" << i << "] must be a whole number in [-2147483648, 2147483647], got " << d;
      out.clear();
      return text.str();
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
