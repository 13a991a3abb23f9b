// Declared records: a struct's fields named once, in one function template, and read from or written to
// a Json object (json.h) by that same list. A record is declared as
//
//   template <class Fields, class Config>     // Config: AlignmentConfig or const AlignmentConfig
//   void alignment_config_fields(Fields& f, Config& c) {
//     f("task", c.task, kAlignmentTasks);     // a choice: written as its name
//     f("seed", c.seed);
//     f("dModel", c.d_model);
//     ...
//   }
//
// and used through to_record(c, declare) / from_record(json, c, declare) below, with
// declare = [](auto& f, auto& c) { alignment_config_fields(f, c); }. Names are the JS names of docs/api.md.
//
// Reading checks each field that is present (a missing one keeps the struct's default) and stops at the
// first problem, with the messages the binding has always given:
//   int            "<name> must be an integer", "<name> is too large" (beyond 1e6)
//   std::uint32_t  "<name> must be an integer in [0, 4294967295]" (seeds)
//   double         "<name> must be a finite number"
//   bool           "<name> must be true or false"
//   std::string    "<name> must be a string"
//   choice         "<name> must be a, b or c" (not a string), "<name> must be a, b or c, got 'x'"
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "json.h"

namespace attnlab {

// The names of an enum's values, for a choice field.
template <typename Enum>
using Choices = std::vector<std::pair<Enum, const char*>>;

// A whole number that a file spells under its own name (a checkpoint's config.json: "hidden_size" for
// the record's "hiddenSize"), with the range it must be in; optional fields keep the struct's value.
// core/models/config_json.h reads such fields from the file; the record's writer and reader below use
// the record's name.
struct FileInt {
  const char* file_name;
  long lo, hi;
  bool required = true;
};

// Writes each field into a Json object, in declaration order.
class RecordWriter {
 public:
  Json out = Json::object();

  void operator()(const char* name, int v) { out.set(name, Json(v)); }
  void operator()(const char* name, int v, const FileInt&) { out.set(name, Json(v)); }
  void operator()(const char* name, std::uint32_t v) { out.set(name, Json(v)); }
  void operator()(const char* name, double v) { out.set(name, Json(v)); }
  void operator()(const char* name, float v) { out.set(name, Json(v)); }
  void operator()(const char* name, bool v) { out.set(name, Json(v)); }
  void operator()(const char* name, const std::string& v) { out.set(name, Json(v)); }
  void operator()(const char* name, const std::vector<float>& v) { out.set(name, Json(v)); }
  void operator()(const char* name, const std::vector<std::int32_t>& v) { out.set(name, Json(v)); }
  void operator()(const char* name, const std::vector<std::uint8_t>& v) { out.set(name, Json(v)); }
  void operator()(const char* name, const std::vector<double>& v) {  // a plain JS array
    Json a = Json::array();
    for (double x : v) a.push(Json(x));
    out.set(name, std::move(a));
  }
  template <typename Enum>
  void operator()(const char* name, Enum v, const Choices<Enum>& choices) {
    for (const auto& [value, text] : choices)
      if (value == v) out.set(name, Json(text));
  }
};

// Reads the fields present in a Json object, checking each; `error` holds the first problem.
class RecordReader {
 public:
  explicit RecordReader(const Json& in) : in_(in) {}
  std::string error;

  void operator()(const char* name, int& v) {
    const Json* j = field(name);
    if (!j) return;
    if (!j->is_number() || j->as_number() != std::floor(j->as_number())) {
      error = std::string(name) + " must be an integer";
    } else if (std::fabs(j->as_number()) > 1e6) {
      error = std::string(name) + " is too large";
    } else {
      v = int(j->as_number());
    }
  }
  void operator()(const char* name, int& v, const FileInt&) { (*this)(name, v); }
  void operator()(const char* name, std::uint32_t& v) {
    const Json* j = field(name);
    if (!j) return;
    const double x = j->is_number() ? j->as_number() : -1.0;
    if (x != std::floor(x) || x < 0 || x > 4294967295.0)
      error = std::string(name) + " must be an integer in [0, 4294967295]";
    else
      v = std::uint32_t(x);
  }
  void operator()(const char* name, double& v) {
    const Json* j = field(name);
    if (!j) return;
    if (!j->is_number() || !std::isfinite(j->as_number())) error = std::string(name) + " must be a finite number";
    else v = j->as_number();
  }
  void operator()(const char* name, bool& v) {
    const Json* j = field(name);
    if (!j) return;
    if (!j->is_bool()) error = std::string(name) + " must be true or false";
    else v = j->as_bool();
  }
  void operator()(const char* name, std::string& v) {
    const Json* j = field(name);
    if (!j) return;
    if (!j->is_string()) error = std::string(name) + " must be a string";
    else v = j->as_string();
  }
  template <typename Enum>
  void operator()(const char* name, Enum& v, const Choices<Enum>& choices) {
    const Json* j = field(name);
    if (!j) return;
    std::string names;
    for (std::size_t i = 0; i < choices.size(); ++i)
      names += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choices[i].second);
    const std::string expected = std::string(name) + " must be " + names;
    if (!j->is_string()) {
      error = expected;
      return;
    }
    for (const auto& [value, text] : choices)
      if (j->as_string() == text) {
        v = value;
        return;
      }
    error = expected + ", got '" + j->as_string() + "'";
  }

 private:
  // The field to read: none once a problem was found, or when it is absent.
  const Json* field(const char* name) const { return error.empty() ? in_.find(name) : nullptr; }
  const Json& in_;
};

// A declared record as a Json object.
template <typename T, typename Declare>
Json to_record(const T& value, Declare declare) {
  RecordWriter w;
  declare(w, value);
  return std::move(w.out);
}

// "" and the fields of `in` (a Json object; null reads as {}) read into `value`, or the first problem.
// `value` keeps its defaults for absent fields.
template <typename T, typename Declare>
std::string from_record(const Json& in, T& value, Declare declare) {
  if (in.is_null()) return {};
  if (!in.is_object()) return "the trainer config must be an object";
  RecordReader r(in);
  declare(r, value);
  return r.error;
}

// ---- array inputs (a JS Array or typed array arrives as a JSON array of numbers)
// "" or "<name> must be a Float32Array (or an array of numbers), got <type>" (nullptr: absent).
std::string check_array_record(const char* name, const Json* v);
// Whole numbers in int32's range into `out`: "" or
// "<name>[i] must be a whole number in [-2147483648, 2147483647], got x" (and `out` empty).
std::string read_int32s(const char* name, const Json& array, std::vector<std::int32_t>& out);
// The numbers as float32 (an item that is not a number reads as NaN).
std::vector<float> read_floats(const Json& array);

}  // namespace attnlab
