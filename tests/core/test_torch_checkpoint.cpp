// pytorch_model.bin without Python (issue 14): the ZIP reader (core/io/zip_reader.h), the restricted
// unpickler (core/io/torch_pickle.h) and the index (core/io/torch_checkpoint.h), on files torch 1.13
// wrote and on hostile ones (tests/fixtures/make_torch_bin_fixtures.py writes both), and on pickles and
// archives edited byte by byte here.
#include <cstring>
#include <fstream>
#include <tuple>

#include "io/json.h"
#include "io/torch_checkpoint.h"
#include "test_support.h"

using namespace attnlab;
using attnlab::testing::load_fixture;

namespace {

std::vector<std::uint8_t> read_bin(const std::string& name) {
  const std::string path = std::string(ATTNLAB_FIXTURES_DIR) + "/torch_bin/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path << " (run tests/fixtures/make_torch_bin_fixtures.py)");
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string parse_error(const std::vector<std::uint8_t>& bytes) {
  TorchCheckpointIndex index;
  const std::string error = parse_torch_checkpoint(bytes.data(), bytes.size(), index);
  if (!error.empty()) CHECK(index.tensors.empty());  // a failed parse leaves nothing behind
  return error;
}

// The page's way: every step gets a copy of just the range it needs (so ASan sees any read past it).
std::string stream_index(const std::vector<std::uint8_t>& file, TorchCheckpointIndex& out) {
  auto range = [&](std::uint64_t begin, std::uint64_t end) {
    REQUIRE((begin <= end && end <= file.size()));
    return std::vector<std::uint8_t>(file.begin() + std::ptrdiff_t(begin), file.begin() + std::ptrdiff_t(end));
  };
  const std::uint64_t size = file.size(), tail_size = std::min(size, kZipTailBytes);
  ZipEnd end;
  const auto tail = range(size - tail_size, size);
  std::string error = zip_find_end(tail.data(), tail.size(), size, end);
  if (!error.empty()) return error;
  ZipDirectory directory;
  const auto central = range(end.directory_offset, end.directory_offset + end.directory_size);
  error = parse_zip_directory(central.data(), central.size(), end, directory);
  if (!error.empty()) return error;
  TorchArchive archive;
  error = locate_torch_archive(directory, archive);
  if (!error.empty()) return error;
  for (ZipEntry& e : directory.entries) {
    const auto first30 = range(e.local_header_offset, e.local_header_offset + kZipLocalHeaderBytes);
    std::uint64_t length = 0;
    error = zip_local_header_length(first30.data(), e, length);
    if (!error.empty()) return error;
    const auto header = range(e.local_header_offset, e.local_header_offset + length);
    error = zip_read_local_header(header.data(), header.size(), e);
    if (!error.empty()) return error;
  }
  const ZipEntry& pkl = directory.entries[std::size_t(archive.pickle)];
  const auto pickle_bytes = range(pkl.data_offset, pkl.data_offset + pkl.size);
  error = zip_check_crc(pkl, pickle_bytes.data(), pickle_bytes.size());
  if (!error.empty()) return error;
  TorchPickle pickle;
  error = parse_torch_pickle(pickle_bytes.data(), pickle_bytes.size(), pkl.name, pickle);
  if (!error.empty()) return error;
  return build_torch_checkpoint_index(directory, archive, pickle, out);
}

// The same through TorchCheckpointReader (what wasm_bindings/raw_marian.cpp drives): each round gets a
// copy of exactly the ranges it asks for, concatenated. `rounds` counts the requests.
std::string reader_index(const std::vector<std::uint8_t>& file, TorchCheckpointIndex& out, int* rounds = nullptr) {
  TorchCheckpointReader reader(file.size());
  int n = 0;
  while (!reader.wanted().empty()) {
    std::vector<std::uint8_t> bytes;
    for (const ByteRange& r : reader.wanted()) {
      REQUIRE((r.begin <= r.end && r.end <= file.size()));
      bytes.insert(bytes.end(), file.begin() + std::ptrdiff_t(r.begin), file.begin() + std::ptrdiff_t(r.end));
    }
    ++n;
    const std::string error = reader.give(bytes.data(), bytes.size());
    if (!error.empty()) {
      CHECK(reader.wanted().empty());
      CHECK(reader.index().tensors.empty());
      return error;
    }
  }
  REQUIRE(reader.done());
  if (rounds) *rounds = n;
  out = reader.index();
  return {};
}

std::vector<float> tensor_floats(const std::vector<std::uint8_t>& file, const TorchTensor& t) {
  const std::vector<std::uint8_t> bytes(file.begin() + std::ptrdiff_t(t.begin), file.begin() + std::ptrdiff_t(t.end));
  std::vector<float> out(std::size_t(t.numel()), -12345.0f);
  const std::string error = torch_tensor_to_float(t, bytes.data(), bytes.size(), out.data());
  REQUIRE_MESSAGE(error.empty(), error);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

std::vector<std::int64_t> int_list(const Json& j) {
  std::vector<std::int64_t> v;
  for (const Json& x : j.items()) v.push_back(std::int64_t(x.as_number()));
  return v;
}

// Every field torch reports of each tensor (make_torch_bin_fixtures.py's describe()), against the index.
void check_against_torch(const std::string& bin, const std::string& expected_name) {
  const auto file = read_bin(bin);
  TorchCheckpointIndex index;
  REQUIRE(parse_torch_checkpoint(file.data(), file.size(), index) == "");
  const SafeTensorsFile expected = load_fixture("torch_bin/" + expected_name);
  Json torch_says;
  REQUIRE(parse_json(expected.metadata.at("tensors"), torch_says) == "");
  // json.dumps(sort_keys=True) sorts the names; the index keeps the state_dict's order.
  REQUIRE(index.tensors.size() == torch_says.keys().size());
  for (const TorchTensor& t : index.tensors) {
    INFO(bin << ": " << t.name);
    const Json* says = torch_says.find(t.name);
    REQUIRE(says);
    CHECK(t.dtype == says->find("dtype")->as_string());
    CHECK(t.shape == int_list(*says->find("shape")));
    CHECK(t.stride == int_list(*says->find("stride")));
    CHECK(t.storage_offset == std::int64_t(says->find("storage_offset")->as_number()));
    CHECK(index.storages[t.storage].key == says->find("storage")->as_string());
    CHECK(index.storages[t.storage].numel == std::int64_t(says->find("storage_numel")->as_number()));
    const SafeTensor& value = expected.tensors.at(t.name);
    CHECK(value.shape == t.shape);
    if (t.dtype == "I64" || t.dtype == "BOOL" || t.dtype == "U8") {
      // Not floats: refused by torch_tensor_to_float; their bytes (all contiguous here) are torch's.
      float sink = 0;
      CHECK(torch_tensor_to_float(t, file.data() + t.begin, t.end - t.begin, &sink) ==
            "pytorch_model.bin: tensor \"" + t.name + "\" has dtype " + t.dtype + ", not a float");
      REQUIRE(t.is_contiguous());
      CHECK(std::vector<std::uint8_t>(file.begin() + std::ptrdiff_t(t.begin), file.begin() + std::ptrdiff_t(t.end)) == value.bytes);
    } else {
      // F16 and BF16 widen exactly; F64 rounds to nearest as torch's .float() does: the same bits.
      CHECK(same_bits(tensor_floats(file, t), value.to_float()));
    }
  }
}

// ---- a pickle assembler for the unpickler's own tests (opcodes as pickletools names them)

struct Pickle {
  std::vector<std::uint8_t> b;
  std::size_t at() const { return b.size(); }
  Pickle& op(std::uint8_t code) { b.push_back(code); return *this; }
  Pickle& proto() { return op(0x80).op(2); }
  Pickle& mark() { return op('('); }
  Pickle& stop() { return op('.'); }
  Pickle& text(const std::string& s) {
    op('X');
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(s.size() >> (8 * i)));
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Pickle& global(const std::string& module, const std::string& name) {
    op('c');
    b.insert(b.end(), module.begin(), module.end());
    b.push_back('\n');
    b.insert(b.end(), name.begin(), name.end());
    b.push_back('\n');
    return *this;
  }
  // The smallest of BININT1, BININT2, BININT, LONG1, as Python's pickler chooses.
  Pickle& integer(std::int64_t v) {
    if (v >= 0 && v < 256) return op('K').op(std::uint8_t(v));
    if (v >= 0 && v < 65536) return op('M').op(std::uint8_t(v)).op(std::uint8_t(v >> 8));
    if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(std::uint64_t(v) >> (8 * i)));
      return *this;
    }
    op(0x8a).op(8);
    for (int i = 0; i < 8; ++i) b.push_back(std::uint8_t(std::uint64_t(v) >> (8 * i)));
    return *this;
  }
  Pickle& tuple(const std::vector<std::int64_t>& v) {
    mark();
    for (std::int64_t x : v) integer(x);
    return op('t');
  }
  Pickle& storage(const std::string& type, const std::string& key, std::int64_t numel) {
    mark().text("storage").global("torch", type).text(key).text("cpu").integer(numel).op('t');
    return op('Q');  // BINPERSID
  }
  // _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())
  Pickle& tensor(const std::string& type, const std::string& key, std::int64_t numel, std::int64_t offset,
                 const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride) {
    global("torch._utils", "_rebuild_tensor_v2").mark();
    storage(type, key, numel).integer(offset).tuple(size).tuple(stride).op(0x89);
    global("collections", "OrderedDict").op(')').op('R');
    return op('t').op('R');
  }
};

// PROTO, {name: tensor}, STOP
Pickle one_tensor(const std::string& type, std::int64_t numel, std::int64_t offset, const std::vector<std::int64_t>& size,
                  const std::vector<std::int64_t>& stride) {
  Pickle p;
  p.proto().op('}').text("w").tensor(type, "0", numel, offset, size, stride).op('s').stop();
  return p;
}

std::string unpickle(const std::vector<std::uint8_t>& bytes, TorchPickle* result = nullptr) {
  TorchPickle out;
  const std::string error = parse_torch_pickle(bytes.data(), bytes.size(), "archive/data.pkl", out);
  if (!error.empty()) CHECK((out.tensors.empty() && out.storages.empty()));
  if (result) *result = out;
  return error;
}

const std::string kAt = "pytorch_model.bin: entry \"archive/data.pkl\", byte ";

// ---- byte edits of an archive

std::uint32_t get32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t(b[at]) | (std::uint32_t(b[at + 1]) << 8) | (std::uint32_t(b[at + 2]) << 16) | (std::uint32_t(b[at + 3]) << 24);
}
void put16(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t v) {
  b[at] = std::uint8_t(v);
  b[at + 1] = std::uint8_t(v >> 8);
}
void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}
// The offset of the central directory record for `name`.
std::size_t central_record(const std::vector<std::uint8_t>& b, const std::string& name) {
  for (std::size_t at = 0; at + 46 < b.size(); ++at) {
    if (get32(b, at) == 0x02014b50 && std::memcmp(&b[at + 46], name.data(), name.size()) == 0 && b[at + 28] == name.size())
      return at;
  }
  FAIL("no central directory record for " << name);
  return 0;
}

}  // namespace

