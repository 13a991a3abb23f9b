// The one codec through which trainer configs and results cross between C++ and JS (and the native
// tests): a JSON value, a reader and a writer. Records are declared once per struct (record.h) and
// converted to and from this value; the WASM binding moves them as JSON text.
//
// Two extensions, both ordinary JSON objects that the JS side (wasm_bindings/attnlab.js) encodes and
// decodes:
//   {"$number": "NaN" | "Infinity" | "-Infinity"}  a number JSON cannot spell;
//   {"$type": "<name>"}  a JS value JSON has no form for (a function, a bigint, a Map...): its typeof, or
//                        its constructor's name for an object, so that messages can name what came;
//   {"$blob": i}  (writer only) typed array i of the value, which the binding hands over as a typed
//                 array copy beside the text instead of spelling its numbers.
// The reader accepts RFC 8259 JSON (nesting up to 64 deep) and refuses anything else with a message.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlab {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object, floats, ints, bytes, js_type };

  Json() = default;
  Json(bool b) : kind_(Kind::boolean), number_(b ? 1.0 : 0.0) {}
  Json(int x) : kind_(Kind::number), number_(x) {}
  Json(std::uint32_t x) : kind_(Kind::number), number_(x) {}
  Json(double x) : kind_(Kind::number), number_(x) {}
  Json(float x) : kind_(Kind::number), number_(x) {}
  Json(const char* s) : kind_(Kind::string), string_(s) {}
  Json(std::string s) : kind_(Kind::string), string_(std::move(s)) {}
  // Typed arrays: written as blobs (or, without a blob list, as plain arrays).
  Json(std::vector<float> v) : kind_(Kind::floats), floats_(std::move(v)) {}
  Json(std::vector<std::int32_t> v) : kind_(Kind::ints), ints_(std::move(v)) {}
  Json(std::vector<std::uint8_t> v) : kind_(Kind::bytes), bytes_(std::move(v)) {}
  static Json array() { Json j; j.kind_ = Kind::array; return j; }
  static Json object() { Json j; j.kind_ = Kind::object; return j; }
  static Json js_type(std::string name) { Json j; j.kind_ = Kind::js_type; j.string_ = std::move(name); return j; }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_number() const { return kind_ == Kind::number; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_object() const { return kind_ == Kind::object; }

  bool as_bool() const { return number_ != 0.0; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }  // also the name of a js_type
  const std::vector<float>& floats() const { return floats_; }
  const std::vector<std::int32_t>& ints() const { return ints_; }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

  // Arrays
  const std::vector<Json>& items() const { return items_; }
  Json& push(Json value);
  // Objects, fields in insertion order
  const std::vector<std::string>& keys() const { return keys_; }
  const std::vector<Json>& values() const { return items_; }
  const Json* find(const std::string& key) const;  // nullptr when absent
  Json& set(const std::string& key, Json value);   // replaces a field of that name

  // What JS's typeof would say of the value this came from ("undefined" for nullptr: a missing field).
  static std::string js_typeof(const Json* v);
  // typeof, or for an object its constructor's name ("Object", "Array", "Map"): raw_api.cpp's type_name.
  static std::string js_type_name(const Json* v);

  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  Kind kind_ = Kind::null;
  double number_ = 0.0;
  std::string string_;
  std::vector<Json> items_;  // array items, or object values
  std::vector<std::string> keys_;
  // key -> its place, once an object has more than kIndexedFrom keys: a walk of the keys made reading an
  // object of n keys n^2 / 2 comparisons (a shard index naming 40,000 tensors took 7.3 s; issue 48).
  static constexpr std::size_t kIndexedFrom = 16;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<float> floats_;
  std::vector<std::int32_t> ints_;
  std::vector<std::uint8_t> bytes_;
};

// "" and `out`, or what is wrong with the text (and `out` is null).
std::string parse_json(const std::string& text, Json& out);
// The text. Typed arrays go to `blobs` (as {"$blob": i}, i their index there) when it is given, else
// they are written as arrays of numbers. Numbers keep their bits: integers as integers, others with 17
// significant digits; NaN and infinities as {"$number": ...}.
std::string write_json(const Json& value, std::vector<const Json*>* blobs = nullptr);

}  // namespace attnlab
