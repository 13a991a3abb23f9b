// Input checks for everything that crosses from JS (or the CLI) into the core. Each returns "" when
// the input is fine, else a message that names the argument and says what was expected; the binding
// edge turns a message into a JS exception before any state is touched, so the instance and the
// user's models stay as they were.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace attnlab {

// Inputs beyond this magnitude are refused: their scores overflow float32 in the softmax.
constexpr float kMaxInputMagnitude = 1e6f;

// "[B=2, T=3, E=8]"
std::string shape_text(std::initializer_list<std::pair<const char*, long>> dims);

std::string check_positive(const char* name, long value);
std::string check_at_most(const char* name, long value, long limit);
std::string check_divisible(const char* name, long value, const char* divisor_name, long divisor);
std::string check_length(const char* name, std::size_t got, std::size_t expected,
                         const std::string& shape);
// NaN, infinity and |x| > kMaxInputMagnitude, with the first offending index.
std::string check_finite(const char* name, const float* data, std::size_t n);
std::string check_token_ids(const char* name, const std::int32_t* ids, std::size_t n, long vocab);
// An element of a user's integer array, read as a double so that 3.5, 1e10 or 2^32 + 5 are named,
// never truncated or wrapped: "" or "<name>[i] must be a whole number in [-2147483648, 2147483647], got x".
std::string check_int32_element(const char* name, std::size_t index, double value);
// Probabilities for binary cross-entropy: [0, 1]; targets likewise.
std::string check_unit_interval(const char* name, const float* data, std::size_t n);

// A memory estimate as a message says it: "612 MB", "21.3 GB". A double: on WASM std::size_t is 32
// bits, so a bound of settings far out of range (22 GB) would wrap to a small number and pass.
std::string megabytes(double bytes);

// The first non-empty message, so checks can be chained: first_error({a, b, c}).
std::string first_error(std::initializer_list<std::string> messages);

}  // namespace attnlab
