#include "safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "utf8.h"

namespace attnlab {

namespace {

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "U8" || dtype == "BOOL" || dtype == "I8") return 1;
  return 0;
}

// ---- text: UTF-8 and JSON strings

void append_utf8(std::string& s, std::uint32_t cp) {
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
}

// s as a JSON string literal (what the writer needs; the reader's messages shorten it with `shown`).
std::string json_quote(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\b') out += "\\b";
    else if (c == '\f') out += "\\f";
    else if (c < 0x20) out += std::string("\\u00") + hex[c >> 4] + hex[c & 15];
    else out += char(c);
  }
  return out + "\"";
}

// A name as messages show it, like web/io/safetensors.js's show(): quoted, escaped, at most ~60
// bytes (a hostile name can be megabytes), cut on a UTF-8 character boundary.
std::string shown(const std::string& s) {
  std::string q = json_quote(s);
  if (q.size() <= 60) return q;
  std::size_t cut = 57;
  while (cut > 0 && (std::uint8_t(q[cut]) & 0xC0) == 0x80) --cut;
  return q.substr(0, cut) + "...";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// ---- the header: a JSON reader for its subset (objects of strings, string maps, integer arrays)

struct HeaderEntry {
  std::string name;
  SafeTensor tensor;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

class HeaderParser {
 public:
  HeaderParser(const char* text, std::size_t size) : p_(text), end_(text + size) {}

  // Entries in the header's order (messages then name the first bad tensor as the JS parser does).
  std::string parse(std::vector<HeaderEntry>& entries, std::map<std::string, std::string>& metadata) {
    skip_space();
    if (!consume('{')) return fail("expected '{' at the start of the header");
    std::set<std::string> seen;
    if (!expect('}')) {
      for (;;) {
        std::string name;
        if (!read_string(name)) return fail("expected a tensor name");
        if (!expect(':')) return fail("expected ':' after " + shown(name));
        if (!seen.insert(name).second) {
          return fail(name == "__metadata__" ? "duplicate __metadata__" : "duplicate tensor " + shown(name));
        }
        if (name == "__metadata__") {
          std::string error = parse_metadata(metadata);
          if (!error.empty()) return error;
        } else {
          entries.emplace_back();
          entries.back().name = name;
          std::string error = parse_tensor(entries.back());
          if (!error.empty()) return error;
        }
        if (expect('}')) break;
        if (!consume(',')) return fail("expected ',' or '}' after " + shown(name));
      }
    }
    skip_space();  // the format pads the header with spaces
    if (p_ != end_) return fail("unexpected text after the JSON object");
    return {};
  }

 private:
  std::string parse_metadata(std::map<std::string, std::string>& metadata) {
    const std::string what = "__metadata__ must map strings to strings";
    if (!expect('{')) return fail(what);
    if (expect('}')) return {};
    for (;;) {
      std::string key, value;
      if (!read_string(key) || !expect(':')) return fail(what);
      if (!read_string(value)) return fail(what + ": " + shown(key) + " is not a string");
      if (!metadata.emplace(key, value).second) return fail("duplicate key " + shown(key) + " in __metadata__");
      if (expect('}')) return {};
      if (!consume(',')) return fail("expected ',' or '}' in __metadata__");
    }
  }

  std::string parse_tensor(HeaderEntry& entry) {
    const std::string tensor = "tensor " + shown(entry.name);
    if (!expect('{')) return tensor + " must be an object with dtype, shape and data_offsets";
    bool has_dtype = false, has_shape = false, has_offsets = false;
    if (!expect('}')) {
      for (;;) {
        std::string field;
        if (!read_string(field) || !expect(':')) return fail("bad field in " + tensor);
        bool* has = field == "dtype" ? &has_dtype : field == "shape" ? &has_shape
                  : field == "data_offsets" ? &has_offsets : nullptr;
        if (!has) return tensor + " has an unknown field " + shown(field);
        if (*has) return tensor + " has a duplicate field " + shown(field);
        *has = true;
        if (field == "dtype") {
          if (!read_string(entry.tensor.dtype)) return tensor + " has unsupported dtype: expected a string";
        } else if (field == "shape") {
          std::vector<std::uint64_t> dims;
          if (!read_count_array(dims)) return tensor + " has a malformed shape: expected [non-negative integers]";
          for (std::uint64_t d : dims) {
            // The public shape type is int64; a dim past it has no valid use (a 0 dim aside).
            if (d > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
              return tensor + " has a malformed shape: expected [non-negative integers]";
            entry.tensor.shape.push_back(std::int64_t(d));
          }
        } else {
          std::vector<std::uint64_t> offsets;
          if (!read_count_array(offsets) || offsets.size() != 2 || offsets[0] > offsets[1])
            return tensor + " has malformed data_offsets: expected [begin, end] with 0 <= begin <= end";
          entry.begin = offsets[0];
          entry.end = offsets[1];
        }
        if (expect('}')) break;
        if (!consume(',')) return fail("expected ',' or '}' in " + tensor);
      }
    }
    if (!has_dtype) return tensor + " has no \"dtype\"";
    if (!has_shape) return tensor + " has no \"shape\"";
    if (!has_offsets) return tensor + " has no \"data_offsets\"";
    return {};
  }

  // [n, n, ...] of JSON integers in [0, 2^64): no sign, fraction, exponent or leading zero.
  bool read_count_array(std::vector<std::uint64_t>& values) {
    values.clear();
    if (!expect('[')) return false;
    if (expect(']')) return true;
    for (;;) {
      skip_space();
      if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
      if (*p_ == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') return false;
      std::uint64_t v = 0;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        const std::uint64_t digit = std::uint64_t(*p_++ - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
        v = v * 10 + digit;
      }
      if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
      values.push_back(v);
      if (expect(']')) return true;
      if (!consume(',')) return false;
    }
  }

  bool read_hex4(std::uint32_t& v) {
    if (end_ - p_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return false;
      v = (v << 4) | std::uint32_t(d);
    }
    return true;
  }

  // A JSON string: every escape decoded (\uXXXX to UTF-8, surrogate pairs joined, a lone surrogate
  // refused as serde_json does), raw control characters refused. The text is known to be UTF-8.
  bool read_string(std::string& s) {
    skip_space();
    if (!consume('"')) return false;
    s.clear();
    while (p_ < end_ && *p_ != '"') {
      const char c = *p_++;
      if (std::uint8_t(c) < 0x20) return false;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (p_ == end_) return false;
      const char e = *p_++;
      switch (e) {
        case '"': case '\\': case '/': s += e; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          std::uint32_t cp;
          if (!read_hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(s, cp);
          break;
        }
        default: return false;
      }
    }
    return consume('"');
  }

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool consume(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool expect(char c) {
    skip_space();
    return consume(c);
  }
  std::string fail(const std::string& what) { return "malformed safetensors header: " + what; }

  const char* p_;
  const char* end_;
};

// ---- the checks on each tensor, then on the data section as a whole

// dtype known, byte size without overflow, offsets inside the data section and as long as the shape needs.
std::string check_tensor(const HeaderEntry& e, std::uint64_t data_size) {
  const std::string tensor = "tensor " + shown(e.name);
  const std::size_t element = dtype_size(e.tensor.dtype);
  if (element == 0) return tensor + " has unsupported dtype " + shown(e.tensor.dtype);
  // The reference's order: numel with checked_mul, then times the dtype size: [2^40, 2^40, 0]
  // overflows before its 0 is reached, there and here.
  std::uint64_t bytes = 1;
  for (std::int64_t d : e.tensor.shape) {
    if (__builtin_mul_overflow(bytes, std::uint64_t(d), &bytes))
      return tensor + " has shape " + shape_text(e.tensor.shape) + " whose byte size overflows 64 bits";
  }
  if (__builtin_mul_overflow(bytes, std::uint64_t(element), &bytes))
    return tensor + " has shape " + shape_text(e.tensor.shape) + " whose byte size overflows 64 bits";
  if (e.end > data_size)
    return tensor + " data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
           "] lie outside the " + std::to_string(data_size) + "-byte data section";
  if (e.end - e.begin != bytes)
    return tensor + " has " + std::to_string(e.end - e.begin) + " bytes but its shape and dtype need " +
           std::to_string(bytes);
  return {};
}

// Sorted by offsets (the reference sorts so), the tensors must tile [0, data_size) exactly.
std::string check_tiling(const std::vector<HeaderEntry>& entries, std::uint64_t data_size) {
  std::vector<const HeaderEntry*> sorted;
  for (const auto& e : entries) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const HeaderEntry* a, const HeaderEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  const HeaderEntry* previous = nullptr;
  for (const HeaderEntry* e : sorted) {
    if (e->begin > at)
      return "the data section has a gap: bytes [" + std::to_string(at) + ", " + std::to_string(e->begin) +
             ") belong to no tensor (before tensor " + shown(e->name) + ")";
    if (e->begin < at)
      return "tensor " + shown(e->name) + " data_offsets [" + std::to_string(e->begin) + ", " +
             std::to_string(e->end) + "] overlap tensor " + shown(previous->name) + " [" +
             std::to_string(previous->begin) + ", " + std::to_string(previous->end) + "]";
    at = e->end;
    previous = e;
  }
  if (at != data_size)
    return "the data section has " + std::to_string(data_size - at) + " bytes after the last tensor (from " +
           std::to_string(at) + " to " + std::to_string(data_size) + ")";
  return {};
}

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

}  // namespace

// IEEE half -> float: exponent 0 is zero or subnormal (m * 2^-24), 31 is infinity or NaN.
static float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0) {
    const float magnitude = float(mantissa) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t bits = exponent == 31 ? sign | 0x7F800000u | (mantissa << 13)
                                            : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// bfloat16 is the top half of a float32.
static float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}


bool decode_floats(const std::string& dtype, const std::uint8_t* bytes, std::size_t n, float* out) {
  if (dtype == "F32") {
    std::memcpy(out, bytes, n * 4);
  } else if (dtype == "F16" || dtype == "BF16") {
    const bool half = dtype == "F16";
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t v = std::uint16_t(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      out[i] = half ? half_to_float(v) : bf16_to_float(v);
    }
  } else if (dtype == "F64") {
    for (std::size_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, bytes + 8 * i, 8);
      out[i] = float(d);
    }
  } else {
    return false;
  }
  return true;
}

std::int64_t SafeTensorsEntry::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;  // checked at parse: the byte size fits 64 bits
  return n;
}

const SafeTensorsEntry* SafeTensorsIndex::find(const std::string& name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::string safetensors_header_length(const std::uint8_t* first8, std::uint64_t file_size, std::uint64_t& header_size) {
  header_size = 0;
  if (file_size < 8) return "not a safetensors file: " + std::to_string(file_size) + " bytes, need at least 8";
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | first8[i];
  // The cap first, as the reference does, so no later sum can wrap (header_size + 8 < 2^27 here).
  if (header_size > kSafetensorsMaxHeaderBytes)
    return "not a safetensors file: header length " + std::to_string(header_size) + " exceeds the " +
           std::to_string(kSafetensorsMaxHeaderBytes) + "-byte limit";
  if (header_size > file_size - 8)
    return "not a safetensors file: header length " + std::to_string(header_size) +
           " exceeds the file size " + std::to_string(file_size);
  return {};
}

std::string parse_safetensors_index(const std::uint8_t* header, std::uint64_t header_size, std::uint64_t file_size,
                                    SafeTensorsIndex& out) {
  out = SafeTensorsIndex{};
  if (file_size < 8 || header_size > file_size - 8) return "the header does not fit the file";
  if (!is_utf8(header, std::size_t(header_size))) return "malformed safetensors header: not UTF-8";
  std::vector<HeaderEntry> entries;
  SafeTensorsIndex index;
  HeaderParser parser(reinterpret_cast<const char*>(header), std::size_t(header_size));
  std::string error = parser.parse(entries, index.metadata);
  if (!error.empty()) return error;
  const std::uint64_t body_size = file_size - 8 - header_size;
  for (const auto& e : entries) {
    error = check_tensor(e, body_size);
    if (!error.empty()) return error;
  }
  error = check_tiling(entries, body_size);
  if (!error.empty()) return error;
  index.data_start = 8 + header_size;
  for (auto& e : entries)
    index.entries.push_back({std::move(e.name), std::move(e.tensor.dtype), std::move(e.tensor.shape),
                             index.data_start + e.begin, index.data_start + e.end});
  out = std::move(index);
  return {};
}

std::int64_t SafeTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

// Both readers count elements from the bytes, not the shape: a hand-made tensor whose shape and bytes
// disagree reads what is there instead of past it.
std::vector<float> SafeTensor::to_float() const {
  const std::size_t element = dtype_size(dtype);
  const std::size_t n = element ? bytes.size() / element : 0;
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == "F32") std::memcpy(&out[i], &bytes[4 * i], 4);
    else if (dtype == "F16" || dtype == "BF16") decode_floats(dtype, &bytes[2 * i], 1, &out[i]);
    else if (dtype == "F64") { double d; std::memcpy(&d, &bytes[8 * i], 8); out[i] = float(d); }
    else if (dtype == "I32") { std::int32_t v; std::memcpy(&v, &bytes[4 * i], 4); out[i] = float(v); }
    else if (dtype == "I64") { std::int64_t v; std::memcpy(&v, &bytes[8 * i], 8); out[i] = float(v); }
    else if (dtype == "I8") out[i] = float(std::int8_t(bytes[i]));
    else out[i] = float(bytes[i]);
  }
  return out;
}