// ---- files torch wrote

TEST_CASE("torch checkpoint (zip, pickle): state_dict.bin (torch 1.13: OrderedDict with _metadata, views, shared storage, F16/BF16/F64/I64/BOOL/U8, 0-d, empty, stride 0) reads as torch reads it") {
  check_against_torch("state_dict.bin", "state_dict_expected.safetensors");
  const auto file = read_bin("state_dict.bin");
  TorchCheckpointIndex index;
  REQUIRE(parse_torch_checkpoint(file.data(), file.size(), index) == "");
  CHECK(index.prefix == "state_dict");
  // The state_dict's order, the module's tensors first.
  REQUIRE(index.tensors.size() == 39);
  CHECK(index.tensors[0].name == "0.weight");
  CHECK(index.tensors[4].name == "f32.base");
  CHECK(index.tensors.back().name == "many.19");
  // The views of f32.base share its storage and read only the span they reach.
  const TorchTensor* base = index.find("f32.base");
  const TorchTensor* row = index.find("f32.row_slice");
  const TorchTensor* column = index.find("f32.column");
  REQUIRE((base && row && column));
  CHECK(index.find("f32.transposed")->storage == base->storage);
  CHECK(index.find("f32.tied")->storage == base->storage);
  CHECK(row->begin == base->begin + 11 * 4);
  CHECK(row->end - row->begin == 3 * 4);
  CHECK(column->begin == base->begin + 3 * 4);
  CHECK(column->span == 16);  // elements 3, 8, 13, 18
  CHECK(!index.find("f32.transposed")->is_contiguous());
  CHECK(!column->is_contiguous());
  CHECK(row->is_contiguous());
  CHECK(index.find("f32.scalar")->shape.empty());
  CHECK(index.find("f32.scalar")->numel() == 1);
  CHECK(index.find("f32.empty")->numel() == 0);
  CHECK(index.find("f32.empty")->begin == index.find("f32.empty")->end);
  CHECK(index.find("f32.expanded")->stride == std::vector<std::int64_t>{0, 1});
  CHECK(index.find("missing") == nullptr);
}

TEST_CASE("torch checkpoint (zip, pickle): a plain dict, the same entries re-zipped by zipfile with byteorder \"little\", and in ZIP64 extra fields read the same") {
  check_against_torch("plain_dict.bin", "plain_dict_expected.safetensors");
  check_against_torch("rezipped_little.bin", "plain_dict_expected.safetensors");
  check_against_torch("zip64_fields.bin", "plain_dict_expected.safetensors");
}

