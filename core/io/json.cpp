#include "json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace attnlab {

// ---- the value

Json& Json::push(Json value) {
  items_.push_back(std::move(value));
  return items_.back();
}

const Json* Json::find(const std::string& key) const {
  if (!index_.empty()) {
    const auto at = index_.find(key);
    return at == index_.end() ? nullptr : &items_[at->second];
  }
  for (std::size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key) return &items_[i];
  return nullptr;
}

Json& Json::set(const std::string& key, Json value) {
  if (!index_.empty()) {
    const auto [at, added] = index_.emplace(key, keys_.size());
    if (!added) return items_[at->second] = std::move(value);
  } else {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] == key) return items_[i] = std::move(value);
  }
  keys_.push_back(key);
  items_.push_back(std::move(value));
  if (index_.empty() && keys_.size() > kIndexedFrom)
    for (std::size_t i = 0; i < keys_.size(); ++i) index_.emplace(keys_[i], i);
  return items_.back();
}

std::string Json::js_typeof(const Json* v) {
  if (!v) return "undefined";
  switch (v->kind_) {
    case Kind::boolean: return "boolean";
    case Kind::number: return "number";
    case Kind::string: return "string";
    case Kind::js_type:  // a typeof ("bigint", "function") or a constructor's name (an object)
      return !v->string_.empty() && v->string_[0] >= 'a' && v->string_[0] <= 'z' ? v->string_ : "object";
    default: return "object";  // null, arrays and objects, as in JS
  }
}

std::string Json::js_type_name(const Json* v) {
  if (v && v->kind_ == Kind::null) return "null";
  if (v && v->kind_ == Kind::js_type) return v->string_;
  if (v && (v->kind_ == Kind::array || v->kind_ == Kind::floats || v->kind_ == Kind::ints)) return "Array";
  if (v && v->kind_ == Kind::object) return "Object";
  return js_typeof(v);
}

bool Json::operator==(const Json& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::null: return true;
    case Kind::boolean: return as_bool() == o.as_bool();
    case Kind::number: return number_ == o.number_ || (std::isnan(number_) && std::isnan(o.number_));
    case Kind::string:
    case Kind::js_type: return string_ == o.string_;
    case Kind::array: return items_ == o.items_;
    case Kind::object: return keys_ == o.keys_ && items_ == o.items_;
    case Kind::floats: return floats_ == o.floats_;
    case Kind::ints: return ints_ == o.ints_;
    case Kind::bytes: return bytes_ == o.bytes_;
  }
  return false;
}

// ---- the reader

namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(const std::string& text) : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()) {}

  std::string read(Json& out) {
    skip_space();
    if (!value(out, 0)) return error_;
    skip_space();
    if (p_ != end_) return at("unexpected text after the JSON value");
    return {};
  }

 private:
  std::string at(const std::string& what) const {
    return "bad JSON at byte " + std::to_string(p_ - begin_) + ": " + what;
  }
  bool fail(const std::string& what) {
    error_ = at(what);
    return false;
  }
  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool literal(const char* word) {
    const char* q = p_;
    for (; *word; ++word, ++q)
      if (q == end_ || *q != *word) return false;
    p_ = q;
    return true;
  }

  bool value(Json& out, int depth) {
    if (depth >= kMaxDepth) return fail("nested more than 64 deep");
    if (p_ == end_) return fail("a value was expected");
    switch (*p_) {
      case '{': return object(out, depth);
      case '[': return array(out, depth);
      case '"': {
        std::string s;
        if (!string(s)) return false;
        out = Json(std::move(s));
        return true;
      }
      case 't': if (literal("true")) { out = Json(true); return true; } break;
      case 'f': if (literal("false")) { out = Json(false); return true; } break;
      case 'n': if (literal("null")) { out = Json(); return true; } break;
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return number(out);
    }
    return fail("a value was expected");
  }

  bool object(Json& out, int depth) {
    ++p_;  // {
    out = Json::object();
    skip_space();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      skip_space();
      std::string key;
      if (p_ == end_ || *p_ != '"') return fail("a field name was expected");
      if (!string(key)) return false;
      skip_space();
      if (p_ == end_ || *p_ != ':') return fail("':' was expected");
      ++p_;
      skip_space();
      Json v;
      if (!value(v, depth + 1)) return false;
      out.set(key, std::move(v));
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        break;
      }
      return fail("',' or '}' was expected");
    }
    // The two markers of json.h: one field each.
    if (out.keys().size() == 1 && out.values()[0].is_string()) {
      const std::string& s = out.values()[0].as_string();
      if (out.keys()[0] == "$number") {
        const double inf = std::numeric_limits<double>::infinity();
        if (s == "NaN") out = Json(std::numeric_limits<double>::quiet_NaN());
        else if (s == "Infinity") out = Json(inf);
        else if (s == "-Infinity") out = Json(-inf);
      } else if (out.keys()[0] == "$type") {
        out = Json::js_type(s);
      }
    }
    return true;
  }

  bool array(Json& out, int depth) {
    ++p_;  // [
    out = Json::array();
    skip_space();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    for (;;) {
      skip_space();
      Json v;
      if (!value(v, depth + 1)) return false;
      out.push(std::move(v));
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        return true;
      }
      return fail("',' or ']' was expected");
    }
  }

  bool number(Json& out) {
    const char* start = p_;
    if (*p_ == '-') ++p_;
    if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) return fail("a digit was expected");
    if (*p_ == '0') ++p_;
    else
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) return fail("a digit was expected after '.'");
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) return fail("a digit was expected in the exponent");
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    // strtod on a copy: the text need not end after the number.
    out = Json(std::strtod(std::string(start, p_).c_str(), nullptr));
    return true;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool hex4(unsigned& out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      if (p_ == end_ || hex(*p_) < 0) return fail("four hex digits were expected after \\u");
      out = out * 16 + unsigned(hex(*p_));
    }
    return true;
  }
  static void utf8(unsigned c, std::string& s) {
    if (c < 0x80) {
      s += char(c);
    } else if (c < 0x800) {
      s += char(0xc0 | (c >> 6));
      s += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      s += char(0xe0 | (c >> 12));
      s += char(0x80 | ((c >> 6) & 0x3f));
      s += char(0x80 | (c & 0x3f));
    } else {
      s += char(0xf0 | (c >> 18));
      s += char(0x80 | ((c >> 12) & 0x3f));
      s += char(0x80 | ((c >> 6) & 0x3f));
      s += char(0x80 | (c & 0x3f));
    }
  }

  // A string: escapes decoded (\uXXXX to UTF-8; a lone surrogate becomes U+FFFD, as JS's TextEncoder
  // would write it), raw control characters refused. Bytes are taken as they come (JS sends UTF-8).
  bool string(std::string& s) {
    ++p_;  // "
    for (;;) {
      if (p_ == end_) return fail("the string does not end");
      const char c = *p_++;
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character inside a string");
      if (c != '\\') {
        s += c;
        continue;
      }
      if (p_ == end_) return fail("the string does not end");
      const char e = *p_++;
      switch (e) {
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case '/': s += '/'; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          unsigned u = 0;
          if (!hex4(u)) return false;
          if (u >= 0xd800 && u < 0xdc00 && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
            const char* back = p_;
            p_ += 2;
            unsigned low = 0;
            if (!hex4(low)) return false;
            if (low >= 0xdc00 && low < 0xe000) {
              utf8(0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00), s);
              break;
            }
            p_ = back;  // not a pair: the next escape stands alone
          }
          utf8(u >= 0xd800 && u < 0xe000 ? 0xfffd : u, s);
          break;
        }
        default: return fail("an unknown escape in a string");
      }
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  std::string error_;
};