std::vector<std::int32_t> SafeTensor::to_int32() const {
  const std::size_t element = dtype_size(dtype);
  const std::size_t n = element ? bytes.size() / element : 0;
  std::vector<std::int32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == "I32") std::memcpy(&out[i], &bytes[4 * i], 4);
    else if (dtype == "I64") { std::int64_t v; std::memcpy(&v, &bytes[8 * i], 8); out[i] = std::int32_t(v); }
    else if (dtype == "I8") out[i] = std::int8_t(bytes[i]);
    else out[i] = std::int32_t(bytes[i]);
  }
  return out;
}

std::string parse_safetensors(const std::uint8_t* data, std::size_t size, SafeTensorsFile& out) {
  out = SafeTensorsFile{};
  std::uint64_t header_size = 0;
  std::string error = safetensors_header_length(data, size, header_size);
  if (!error.empty()) return error;
  SafeTensorsIndex index;
  error = parse_safetensors_index(data + 8, header_size, size, index);
  if (!error.empty()) return error;
  SafeTensorsFile file;
  file.metadata = std::move(index.metadata);
  for (auto& e : index.entries) {
    SafeTensor t{std::move(e.dtype), std::move(e.shape), {}};
    t.bytes.assign(data + e.begin, data + e.end);
    file.tensors.emplace(std::move(e.name), std::move(t));
  }
  out = std::move(file);
  return {};
}