TEST_CASE("torch checkpoint (zip, pickle): streamed range by range (the page's way) gives the whole-file index") {
  for (const char* name : {"state_dict.bin", "plain_dict.bin", "rezipped_little.bin", "zip64_fields.bin"}) {
    INFO(name);
    const auto file = read_bin(name);
    TorchCheckpointIndex whole, streamed;
    REQUIRE(parse_torch_checkpoint(file.data(), file.size(), whole) == "");
    REQUIRE(stream_index(file, streamed) == "");
    REQUIRE(streamed.tensors.size() == whole.tensors.size());
    for (std::size_t i = 0; i < whole.tensors.size(); ++i) {
      const TorchTensor &a = whole.tensors[i], &b = streamed.tensors[i];
      CHECK((a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.stride == b.stride &&
             a.storage_offset == b.storage_offset && a.begin == b.begin && a.end == b.end));
    }
  }
}

TEST_CASE("torch checkpoint (zip, pickle): TorchCheckpointReader (ranges asked for, handed over) gives the whole-file index in 5 requests") {
  for (const char* name : {"state_dict.bin", "plain_dict.bin", "rezipped_little.bin", "zip64_fields.bin"}) {
    INFO(name);
    const auto file = read_bin(name);
    TorchCheckpointIndex whole, read;
    int rounds = 0;
    REQUIRE(parse_torch_checkpoint(file.data(), file.size(), whole) == "");
    REQUIRE(reader_index(file, read, &rounds) == "");
    CHECK(rounds == 5);  // tail, directory, data.pkl's (and byteorder's) header, their bytes, the storages' headers
    REQUIRE(read.tensors.size() == whole.tensors.size());
    REQUIRE(read.storages.size() == whole.storages.size());
    for (std::size_t i = 0; i < whole.tensors.size(); ++i) {
      const TorchTensor &a = whole.tensors[i], &b = read.tensors[i];
      CHECK((a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.stride == b.stride &&
             a.storage_offset == b.storage_offset && a.storage == b.storage && a.begin == b.begin && a.end == b.end));
    }
    for (std::size_t i = 0; i < whole.storages.size(); ++i)
      CHECK((whole.storages[i].begin == read.storages[i].begin && whole.storages[i].end == read.storages[i].end));
  }
}

namespace {

// A ZIP of stored entries as zipfile writes one (CRC and sizes in the local header, no ZIP64), with an
// extra field of `extra(name)` bytes (0, or >= 4: one record of zeros) in each local header.
template <class Extra>
std::vector<std::uint8_t> zip_of(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& entries, Extra extra) {
  std::vector<std::uint8_t> out, central;
  auto u16 = [](std::vector<std::uint8_t>& b, std::uint64_t v) { for (int i = 0; i < 2; ++i) b.push_back(std::uint8_t(v >> (8 * i))); };
  auto u32 = [](std::vector<std::uint8_t>& b, std::uint64_t v) { for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i))); };
  for (const auto& [name, data] : entries) {
    const std::uint32_t crc = zip_crc32_update(0, data.data(), data.size());
    const std::size_t x = extra(name), offset = out.size();
    u32(out, 0x04034b50); u16(out, 20); u16(out, 0); u16(out, 0); u16(out, 0); u16(out, 0);
    u32(out, crc); u32(out, data.size()); u32(out, data.size()); u16(out, name.size()); u16(out, x);
    out.insert(out.end(), name.begin(), name.end());
    if (x) { u16(out, 0x4246); u16(out, x - 4); out.insert(out.end(), x - 4, 0); }
    out.insert(out.end(), data.begin(), data.end());
    u32(central, 0x02014b50); u16(central, 20); u16(central, 20); u16(central, 0); u16(central, 0); u16(central, 0); u16(central, 0);
    u32(central, crc); u32(central, data.size()); u32(central, data.size()); u16(central, name.size()); u16(central, 0); u16(central, 0);
    u16(central, 0); u16(central, 0); u32(central, 0); u32(central, offset);
    central.insert(central.end(), name.begin(), name.end());
  }
  const std::size_t directory = out.size();
  out.insert(out.end(), central.begin(), central.end());
  u32(out, 0x06054b50); u16(out, 0); u16(out, 0); u16(out, entries.size()); u16(out, entries.size());
  u32(out, central.size()); u32(out, directory); u16(out, 0);
  return out;
}

}  // namespace

TEST_CASE("torch checkpoint (zip, pickle): TorchCheckpointReader asks again, whole, for a local header whose extra field is longer than 128 bytes") {
  Pickle p;
  p.proto().op('}').mark().text("a").tensor("FloatStorage", "0", 3, 0, {3}, {1}).text("b").tensor("FloatStorage", "1", 2, 1, {1}, {1}).op('u').stop();
  std::vector<std::uint8_t> pickle = p.b, s0(12), s1(8);
  const float values[5] = {1.5f, -2.0f, 3.25f, 7.0f, 8.0f};
  std::memcpy(s0.data(), values, 12);
  std::memcpy(s1.data(), values + 3, 8);
  // data.pkl's and data/1's headers run past the first read (30 + name + 128 bytes); data/0's does not.
  const auto file = zip_of({{"archive/data.pkl", pickle}, {"archive/data/0", s0}, {"archive/data/1", s1}, {"archive/version", {'3', '\n'}}},
                           [](const std::string& name) { return name == "archive/data/0" ? 100 : name == "archive/version" ? 0 : 300; });
  TorchCheckpointIndex whole, read;
  REQUIRE(parse_torch_checkpoint(file.data(), file.size(), whole) == "");
  int rounds = 0;
  REQUIRE(reader_index(file, read, &rounds) == "");
  CHECK(rounds == 7);  // 5, and one more for each of the two long headers
  REQUIRE(read.tensors.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) CHECK((read.tensors[i].begin == whole.tensors[i].begin && read.tensors[i].end == whole.tensors[i].end));
  CHECK(tensor_floats(file, read.tensors[1]) == std::vector<float>{8.0f});

  // Bytes that are not the ranges asked for, and a reader asked again after it is done.
  TorchCheckpointReader reader(file.size());
  CHECK(reader.give(file.data(), 3) == "pytorch_model.bin: 3 bytes were given for the " + std::to_string(file.size()) + " asked for");
  CHECK(reader.wanted().empty());
  CHECK(reader.give(file.data(), 0) == "pytorch_model.bin: no bytes were asked for");
}

