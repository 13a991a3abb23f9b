#include "safetensors.h"

#include <cstring>
#include <sstream>

namespace attnlab {

namespace {

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "U8" || dtype == "BOOL" || dtype == "I8") return 1;
  return 0;
}

// A small JSON reader for the header's subset: objects, arrays, strings, integers.
class HeaderParser {
 public:
  HeaderParser(const char* text, std::size_t size) : p_(text), end_(text + size) {}

  std::string parse(SafeTensorsFile& out, std::map<std::string, std::vector<std::int64_t>>& offsets) {
    skip_space();
    if (!consume('{')) return fail("expected '{' at the start of the header");
    skip_space();
    if (consume('}')) return {};
    for (;;) {
      std::string name;
      if (!read_string(name)) return fail("expected a tensor name");
      if (!expect(':')) return fail("expected ':' after \"" + name + "\"");
      if (name == "__metadata__") {
        if (!expect('{')) return fail("__metadata__ must be an object of strings");
        skip_space();
        if (!consume('}')) {
          for (;;) {
            std::string key, value;
            if (!read_string(key) || !expect(':') || !read_string(value))
              return fail("__metadata__ must map strings to strings");
            out.metadata[key] = value;
            if (expect('}')) break;
            if (!consume(',')) return fail("expected ',' or '}' in __metadata__");
          }
        }
      } else {
        std::string error = parse_tensor(name, out.tensors[name], offsets[name]);
        if (!error.empty()) return error;
      }
      if (expect('}')) return {};
      if (!consume(',')) return fail("expected ',' or '}' after \"" + name + "\"");
    }
  }

 private:
  std::string parse_tensor(const std::string& name, SafeTensor& tensor,
                           std::vector<std::int64_t>& offsets) {
    if (!expect('{')) return fail("tensor \"" + name + "\" must be an object");
    for (;;) {
      std::string field;
      if (!read_string(field) || !expect(':')) return fail("bad field in tensor \"" + name + "\"");
      if (field == "dtype") {
        if (!read_string(tensor.dtype)) return fail("dtype of \"" + name + "\" must be a string");
      } else if (field == "shape") {
        if (!read_int_array(tensor.shape)) return fail("shape of \"" + name + "\" must be [ints]");
      } else if (field == "data_offsets") {
        if (!read_int_array(offsets) || offsets.size() != 2)
          return fail("data_offsets of \"" + name + "\" must be [begin, end]");
      } else {
        return fail("unknown field \"" + field + "\" in tensor \"" + name + "\"");
      }
      if (expect('}')) return {};
      if (!consume(',')) return fail("expected ',' or '}' in tensor \"" + name + "\"");
    }
  }

  bool read_int_array(std::vector<std::int64_t>& values) {
    values.clear();
    if (!expect('[')) return false;
    if (expect(']')) return true;
    for (;;) {
      skip_space();
      std::int64_t v = 0;
      bool any = false;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        if (v > (std::int64_t(1) << 52)) return false;
        v = v * 10 + (*p_++ - '0');
        any = true;
      }
      if (!any) return false;
      values.push_back(v);
      if (expect(']')) return true;
      if (!consume(',')) return false;
    }
  }

  bool read_string(std::string& s) {
    skip_space();
    if (!consume('"')) return false;
    s.clear();
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\') {
        if (++p_ >= end_) return false;
        const char c = *p_;
        s += c == 'n' ? '\n' : c == 't' ? '\t' : c;  // \uXXXX is kept literally: names are ASCII
      } else {
        s += *p_;
      }
      ++p_;
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
  std::string fail(const std::string& what) {
    return "malformed safetensors header: " + what;
  }

  const char* p_;
  const char* end_;
};

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

}  // namespace

std::int64_t SafeTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::vector<float> SafeTensor::to_float() const {
  const std::size_t n = std::size_t(numel());
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == "F32") std::memcpy(&out[i], &bytes[4 * i], 4);
    else if (dtype == "F64") { double d; std::memcpy(&d, &bytes[8 * i], 8); out[i] = float(d); }
    else if (dtype == "I32") { std::int32_t v; std::memcpy(&v, &bytes[4 * i], 4); out[i] = float(v); }
    else if (dtype == "I64") { std::int64_t v; std::memcpy(&v, &bytes[8 * i], 8); out[i] = float(v); }
    else out[i] = float(bytes[i]);
  }
  return out;
}

std::vector<std::int32_t> SafeTensor::to_int32() const {
  const std::size_t n = std::size_t(numel());
  std::vector<std::int32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == "I32") std::memcpy(&out[i], &bytes[4 * i], 4);
    else if (dtype == "I64") { std::int64_t v; std::memcpy(&v, &bytes[8 * i], 8); out[i] = std::int32_t(v); }
    else out[i] = std::int32_t(bytes[i]);
  }
  return out;
}

std::string parse_safetensors(const std::uint8_t* data, std::size_t size, SafeTensorsFile& out) {
  out = SafeTensorsFile{};
  if (size < 8) return "not a safetensors file: " + std::to_string(size) + " bytes, need at least 8";
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | data[i];
  if (header_size > size - 8)
    return "not a safetensors file: header length " + std::to_string(header_size) +
           " exceeds the file size " + std::to_string(size);
  std::map<std::string, std::vector<std::int64_t>> offsets;
  HeaderParser parser(reinterpret_cast<const char*>(data + 8), std::size_t(header_size));
  std::string error = parser.parse(out, offsets);
  if (!error.empty()) return error;
  const std::uint8_t* body = data + 8 + header_size;
  const std::size_t body_size = size - 8 - std::size_t(header_size);
  for (auto& [name, tensor] : out.tensors) {
    const std::size_t element = dtype_size(tensor.dtype);
    if (element == 0) return "tensor \"" + name + "\" has unsupported dtype \"" + tensor.dtype + "\"";
    const auto& range = offsets[name];
    if (range.size() != 2) return "tensor \"" + name + "\" has no data_offsets";
    if (range[0] > range[1] || std::size_t(range[1]) > body_size)
      return "tensor \"" + name + "\" data_offsets [" + std::to_string(range[0]) + ", " +
             std::to_string(range[1]) + "] lie outside the " + std::to_string(body_size) +
             "-byte data section";
    if (std::size_t(range[1] - range[0]) != std::size_t(tensor.numel()) * element)
      return "tensor \"" + name + "\" has " + std::to_string(range[1] - range[0]) +
             " bytes but its shape and dtype need " + std::to_string(tensor.numel() * element);
    tensor.bytes.assign(body + range[0], body + range[1]);
  }
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
      header << (first ? "" : ",") << '"' << k << "\":\"" << v << '"';
      first = false;
    }
    header << "},";
  }
  std::size_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::int64_t n = 1;
    header << (i ? "," : "") << '"' << tensors[i].name << "\":{\"dtype\":\"F32\",\"shape\":[";
    for (std::size_t d = 0; d < tensors[i].shape.size(); ++d) {
      header << (d ? "," : "") << tensors[i].shape[d];
      n *= tensors[i].shape[d];
    }
    header << "],\"data_offsets\":[" << offset << ',' << offset + std::size_t(n) * 4 << "]}";
    offset += std::size_t(n) * 4;
  }
  header << '}';
  std::string text = header.str();
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