std::vector<std::uint8_t> write_safetensors(const std::vector<NamedFloatTensor>& tensors,
                                            const std::map<std::string, std::string>& metadata) {
  std::ostringstream header;
  header << '{';
  if (!metadata.empty()) {
    header << "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header << (first ? "" : ",") << json_quote(k) << ':' << json_quote(v);
      first = false;
    }
    header << "},";
  }
  std::size_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::int64_t n = 1;
    header << (i ? "," : "") << json_quote(tensors[i].name) << ":{\"dtype\":\"F32\",\"shape\":[";
    for (std::size_t d = 0; d < tensors[i].shape.size(); ++d) {
      header << (d ? "," : "") << tensors[i].shape[d];
      n *= tensors[i].shape[d];
    }
    header << "],\"data_offsets\":[" << offset << ',' << offset + std::size_t(n) * 4 << "]}";
    offset += std::size_t(n) * 4;
  }
  header << '}';
  std::string text = header.str();
  if (!metadata.empty() && tensors.empty()) text.erase(text.size() - 2, 1);  // the comma before '}'
  while ((8 + text.size()) % 8 != 0) text += ' ';  // the format pads the header to 8 bytes
  std::vector<std::uint8_t> out;
  put_u64(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
  for (const auto& t : tensors) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(t.data);
    std::int64_t n = 1;
    for (std::int64_t d : t.shape) n *= d;
    out.insert(out.end(), bytes, bytes + n * 4);
  }
  return out;
}

}  // namespace attnlab