TEST_CASE("torch checkpoint (zip, pickle): the index wants every local header read first, and the exact bytes of a tensor") {
  const auto file = read_bin("plain_dict.bin");
  const std::uint64_t tail = std::min<std::uint64_t>(file.size(), kZipTailBytes);
  ZipEnd end;
  REQUIRE(zip_find_end(file.data() + file.size() - tail, tail, file.size(), end) == "");
  CHECK(end.zip64);  // torch writes a ZIP64 end record into every archive
  ZipDirectory directory;
  REQUIRE(parse_zip_directory(file.data() + end.directory_offset, end.directory_size, end, directory) == "");
  TorchArchive archive;
  REQUIRE(locate_torch_archive(directory, archive) == "");
  CHECK(archive.byteorder == -1);
  TorchPickle pickle;
  const ZipEntry& pkl = directory.entries[std::size_t(archive.pickle)];
  CHECK(!pkl.data_located());
  TorchCheckpointIndex index;
  // torch.save writes exactly the storages its pickle names: data/0 and data/1 are not this pickle's.
  CHECK(build_torch_checkpoint_index(directory, archive, pickle, index) ==
        "pytorch_model.bin: entry \"plain_dict/data/0\" is a storage that data.pkl does not name");
  pickle.storages.push_back({"0", "F32", 6});
  CHECK(build_torch_checkpoint_index(directory, archive, pickle, index) ==
        "pytorch_model.bin: entry \"plain_dict/data/0\": its local header has not been read (zip_read_local_header)");
  TorchCheckpointIndex good;
  REQUIRE(parse_torch_checkpoint(file.data(), file.size(), good) == "");
  const TorchTensor& w = good.tensors[0];
  std::vector<float> out(6);
  CHECK(torch_tensor_to_float(w, file.data() + w.begin, 23, out.data()) ==
        "pytorch_model.bin: tensor \"weight\" is read from its 24 bytes [" + std::to_string(w.begin) + ", " +
            std::to_string(w.end) + "); 23 were given");
}

TEST_CASE("torch checkpoint (zip, pickle): a strided tensor is read from its span alone (transposed [2,3] of a [3,2] storage, offset 1)") {
  // Storage 0..7 as F32; the tensor starts at element 1: size (2, 3), stride (1, 2) -> [[1,3,5],[2,4,6]].
  TorchPickle pickle;
  REQUIRE(unpickle(one_tensor("FloatStorage", 8, 1, {2, 3}, {1, 2}).b, &pickle) == "");
  const TorchTensor& t = pickle.tensors[0];
  CHECK(t.span == 6);
  float storage[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  TorchTensor placed = t;
  placed.begin = 4;  // as build_torch_checkpoint_index sets them: offset 1 x 4 bytes
  placed.end = 4 + 6 * 4;
  std::vector<std::uint8_t> span(reinterpret_cast<std::uint8_t*>(storage) + 4, reinterpret_cast<std::uint8_t*>(storage) + 28);
  std::vector<float> out(6);
  REQUIRE(torch_tensor_to_float(placed, span.data(), span.size(), out.data()) == "");
  CHECK(out == std::vector<float>{1, 3, 5, 2, 4, 6});
}

// ---- hostile files (make_torch_bin_fixtures.py says how each was made)

TEST_CASE("torch checkpoint (zip, pickle): hostile files are refused, each with its message") {
  const std::string allowlist =
      ": only collections.OrderedDict, torch._utils._rebuild_tensor_v2 and the storage types may appear; nothing is called";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"global_os_system.bin", "pytorch_model.bin: entry \"archive/data.pkl\", byte 2: the pickle names os.system" + allowlist},
      {"global_posix_system.bin",
       "pytorch_model.bin: entry \"global_posix_system/data.pkl\", byte 177: the pickle names posix.system" + allowlist},
      {"global_builtins_eval.bin", "pytorch_model.bin: entry \"archive/data.pkl\", byte 2: the pickle names builtins.eval" + allowlist},
      {"parameter_dict.bin",
       "pytorch_model.bin: entry \"parameter_dict/data.pkl\", byte 13: the pickle names torch._utils._rebuild_parameter" + allowlist},
      {"unknown_opcode.bin", "pytorch_model.bin: entry \"plain_dict/data.pkl\", byte 2: opcode 0xff is not a pickle opcode"},
      {"truncated_pickle.bin", "pytorch_model.bin: entry \"plain_dict/data.pkl\", byte 100: the pickle ends without STOP"},
      {"deep_mark.bin", "pytorch_model.bin: entry \"archive/data.pkl\", byte 66: more than 64 nested MARKs"},
      {"huge_binunicode.bin",
       "pytorch_model.bin: entry \"archive/data.pkl\", byte 3: BINUNICODE of 4294967295 bytes runs past the end of the pickle (3 bytes remain)"},
      {"not_a_state_dict.bin",
       "pytorch_model.bin: entry \"not_a_state_dict/data.pkl\", byte 282: the state_dict's \"epoch\" holds the integer 3, not a tensor "
       "(a checkpoint of more than a state_dict is not read)"},
      {"compressed.bin",
       "pytorch_model.bin: entry \"plain_dict/data.pkl\" is compressed (method 8, deflate): torch.save stores every entry "
       "uncompressed, and only stored entries are read"},
      {"truncated_zip.bin", "pytorch_model.bin: a ZIP archive cut short or damaged: no end of central directory record in its 6770 bytes"},
      {"directory_outside.bin",
       "pytorch_model.bin: the central directory's offset 1111 lies past the end record at 913 (the file has 1011 bytes)"},
      {"crc_mismatch.bin",
       "pytorch_model.bin: entry \"plain_dict/data/0\" fails its CRC-32 check (stored 0xfab10fb2, computed 0x7b946a95): the file is damaged"},
      {"storage_size_mismatch.bin", "pytorch_model.bin: storage \"0\" of 6 x F32 needs 24 bytes, but entry \"plain_dict/data/0\" has 20"},
      {"legacy_format.bin",
       "pytorch_model.bin: a checkpoint in the format torch.save wrote before PyTorch 1.6, not a ZIP archive: load it in Python and "
       "save it again with PyTorch >= 1.6, or convert it to model.safetensors"},
      {"big_endian.bin",
       "pytorch_model.bin: its byteorder entry says \"big\": the checkpoint was saved on a big-endian machine, and only "
       "little-endian storages are read"},
      {"expanded.bin",
       "pytorch_model.bin: entry \"expanded/data.pkl\", byte 157: a tensor of size (1000, 1000, 1000) is expanded (stride 0 on axis 0): its "
       "1000000000 elements repeat values of the file, more than the 16777216 read from such a tensor; save it with .contiguous()"},
  };
  for (const auto& c : cases) {
    const std::string &name = c.first, &message = c.second;  // (clang 14 cannot capture bindings in INFO)
    INFO(name);
    const auto file = read_bin("hostile/" + name);
    CHECK(parse_error(file) == message);
    TorchCheckpointIndex streamed;
    // The streamed path (which checks the CRC of data.pkl only, and no byteorder) refuses them too.
    if (name != "crc_mismatch.bin" && name != "big_endian.bin") CHECK(stream_index(file, streamed) == message);
    // TorchCheckpointReader checks byteorder, but reads no storage's bytes (the page reads the tensors
    // it needs after it): crc_mismatch.bin's damaged storage is not seen here.
    TorchCheckpointIndex read;
    if (name != "crc_mismatch.bin") CHECK(reader_index(file, read) == message);
    else CHECK(reader_index(file, read) == "");
  }
}

