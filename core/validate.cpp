#include "validate.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace attnlab {

std::string shape_text(std::initializer_list<std::pair<const char*, long>> dims) {
  std::ostringstream out;
  out << '[';
  bool first = true;
  for (const auto& [name, size] : dims) {
    out << (first ? "" : ", ") << name << '=' << size;
    first = false;
  }
  out << ']';
  return out.str();
}

std::string check_positive(const char* name, long value) {
  if (value > 0) return {};
  return std::string(name) + " must be a positive integer, got " + std::to_string(value);
}

std::string check_at_most(const char* name, long value, long limit) {
  if (value <= limit) return {};
  return std::string(name) + " must be at most " + std::to_string(limit) + ", got " +
         std::to_string(value);
}

std::string check_divisible(const char* name, long value, const char* divisor_name, long divisor) {
  if (divisor > 0 && value % divisor == 0) return {};
  return std::string(name) + " (" + std::to_string(value) + ") must be divisible by " +
         divisor_name + " (" + std::to_string(divisor) + ")";
}

std::string check_length(const char* name, std::size_t got, std::size_t expected,
                         const std::string& shape) {
  if (got == expected) return {};
  return std::string(name) + " must have " + std::to_string(expected) + " elements " + shape +
         ", got " + std::to_string(got);
}

std::string check_finite(const char* name, const float* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = data[i];
    if (std::isnan(x)) return std::string(name) + " contains NaN at index " + std::to_string(i);
    if (std::isinf(x))
      return std::string(name) + " contains " + (x > 0 ? "+" : "-") + "Infinity at index " +
             std::to_string(i);
    if (std::fabs(x) > kMaxInputMagnitude) {
      std::ostringstream out;
      out << name << '[' << i << "] = " << x << " is too large: values must lie in [-1e6, 1e6]";
      return out.str();
    }
  }
  return {};
}

std::string check_token_ids(const char* name, const std::int32_t* ids, std::size_t n, long vocab) {
  for (std::size_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      return std::string(name) + '[' + std::to_string(i) + "] = " + std::to_string(ids[i]) +
             " is out of range: token ids must be in [0, " + std::to_string(vocab) + ")";
  return {};
}

std::string check_unit_interval(const char* name, const float* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!(data[i] >= 0.0f && data[i] <= 1.0f)) {
      std::ostringstream out;
      out << name << '[' << i << "] = " << data[i] << " must lie in [0, 1]";
      return out.str();
    }
  return {};
}

std::string megabytes(double bytes) {
  const double mb = bytes / (1 << 20);
  char text[32];
  if (mb >= 1024) std::snprintf(text, sizeof text, "%.1f GB", mb / 1024);
  else std::snprintf(text, sizeof text, "%.0f MB", mb);
  return text;
}

std::string first_error(std::initializer_list<std::string> messages) {
  for (const std::string& m : messages)
    if (!m.empty()) return m;
  return {};
}

std::string check_int32_element(const char* name, std::size_t index, double value) {
  if (value == std::floor(value) && value >= -2147483648.0 && value <= 2147483647.0) return {};
  std::ostringstream text;
  text.precision(17);
  text << name << "[" << index << "] must be a whole number in [-2147483648, 2147483647], got " << value;
  return text.str();
}

}  // namespace attnlab