void quote(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void number(double x, std::string& out) {
  if (std::isnan(x)) {
    out += "{\"$number\":\"NaN\"}";
  } else if (std::isinf(x)) {
    out += x > 0 ? "{\"$number\":\"Infinity\"}" : "{\"$number\":\"-Infinity\"}";
  } else {
    char buf[32];
    // Whole numbers below 2^53 as integers; anything else with the 17 digits that keep a double's bits.
    if (x == std::floor(x) && std::fabs(x) < 9007199254740992.0) std::snprintf(buf, sizeof buf, "%.0f", x);
    else std::snprintf(buf, sizeof buf, "%.17g", x);
    out += buf;
  }
}

template <typename T>
void numbers(const std::vector<T>& v, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    number(double(v[i]), out);
  }
  out += ']';
}

void write(const Json& v, std::vector<const Json*>* blobs, std::string& out) {
  switch (v.kind()) {
    case Json::Kind::null: out += "null"; break;
    case Json::Kind::boolean: out += v.as_bool() ? "true" : "false"; break;
    case Json::Kind::number: number(v.as_number(), out); break;
    case Json::Kind::string: quote(v.as_string(), out); break;
    case Json::Kind::js_type:
      out += "{\"$type\":";
      quote(v.as_string(), out);
      out += '}';
      break;
    case Json::Kind::array:
      out += '[';
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i) out += ',';
        write(v.items()[i], blobs, out);
      }
      out += ']';
      break;
    case Json::Kind::object:
      out += '{';
      for (std::size_t i = 0; i < v.keys().size(); ++i) {
        if (i) out += ',';
        quote(v.keys()[i], out);
        out += ':';
        write(v.values()[i], blobs, out);
      }
      out += '}';
      break;
    case Json::Kind::floats:
    case Json::Kind::ints:
    case Json::Kind::bytes:
      if (blobs) {
        out += "{\"$blob\":" + std::to_string(blobs->size()) + "}";
        blobs->push_back(&v);
      } else if (v.kind() == Json::Kind::floats) {
        numbers(v.floats(), out);
      } else if (v.kind() == Json::Kind::ints) {
        numbers(v.ints(), out);
      } else {
        numbers(v.bytes(), out);
      }
      break;
  }
}

}  // namespace

std::string parse_json(const std::string& text, Json& out) {
  out = Json();
  std::string error = Reader(text).read(out);
  if (!error.empty()) out = Json();
  return error;
}

std::string write_json(const Json& value, std::vector<const Json*>* blobs) {
  std::string out;
  write(value, blobs, out);
  return out;
}

}  // namespace attnlab