// ---- the unpickler, on hand-assembled pickles

TEST_CASE("torch pickle: a hand-assembled state_dict parses (BININT, LONG1 sizes; a storage shared by two tensors)") {
  Pickle p;
  p.proto().op('}').mark();
  p.text("a").tensor("FloatStorage", "0", 70000, 0, {70000}, {1});
  p.text("b").tensor("FloatStorage", "0", 70000, 69999, {1, 1}, {std::int64_t(1) << 40, 1});  // stride via LONG1, one element
  p.text("c").tensor("BFloat16Storage", "1", 0, 5, {0, 3}, {3, 1});  // empty: any offset, as torch's set_()
  p.op('u').stop();
  TorchPickle pickle;
  REQUIRE(unpickle(p.b, &pickle) == "");
  REQUIRE(pickle.tensors.size() == 3);
  REQUIRE(pickle.storages.size() == 2);
  CHECK(pickle.tensors[0].span == 70000);
  CHECK(pickle.tensors[1].storage == 0);
  CHECK(pickle.tensors[1].span == 1);
  CHECK(pickle.tensors[1].stride == std::vector<std::int64_t>{std::int64_t(1) << 40, 1});
  CHECK(pickle.tensors[2].dtype == "BF16");
  CHECK(pickle.tensors[2].span == 0);
  CHECK(pickle.find("c") == &pickle.tensors[2]);
}

TEST_CASE("torch pickle: a tensor reaching past its storage (size, stride or offset one too far) is refused") {
  const std::string tail = " in storage \"0\" of 6 elements reaches past its storage";
  // The message is reported at STOP's REDUCE; find its byte: the tensor's REDUCE is the byte before SETITEM.
  auto at_reduce = [](const Pickle& p) { return std::to_string(p.b.size() - 3); };
  Pickle p = one_tensor("FloatStorage", 6, 0, {7}, {1});
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (7,), stride (1,) at offset 0" + tail);
  p = one_tensor("FloatStorage", 6, 0, {2, 3}, {1, 3});  // last element 1 + 2 x 3 = 7
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (2, 3), stride (1, 3) at offset 0" + tail);
  p = one_tensor("FloatStorage", 6, 6, {1}, {1});
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (1,), stride (1,) at offset 6" + tail);
  CHECK(unpickle(one_tensor("FloatStorage", 6, 5, {1}, {1}).b) == "");
  CHECK(unpickle(one_tensor("FloatStorage", 6, 0, {2, 3}, {1, 2}).b) == "");
  // Sizes whose product passes 64 bits, and a reach that does.
  p = one_tensor("FloatStorage", 6, 0, {std::int64_t(1) << 62, 4}, {0, 0});
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (4611686018427387904, 4) has more elements than 64 bits count");
  p = one_tensor("FloatStorage", 6, 0, {3}, {std::int64_t(1) << 62});
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (3,), stride (4611686018427387904,) at offset 0 in storage \"0\" of 6 elements reaches past 64 bits");
}

TEST_CASE("torch pickle: an expanded or overlapping tensor is read up to 16,777,216 elements, refused beyond before any allocation") {
  auto at_reduce = [](const Pickle& p) { return std::to_string(p.b.size() - 3); };
  // torch.zeros(1).expand(1000, 1000, 1000): 4 bytes standing for a billion floats (issue 48: it aborted the module).
  Pickle p = one_tensor("FloatStorage", 1, 0, {1000, 1000, 1000}, {0, 0, 0});
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (1000, 1000, 1000) is expanded (stride 0 on axis 0): its 1000000000 elements "
                                               "repeat values of the file, more than the 16777216 read from such a tensor; save it with .contiguous()");
  p = one_tensor("FloatStorage", 8193, 0, {4097, 4097}, {1, 1});  // rows that overlap: each starts one element after the last
  CHECK(unpickle(p.b) == kAt + at_reduce(p) + ": a tensor of size (4097, 4097) has strides (1, 1) whose elements overlap: its 16785409 elements "
                                               "repeat values of the file, more than the 16777216 read from such a tensor; save it with .contiguous()");
  CHECK(unpickle(one_tensor("FloatStorage", 3, 0, {2, 3}, {0, 1}).b) == "");           // a small expanded tensor reads, as torch reads it
  CHECK(unpickle(one_tensor("FloatStorage", 1, 0, {4096, 4096}, {0, 0}).b) == "");     // 16,777,216 elements: the bound itself
  CHECK(unpickle(one_tensor("FloatStorage", 6, 0, {3, 2}, {1, 3}).b) == "");           // transposed: no overlap
  CHECK(unpickle(one_tensor("FloatStorage", 100, 0, {1, 50}, {0, 2}).b) == "");        // stride 0 on an axis of size 1 repeats nothing
}

TEST_CASE("torch pickle: stack and memo misuse are refused") {
  Pickle p;
  p.proto().op('R');
  CHECK(unpickle(p.b) == kAt + "2: REDUCE needs 2 values on the stack; there are 0");
  p = Pickle();
  p.proto().op('N').mark().op('R');  // the None is below the MARK
  CHECK(unpickle(p.b) == kAt + "4: REDUCE needs 2 values on the stack above its MARK; there are 0");
  p = Pickle();
  p.proto().op('h').op(7);
  CHECK(unpickle(p.b) == kAt + "2: BINGET 7: nothing was memoized under 7");
  p = Pickle();
  p.proto().op('q').op(0);
  CHECK(unpickle(p.b) == kAt + "2: BINPUT with nothing on the stack");
  p = Pickle();
  p.proto().op('N').op('r').op(0xff).op(0xff).op(0xff).op(0x7f);
  CHECK(unpickle(p.b) == kAt + "3: LONG_BINPUT 2147483647: memo keys past 1048576 are refused");
  p = Pickle();
  p.proto().op('}').op('N').op('N').op('N').op('s').stop();  // SETITEM on None
  CHECK(unpickle(p.b) == kAt + "6: SETITEM on None, not a dict");
  p = Pickle();
  p.proto().op('}').mark().op('N').op('u');
  CHECK(unpickle(p.b) == kAt + "5: SETITEMS with an odd number of values (a key without its value)");
  p = Pickle();
  p.proto().op('}').op('}').stop();
  CHECK(unpickle(p.b) == kAt + "4: STOP with 2 values on the stack; one is the result");
  p = Pickle();
  p.proto().op('}').mark().stop();
  CHECK(unpickle(p.b) == kAt + "4: STOP with 1 MARK(s) still open");
  p = Pickle();
  p.proto().op('}').stop().op('N');
  CHECK(unpickle(p.b) == kAt + "4: 1 bytes follow STOP");
  p = Pickle();
  p.proto().op('t');
  CHECK(unpickle(p.b) == kAt + "2: TUPLE without a MARK");
}

TEST_CASE("torch pickle: only protocol 2's opcodes torch.save writes; other globals and calls are refused") {
  CHECK(unpickle({0x80, 4, 0x95}) == kAt + "0: pickle protocol 4: torch.save writes protocol 2");
  CHECK(unpickle({'}', '.'}) == kAt + "0: the pickle starts with EMPTY_DICT, not PROTO 2: torch.save writes protocol 2");
  CHECK(unpickle({0x80, 2, 0x93}) == kAt + "2: opcode 0x93 (STACK_GLOBAL) is not one torch.save writes for a state_dict");
  CHECK(unpickle({0x80, 2, ']'}) == kAt + "2: opcode 0x5d (EMPTY_LIST) is not one torch.save writes for a state_dict");
  CHECK(unpickle({0x80, 2, 'i'}) == kAt + "2: opcode 0x69 (INST) is not one torch.save writes for a state_dict");
  CHECK(unpickle({0x80, 2, 0x80, 2}) == kAt + "2: PROTO after the first byte");
  CHECK(unpickle({}) == kAt + "0: the pickle ends without STOP");
  CHECK(unpickle({0x80}) == kAt + "1: the pickle ends inside PROTO's argument");
  Pickle p;
  p.proto().global("torch", "FloatStorage").op(')').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) +
                             ": REDUCE applies torch.FloatStorage: a storage type may only appear inside a storage reference (BINPERSID)");
  p = Pickle();
  p.proto().global("torch", "ComplexFloatStorage");
  CHECK(unpickle(p.b) == kAt + "2: the pickle names torch.ComplexFloatStorage: only collections.OrderedDict, "
                              "torch._utils._rebuild_tensor_v2 and the storage types may appear; nothing is called");
  p = Pickle();
  p.proto().global("os\x01", "system");
  CHECK(unpickle(p.b) == kAt + "2: the pickle names \"os\\x01.system\": only collections.OrderedDict, "
                              "torch._utils._rebuild_tensor_v2 and the storage types may appear; nothing is called");
  p = Pickle();
  p.proto().global("collections", "OrderedDict").mark().op('N').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": OrderedDict() with 1 arguments; torch.save writes none");
  p = Pickle();
  p.proto().op('N').op(')').op('R');
  CHECK(unpickle(p.b) == kAt + "4: REDUCE applies None, not a function");
  p = Pickle();
  p.proto().op('N').op('}').op('b');
  CHECK(unpickle(p.b) == kAt + "4: BUILD sets a dict of 0 on None; torch.save only sets a dict of attributes on an OrderedDict");
}

TEST_CASE("torch pickle: storage references, _rebuild_tensor_v2's arguments and the top level are checked") {
  Pickle p;
  p.proto().mark().text("storage").global("torch", "FloatStorage").text("0").text("cpu").op('t').op('Q');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) +
                             ": BINPERSID of a tuple of 4; torch writes a persistent id ('storage', storage type, key, location, numel)");
  p = Pickle();
  p.proto().mark().text("module").global("torch", "FloatStorage").text("0").text("cpu").integer(1).op('t').op('Q');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) +
                             ": BINPERSID of a tuple that is not a persistent id ('storage', storage type, key, location, numel)");
  p = Pickle();
  p.proto().storage("FloatStorage", "0", 6).storage("HalfStorage", "0", 6);
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": storage \"0\" is named as 6 x F16 here and as 6 x F32 before");
  p = Pickle();
  p.proto().global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).integer(0).tuple({6}).tuple({1});
  p.op(0x89).op('}').op('}').op('N').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": _rebuild_tensor_v2 with 8 arguments; it takes (storage, "
                                                                  "storage_offset, size, stride, requires_grad, backward_hooks[, metadata])");
  p = Pickle();
  p.proto().global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).integer(0).tuple({6}).tuple({1, 1});
  p.op(0x89).op('}').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) +
                             ": _rebuild_tensor_v2 with a size of 1 dimensions and a stride of 2");
  p = Pickle();
  p.proto().global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).integer(0).tuple({6}).tuple({1});
  p.op(0x89).op('}').text("k").op('N').op('s').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) +
                             ": _rebuild_tensor_v2's backward_hooks are a dict of 1; torch.save writes an empty OrderedDict");
  p = Pickle();
  p.proto().global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).integer(-1).tuple({6}).tuple({1});
  p.op(0x89).op('}').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": _rebuild_tensor_v2's storage_offset is the integer -1, not an integer >= 0");
  // A 7th argument (PyTorch >= 2.0 adds tensor metadata when there is some): None or empty only.
  p = Pickle();
  p.proto().op('}').text("w").global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).integer(0);
  p.tuple({6}).tuple({1}).op(0x88).op('}').op('N').op('t').op('R').op('s').stop();
  TorchPickle pickle;
  CHECK(unpickle(p.b, &pickle) == "");
  // The top level: a dict of names to tensors.
  p = Pickle();
  p.proto().op('N').stop();
  CHECK(unpickle(p.b) == kAt + "4: the pickle holds None; a state_dict is a dict of names to tensors");
  p = Pickle();
  p.proto().op('}').integer(1).storage("FloatStorage", "0", 6).op('s').stop();
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size()) + ": the state_dict has the integer 1 for a key; its keys are names");
  p = Pickle();
  p.proto().op('}').text("w").storage("FloatStorage", "0", 6).op('s').stop();
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size()) +
                             ": the state_dict's \"w\" holds a storage, not a tensor (a checkpoint of more than a state_dict is not read)");
  // A name set twice (Python would keep the last value; torch.save never writes one twice).
  p = Pickle();
  p.proto().op('}').mark().text("a").tensor("FloatStorage", "0", 6, 0, {6}, {1}).text("b").tensor("FloatStorage", "0", 6, 1, {5}, {1});
  p.text("a").tensor("FloatStorage", "0", 6, 2, {4}, {1}).op('u').stop();
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size()) + ": the state_dict names \"a\" twice");
  // A storage key longer than 64 bytes (torch.save's are "0", "1", ...).
  p = Pickle();
  p.proto().storage("FloatStorage", std::string(65, '7'), 1);
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": a storage key of 65 bytes; more than 64 are refused");
}

TEST_CASE("torch pickle: caps on strings, integers, text and sizes") {
  Pickle p;
  p.proto().text(std::string(kTorchPickleMaxString + 1, 'a'));
  CHECK(unpickle(p.b) == kAt + "2: BINUNICODE of 65537 bytes: names in a state_dict are shorter than 65536");
  p = Pickle();
  p.proto().text("\xc3\x28");
  CHECK(unpickle(p.b) == kAt + "2: BINUNICODE holds text that is not UTF-8");
  CHECK(unpickle({0x80, 2, 0x8a, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}) == kAt + "2: LONG1 of 9 bytes: a state_dict has no integer past 64 bits");
  // LONG1 sign-extends: 0xff is -1 (as a storage_offset, refused as negative).
  p = Pickle();
  p.proto().global("torch._utils", "_rebuild_tensor_v2").mark().storage("FloatStorage", "0", 6).op(0x8a).op(1).op(0xff);
  p.tuple({6}).tuple({1}).op(0x89).op('}').op('t').op('R');
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": _rebuild_tensor_v2's storage_offset is the integer -1, not an integer >= 0");
  p = Pickle();
  p.proto().global(std::string(300, 'm'), "f");
  CHECK(unpickle(p.b) == kAt + "2: GLOBAL with a name over 256 bytes");
  p = Pickle();
  p.proto().op('c').op('o').op('s');
  CHECK(unpickle(p.b) == kAt + "5: the pickle ends inside GLOBAL's names");
  std::vector<std::int64_t> rank65(65, 1);
  p = one_tensor("FloatStorage", 6, 0, rank65, rank65);
  CHECK(unpickle(p.b).find("_rebuild_tensor_v2's size has 65 dimensions; more than 64 are refused") != std::string::npos);
  // More objects than the cap (BININT1 0, two bytes each, on the stack): refused at the cap, not at 2 GB.
  p = Pickle();
  p.proto();
  for (std::uint64_t i = 0; i < kTorchPickleMaxObjects; ++i) p.op('K').op(0);
  CHECK(unpickle(p.b) == kAt + std::to_string(2 + 2 * (kTorchPickleMaxObjects - 4)) +
                             ": more than 1048576 objects; a state_dict's pickle builds about 15 per tensor");
  // More values on the stack than its cap (one None memoized, then BINGET of it).
  p = Pickle();
  p.proto().op('N').op('q').op(0);
  for (std::uint64_t i = 0; i < kTorchPickleMaxStack; ++i) p.op('h').op(0);
  CHECK(unpickle(p.b) == kAt + std::to_string(5 + 2 * (kTorchPickleMaxStack - 1)) + ": more than 1048576 values on the stack");
}

TEST_CASE("torch pickle: one memoized tensor or argument tuple reused cannot make a gigabyte of records (tensor, dimension and entry caps)") {
  // _rebuild_tensor_v2 and a rank-r argument tuple memoized, then "BINGET 0, BINGET 1, REDUCE" (5 bytes) again and again.
  auto reused = [](std::size_t rank, std::size_t times, std::size_t& failing_at) {
    Pickle p;
    const std::vector<std::int64_t> ones(rank, 1);
    p.proto().global("torch._utils", "_rebuild_tensor_v2").op('q').op(0).mark().storage("FloatStorage", "0", 1).integer(0);
    p.tuple(ones).tuple(ones).op(0x89).global("collections", "OrderedDict").op(')').op('R').op('t').op('q').op(1);
    failing_at = p.at() + 5 * times + 4;  // the REDUCE after `times` good ones
    for (std::size_t i = 0; i <= times; ++i) p.op('h').op(0).op('h').op(1).op('R');
    return p;
  };
  std::size_t at = 0;
  Pickle p = reused(1, kTorchPickleMaxTensors, at);
  CHECK(unpickle(p.b) == kAt + std::to_string(at) + ": more than 131072 tensors");
  p = reused(64, kTorchPickleMaxDims / 64, at);
  CHECK(unpickle(p.b) == kAt + std::to_string(at) + ": the tensors have more than 524288 dimensions in all");
  // One tensor under many names: 131,073 entries; a rank-64 tensor under 8,193 names.
  auto named = [](std::size_t rank, std::size_t names) {
    Pickle p;
    const std::vector<std::int64_t> ones(rank, 1);
    p.proto().op('}').mark().text("w0").tensor("FloatStorage", "0", 1, 0, ones, ones).op('q').op(0);
    for (std::size_t i = 1; i < names; ++i) p.text("w" + std::to_string(i)).op('h').op(0);
    p.op('u').stop();
    return p;
  };
  p = named(1, kTorchPickleMaxTensors + 1);
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size()) + ": the state_dict has 131073 entries; more than 131072 are refused");
  p = named(64, kTorchPickleMaxDims / 64 + 1);
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size()) + ": the state_dict's tensors have more than 524288 dimensions in all");
  p = named(64, kTorchPickleMaxDims / 64);
  TorchPickle pickle;
  CHECK(unpickle(p.b, &pickle) == "");
  CHECK(pickle.tensors.size() == 8192);
}

TEST_CASE("torch pickle: tuples of None and dicts of None (no object each) are capped in all: 4,194,304 tuple items, 1,048,576 dict items") {
  // Five tuples of 2^20 - 8 Nones (under the stack's cap): the fifth passes 2^22 items.
  const std::size_t n = (std::size_t(1) << 20) - 8;
  Pickle p;
  p.proto();
  for (int t = 0; t < 5; ++t) {
    p.mark();
    for (std::size_t i = 0; i < n; ++i) p.op('N');
    p.op('t');
  }
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": more than 4194304 tuple items in all");
  // Three SETITEMS of 2^19 - 8 (None, None) pairs: the third passes 2^20 items at its 17th pair.
  const std::size_t pairs = (std::size_t(1) << 19) - 8;
  p = Pickle();
  p.proto().op('}');
  for (int batch = 0; batch < 3; ++batch) {
    p.mark();
    for (std::size_t i = 0; i < pairs; ++i) p.op('N').op('N');
    p.op('u');
  }
  CHECK(unpickle(p.b) == kAt + std::to_string(p.b.size() - 1) + ": more than 1048576 dict items in all");
}

// ---- the ZIP reader

TEST_CASE("zip: CRC-32 of \"123456789\" is 0xcbf43926 (the standard check value), in one piece or three") {
  const std::uint8_t text[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(zip_crc32_update(0, text, 9) == 0xcbf43926u);
  CHECK(zip_crc32_update(zip_crc32_update(zip_crc32_update(0, text, 2), text + 2, 4), text + 6, 3) == 0xcbf43926u);
  CHECK(zip_crc32_update(0, text, 0) == 0);
}

TEST_CASE("zip: the end records (too small a file, a wrong tail, ZIP64 and end record disagreeing, too many entries)") {
  ZipEnd end;
  const std::vector<std::uint8_t> tiny(21, 0);
  CHECK(zip_find_end(tiny.data(), tiny.size(), tiny.size(), end) ==
        "pytorch_model.bin: not a ZIP archive: 21 bytes, fewer than the 22 of an end of central directory record");
  auto file = read_bin("plain_dict.bin");
  CHECK(zip_find_end(file.data() + 1, file.size() - 1, file.size(), end) ==
        "pytorch_model.bin: the end records are read from the last min(file size, 65633) = 1011 bytes, not 1010");
  const std::size_t eocd = file.size() - 22;
  REQUIRE(get32(file, eocd) == 0x06054b50);
  put16(file, eocd + 10, 5);
  CHECK(parse_error(file) ==
        "pytorch_model.bin: the end record (5 entries, directory of 255 bytes at 658) disagrees with the ZIP64 end record "
        "(4 entries, 255 bytes at 658)");
  file = read_bin("rezipped_little.bin");  // no ZIP64 record: the end record alone
  const std::size_t end_record = file.size() - 22;
  put16(file, end_record + 8, 1000);
  put16(file, end_record + 10, 1000);
  CHECK(parse_error(file) == "pytorch_model.bin: 1000 entries cannot fit a central directory of 321 bytes");
  file = read_bin("rezipped_little.bin");
  put32(file, end_record + 12, get32(file, end_record + 12) - 1);
  CHECK(parse_error(file) == "pytorch_model.bin: the central directory of 320 bytes at 530 does not end where the end record begins (851)");
  // A comment after the end record: its length must reach the end of the file exactly.
  file = read_bin("rezipped_little.bin");
  put16(file, end_record + 20, 3);
  file.insert(file.end(), {'a', 'b', 'c'});
  CHECK(parse_error(file) == "");
  file.push_back('d');
  CHECK(parse_error(file) == "pytorch_model.bin: a ZIP archive cut short or damaged: no end of central directory record in its 877 bytes");
}

TEST_CASE("zip: central directory records (a name not UTF-8, two of one name, encryption, overlapping entries)") {
  auto file = read_bin("rezipped_little.bin");
  std::size_t record = central_record(file, "plain_dict/data.pkl");
  file[record + 46] = 0xff;
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"\\xfflain_dict/data.pkl\" has a name that is not UTF-8");
  file = read_bin("rezipped_little.bin");
  record = central_record(file, "plain_dict/data/1");
  file[record + 46 + 16] = '0';
  CHECK(parse_error(file) == "pytorch_model.bin: two entries are named \"plain_dict/data/0\"");
  file = read_bin("rezipped_little.bin");
  record = central_record(file, "plain_dict/data.pkl");
  file[record + 8] |= 1;
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data.pkl\" is encrypted");
  file = read_bin("plain_dict.bin");
  const std::size_t first = central_record(file, "plain_dict/data/0"), second = central_record(file, "plain_dict/data/1");
  const std::uint32_t at = get32(file, first + 42);
  put32(file, second + 42, at + 10);
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data/0\" (local header at " + std::to_string(at) +
                                 ", 24 bytes of data) overlaps entry \"plain_dict/data/1\" at " + std::to_string(at + 10));
  file = read_bin("plain_dict.bin");
  put32(file, first + 42, at + 4);
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data/0\" has no local header at " + std::to_string(at + 4) +
                                 ", where the central directory points");
  file = read_bin("plain_dict.bin");
  put32(file, first + 42, 0xfffffff0u);
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data/0\": its local header at 4294967280 and 24 bytes of data do not "
                                 "fit before the central directory at 658");
}

TEST_CASE("zip: local headers (a name that differs, an extra field past the room, CRC disagreeing with the directory)") {
  auto file = read_bin("rezipped_little.bin");
  const std::size_t record = central_record(file, "plain_dict/data/0");
  const std::size_t local = get32(file, record + 42);
  file[local + 30 + 16] = '9';
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data/0\"'s local header names another entry");
  file = read_bin("rezipped_little.bin");
  put16(file, local + 28, 60000);
  CHECK(parse_error(file) == "pytorch_model.bin: entry \"plain_dict/data/0\"'s local header (60047 bytes at " + std::to_string(local) +
                                 ") and its 24 bytes of data run past " + std::to_string(local + 30 + 17 + 24) +
                                 ", where the next entry or the central directory begins");
  file = read_bin("rezipped_little.bin");  // zipfile writes the CRC and sizes into the local header
  file[local + 14] ^= 1;
  CHECK(parse_error(file).rfind("pytorch_model.bin: entry \"plain_dict/data/0\"'s local header (CRC-32 0x", 0) == 0);
}

// torch.save(tensor, 'x.pt'), as a student saves one intermediate of notebook 05 for the One query lab's
// build-it checker (tests/fixtures/make_build_steps_fixtures.py): one entry named "tensor". make_batch's
// digits are int64: refused as weights, read as numbers when asked for (`integers`).
TEST_CASE("torch checkpoint (zip, pickle): a file of one tensor reads as one entry; integers on request") {
  const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/build_steps/";
  const SafeTensorsFile expected = load_fixture("build_steps/expected.safetensors");
  for (const std::string step : {"embedding", "attention", "batch.x"}) {
    CAPTURE(step);
    std::ifstream in(dir + step + ".pt", std::ios::binary);
    REQUIRE(in.good());
    const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    TorchCheckpointIndex index;
    REQUIRE(parse_torch_checkpoint(file.data(), file.size(), index) == "");
    REQUIRE(index.tensors.size() == 1);
    const TorchTensor& t = index.tensors[0];
    CHECK(t.name == "tensor");
    CHECK(t.shape == expected.tensors.at(step).shape);
    std::vector<float> got(std::size_t(t.numel()));
    const bool integer = step == "batch.x";
    CHECK(t.dtype == (integer ? "I64" : "F32"));
    if (integer) {
      CHECK(torch_tensor_to_float(t, file.data() + t.begin, t.end - t.begin, got.data()) ==
            "pytorch_model.bin: tensor \"tensor\" has dtype I64, not a float");
    }
    REQUIRE(torch_tensor_to_float(t, file.data() + t.begin, t.end - t.begin, got.data(), true) == "");
    CHECK(got == testing::tensor_f(expected, step));
  }
}

TEST_CASE("torch checkpoint: integer tensors as numbers, sign-extended from each width") {
  // The I64, I32, I16 and I8 of state_dict.bin (make_torch_bin_fixtures.py) are covered by the fixture
  // above for I64; here the narrower widths, little-endian, their sign bits extended.
  TorchTensor t;
  t.name = "t";
  t.shape = {2};
  t.stride = {1};
  for (const auto& [dtype, bytes, want] : std::vector<std::tuple<std::string, std::vector<std::uint8_t>, std::vector<float>>>{
           {"I8", {0xff, 0x7f}, {-1.0f, 127.0f}},
           {"U8", {0xff, 0x7f}, {255.0f, 127.0f}},
           {"I16", {0xfe, 0xff, 0x00, 0x01}, {-2.0f, 256.0f}},
           {"I32", {0xff, 0xff, 0xff, 0xff, 0x10, 0x00, 0x00, 0x00}, {-1.0f, 16.0f}},
           {"BOOL", {0x01, 0x00}, {1.0f, 0.0f}}}) {
    CAPTURE(dtype);
    t.dtype = dtype;
    t.span = 2;
    t.begin = 0;
    t.end = bytes.size();
    std::vector<float> got(2);
    REQUIRE(torch_tensor_to_float(t, bytes.data(), bytes.size(), got.data(), true) == "");
    CHECK(got == want);
  }
}
