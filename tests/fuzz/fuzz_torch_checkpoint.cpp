// libFuzzer target for the pytorch_model.bin reader (core/io/zip_reader.cpp, torch_pickle.cpp,
// torch_checkpoint.cpp), built with ASan and UBSan by `tests/fuzz/run_cpp_fuzz.sh RUNS torch_checkpoint`.
// The first byte picks the mode (its value mod 3); the rest is the input:
//   0  a whole .bin, read three times: step by step (each step handed a heap copy of just the range it
//      asks for, so ASan sees any read past it; a CRC-32 mismatch of data.pkl is noted and passed over,
//      or mutations of the pickle would never reach the unpickler); by TorchCheckpointReader, as the
//      page and the CLI read it (each round of wanted ranges handed as one exact heap copy); and by
//      parse_torch_checkpoint; every tensor of an accepted file is then read into float32
//   1  a data.pkl alone, for parse_torch_pickle; an accepted pickle's tensors are read from made-up
//      storage bytes and compared with a plain per-element reference
//   2  the numbers of a state_dict (storages' dtypes and sizes; tensors' storage, offset, sizes and
//      strides, up to 2^62), written as torch.save would pickle them: most mutated pickles die at the
//      first bad byte, so this mode is what tries the bounds check on sizes, strides and offsets, against
//      an oracle in 128-bit arithmetic: accepted exactly when every tensor lies inside its storage
// Beyond "no crash, no UB, no leak, no allocation past -malloc_limit_mb, no hang", the promises: a
// refusal leaves the output empty and says "pytorch_model.bin: "; an accepted file's storages and
// tensors lie inside the file, each tensor inside its storage, storages apart; whatever the whole-file
// parse accepts the streamed steps and the reader accept with the same index; the reader asks only for
// ranges inside the file and ends; strided reads match the reference.
// A broken promise aborts, which libFuzzer reports with the input (seeds: tests/fuzz/corpus/torch/,
// written by tests/fixtures/make_torch_bin_fixtures.py). TORCH_FUZZ_MESSAGES=1 prints, at exit, how many
// inputs were accepted and a tally of the refusals by kind (numbers and names elided).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "io/torch_checkpoint.h"

using namespace attnlab;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

bool is_message(const std::string& error) { return error.rfind("pytorch_model.bin: ", 0) == 0; }

struct Stats {
  long files = 0, files_accepted = 0, files_streamed = 0, files_read = 0, pickles = 0, pickles_accepted = 0, generated = 0, generated_accepted = 0;
  long tensors_read = 0;
  std::map<std::string, long> messages;  // refusals with numbers as N and quoted names as "…"
  bool keep = false;
} g_stats;

void print_stats() {
  std::fprintf(stderr,
               "[torch-fuzz] files %ld (accepted %ld whole, %ld streamed: a CRC-32 mismatch passed over, %ld by the reader), pickles %ld "
               "(accepted %ld), generated state_dicts %ld (accepted %ld), float tensors read %ld\n",
               g_stats.files, g_stats.files_accepted, g_stats.files_streamed, g_stats.files_read, g_stats.pickles, g_stats.pickles_accepted, g_stats.generated,
               g_stats.generated_accepted, g_stats.tensors_read);
  std::vector<std::pair<long, std::string>> sorted;
  for (const auto& m : g_stats.messages) sorted.push_back({m.second, m.first});
  std::sort(sorted.rbegin(), sorted.rend());
  for (const auto& m : sorted) std::fprintf(stderr, "[torch-fuzz] %9ld  %s\n", m.first, m.second.c_str());
}

void count_message(const std::string& m) {
  if (!g_stats.keep || m.empty()) return;
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < m.size() && out.size() < 150; ++i) {
    const char c = m[i];
    if (quoted && c == '\\') {
      ++i;  // an escape inside a quoted name
    } else if (c == '"') {
      out += quoted ? "\"" : "\"…";
      quoted = !quoted;
    } else if (!quoted) {
      if (c == '0' && i + 1 < m.size() && m[i + 1] == 'x') {  // a hex number (CRC-32s, opcodes)
        for (i += 2; i < m.size() && std::isxdigit(static_cast<unsigned char>(m[i])); ++i) {}
        --i;
        out += 'N';
      } else if (c >= '0' && c <= '9') {
        if (out.empty() || out.back() != 'N') out += 'N';
      } else {
        out += c;
      }
    }
  }
  ++g_stats.messages[out];
}

// Reading a tensor allocates numel floats: a hostile stride-0 tensor may claim 2^62 of them, which the
// real loader refuses by shape (the model says what it expects); the harness reads those up to this.
constexpr std::int64_t kMaxReadElements = 1 << 16;

bool is_float(const std::string& dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64"; }

// Element i (row-major) of t, from bytes that start at its storage_offset: the index arithmetic spelled
// out, to check torch_tensor_to_float's odometer.
float reference_element(const TorchTensor& t, const std::uint8_t* bytes, std::int64_t i) {
  std::int64_t at = 0;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    at += (i % t.shape[d]) * t.stride[d];
    i /= t.shape[d];
  }
  float v = 0;
  decode_floats(t.dtype, bytes + std::size_t(at) * torch_dtype_size(t.dtype), 1, &v);
  return v;
}

// t's elements from `bytes` (a heap copy of exactly its span): no error for a float tensor, the same
// bits as the reference, and an integer tensor refused.
void read_and_check(const TorchTensor& t, const std::vector<std::uint8_t>& bytes) {
  const std::int64_t n = t.numel();
  require(n >= 0, "numel() >= 0");
  if (n > kMaxReadElements) return;
  std::vector<float> out(static_cast<std::size_t>(n));
  const std::string error = torch_tensor_to_float(t, bytes.data(), bytes.size(), out.data());
  if (!is_float(t.dtype)) {
    require(is_message(error) && error.find("not a float") != std::string::npos, "an integer tensor is refused");
    return;
  }
  require(error.empty(), "a float tensor of an accepted file reads");
  ++g_stats.tensors_read;
  for (std::int64_t i = 0; i < n; ++i) {
    const float expected = reference_element(t, bytes.data(), i);
    require(std::memcmp(&expected, &out[std::size_t(i)], 4) == 0, "strided read = per-element reference");
  }
}

void check_tensor_shape(const TorchTensor& t, std::size_t storages) {
  require(t.shape.size() == t.stride.size() && t.shape.size() <= kTorchMaxRank, "size and stride of one rank");
  require(t.storage < storages, "a tensor's storage exists");
  require(t.storage_offset >= 0 && t.span >= 0, "offset and span >= 0");
  for (std::size_t d = 0; d < t.shape.size(); ++d) require(t.shape[d] >= 0 && t.stride[d] >= 0, "sizes and strides >= 0");
  require((t.numel() == 0) == (t.span == 0), "a tensor has a span exactly when it has elements");
}

// ---- mode 0: a whole file

std::string stream(const std::vector<std::uint8_t>& file, TorchCheckpointIndex& out) {
  auto range = [&](std::uint64_t begin, std::uint64_t end) {
    require(begin <= end && end <= file.size(), "every range a step asks for lies inside the file");
    return std::vector<std::uint8_t>(file.begin() + std::ptrdiff_t(begin), file.begin() + std::ptrdiff_t(end));
  };
  const std::uint64_t size = file.size(), tail_size = std::min(size, kZipTailBytes);
  ZipEnd end;
  const auto tail = range(size - tail_size, size);
  std::string error = zip_find_end(tail.data(), tail.size(), size, end);
  if (!error.empty()) return error;
  require(end.directory_offset + end.directory_size == end.end_offset && end.end_offset <= size, "the directory ends at the end record");
  ZipDirectory directory;
  const auto central = range(end.directory_offset, end.directory_offset + end.directory_size);
  error = parse_zip_directory(central.data(), central.size(), end, directory);
  if (!error.empty()) {
    require(directory.entries.empty(), "a refused directory leaves no entries");
    return error;
  }
  TorchArchive archive;
  error = locate_torch_archive(directory, archive);
  if (!error.empty()) return error;
  for (ZipEntry& e : directory.entries) {
    require(e.local_header_offset < e.room_end && e.room_end <= end.directory_offset, "an entry's room lies before the directory");
    const auto first30 = range(e.local_header_offset, e.local_header_offset + kZipLocalHeaderBytes);
    std::uint64_t length = 0;
    error = zip_local_header_length(first30.data(), e, length);
    if (!error.empty()) return error;
    const auto header = range(e.local_header_offset, e.local_header_offset + length);
    error = zip_read_local_header(header.data(), header.size(), e);
    if (!error.empty()) return error;
    require(e.data_offset + e.size <= e.room_end, "an entry's data lies inside its room");
  }
  const ZipEntry& pkl = directory.entries[std::size_t(archive.pickle)];
  const auto pickle_bytes = range(pkl.data_offset, pkl.data_offset + pkl.size);
  const std::string crc = zip_check_crc(pkl, pickle_bytes.data(), pickle_bytes.size());
  require(crc.empty() || is_message(crc), "a CRC-32 mismatch is a message");
  TorchPickle pickle;
  error = parse_torch_pickle(pickle_bytes.data(), pickle_bytes.size(), pkl.name, pickle);
  if (!error.empty()) return error;
  return build_torch_checkpoint_index(directory, archive, pickle, out);
}

// TorchCheckpointReader, as raw_marian.cpp drives it: each round's wanted ranges, concatenated.
std::string read_with_reader(const std::vector<std::uint8_t>& file, TorchCheckpointIndex& out) {
  TorchCheckpointReader reader(file.size());
  for (int round = 0; !reader.done(); ++round) {
    require(round < 1 << 20, "the reader ends");
    require(!reader.wanted().empty(), "a reader that is not done asks for something");
    std::vector<std::uint8_t> bytes;
    for (const ByteRange& r : reader.wanted()) {
      require(r.begin <= r.end && r.end <= file.size(), "every range the reader asks for lies inside the file");
      bytes.insert(bytes.end(), file.begin() + std::ptrdiff_t(r.begin), file.begin() + std::ptrdiff_t(r.end));
    }
    const std::vector<std::uint8_t> exact(bytes);  // its own allocation of exactly these bytes
    const std::string error = reader.give(exact.data(), exact.size());
    if (!error.empty()) {
      require(is_message(error), "a reader's refusal starts with pytorch_model.bin:");
      require(reader.wanted().empty() && reader.index().tensors.empty() && reader.index().storages.empty(),
              "a refused reader asks for nothing more and has no index");
      return error;
    }
  }
  out = reader.index();
  return {};
}

// An accepted index's promises: storages inside the file and apart, each tensor inside its storage,
// its range its span; every tensor read into float32 matches the per-element reference.
void check_index(const TorchCheckpointIndex& index, const std::vector<std::uint8_t>& file) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const TorchStorage& s : index.storages) {
    require(s.begin <= s.end && s.end <= file.size(), "a storage lies inside the file");
    require(s.numel >= 0 && s.end - s.begin == std::uint64_t(s.numel) * torch_dtype_size(s.dtype), "storage bytes = numel x dtype size");
    if (s.end > s.begin) ranges.emplace_back(s.begin, s.end);
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) require(ranges[i - 1].second <= ranges[i].first, "storages do not overlap");
  for (const TorchTensor& t : index.tensors) {
    check_tensor_shape(t, index.storages.size());
    const TorchStorage& s = index.storages[t.storage];
    require(s.begin <= t.begin && t.begin <= t.end && t.end <= s.end, "a tensor lies inside its storage");
    require(t.end - t.begin == std::uint64_t(t.span) * torch_dtype_size(t.dtype), "a tensor's range is its span");
    read_and_check(t, std::vector<std::uint8_t>(file.begin() + std::ptrdiff_t(t.begin), file.begin() + std::ptrdiff_t(t.end)));
  }
}

bool same_index(const TorchCheckpointIndex& a, const TorchCheckpointIndex& b) {
  if (a.tensors.size() != b.tensors.size() || a.storages.size() != b.storages.size()) return false;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const TorchTensor &x = a.tensors[i], &y = b.tensors[i];
    if (!(x.name == y.name && x.dtype == y.dtype && x.shape == y.shape && x.stride == y.stride && x.storage_offset == y.storage_offset &&
          x.begin == y.begin && x.end == y.end))
      return false;
  }
  return true;
}

void whole_file(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> file(data, data + size);
  TorchCheckpointIndex whole, streamed, read;
  const std::string whole_error = parse_torch_checkpoint(file.data(), file.size(), whole);
  const std::string stream_error = stream(file, streamed);
  const std::string reader_error = read_with_reader(file, read);
  ++g_stats.files;
  count_message(whole_error);
  if (whole_error.empty()) ++g_stats.files_accepted;
  if (reader_error.empty()) ++g_stats.files_read;
  if (!whole_error.empty()) {
    require(is_message(whole_error), "a refusal starts with pytorch_model.bin:");
    require(whole.tensors.empty() && whole.storages.empty(), "a refused file leaves no index");
  } else {
    require(reader_error.empty() && same_index(whole, read), "what the whole-file parse accepts, the reader accepts with the same index");
  }
  // The reader reads less than the whole-file parse (not the other entries' headers, nor the storages'
  // CRC-32s): what it accepts keeps the same promises.
  if (reader_error.empty()) check_index(read, file);
  if (!stream_error.empty()) {
    require(is_message(stream_error), "a streamed refusal starts with pytorch_model.bin:");
    require(streamed.tensors.empty() && streamed.storages.empty(), "a refused stream leaves no index");
    require(!whole_error.empty(), "what the whole-file parse accepts, the stream accepts");
    return;
  }
  ++g_stats.files_streamed;
  if (whole_error.empty()) require(same_index(whole, streamed), "the same index");
  // The streamed index (a superset: it passes CRC mismatches over) keeps its promises.
  check_index(streamed, file);
}

// ---- mode 1: a pickle alone

void check_pickle(const std::string& error, const TorchPickle& pickle);

void pickle_only(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);  // exactly the input, so ASan sees a read past it
  TorchPickle pickle;
  const std::string error = parse_torch_pickle(bytes.data(), bytes.size(), "archive/data.pkl", pickle);
  ++g_stats.pickles;
  count_message(error);
  if (error.empty()) ++g_stats.pickles_accepted;
  check_pickle(error, pickle);
}

void check_pickle(const std::string& error, const TorchPickle& pickle) {
  if (!error.empty()) {
    require(error.rfind("pytorch_model.bin: entry \"archive/data.pkl\", byte ", 0) == 0, "a refusal names the entry and byte");
    require(pickle.tensors.empty() && pickle.storages.empty(), "a refused pickle leaves nothing");
    return;
  }
  for (const TorchTensor& t : pickle.tensors) {
    check_tensor_shape(t, pickle.storages.size());
    const TorchStorage& s = pickle.storages[t.storage];
    require(t.dtype == s.dtype && torch_dtype_size(t.dtype) > 0, "a tensor has its storage's known dtype");
    require(t.span == 0 || (t.storage_offset < s.numel && t.span <= s.numel - t.storage_offset), "a tensor lies inside its storage");
    if (t.span > kMaxReadElements) continue;
    // Made-up storage bytes for its span, at made-up file offsets.
    const std::size_t element = torch_dtype_size(t.dtype);
    std::vector<std::uint8_t> span(std::size_t(t.span) * element);
    for (std::size_t i = 0; i < span.size(); ++i) span[i] = std::uint8_t(i * 37 + 11);
    TorchTensor placed = t;
    placed.begin = 1000;
    placed.end = 1000 + span.size();
    read_and_check(placed, span);
  }
}

// ---- mode 2: a state_dict's numbers, pickled as torch.save does

// The input as a stream of numbers; 0 once it runs out.
struct Numbers {
  const std::uint8_t* p;
  std::size_t n;
  std::uint64_t take(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(n ? (--n, *p++) : 0) << (8 * i);
    return v;
  }
  // Mostly small (what sizes and strides are), sometimes up to 2^62 (where the arithmetic can overflow).
  std::int64_t count() {
    const std::uint64_t kind = take(1);
    if (kind % 4 == 3) return std::int64_t(take(8) & ((std::uint64_t(1) << 62) - 1));
    if (kind % 4 == 2) return std::int64_t(take(2));
    return std::int64_t(take(1) % 9);
  }
};

struct PickleWriter {
  std::vector<std::uint8_t> b;
  void op(std::uint8_t c) { b.push_back(c); }
  void text(const std::string& s) {
    op('X');
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(s.size() >> (8 * i)));
    b.insert(b.end(), s.begin(), s.end());
  }
  void global(const std::string& m, const std::string& n) {
    op('c');
    b.insert(b.end(), m.begin(), m.end());
    op('\n');
    b.insert(b.end(), n.begin(), n.end());
    op('\n');
  }
  void integer(std::int64_t v) {  // as Python's pickler: BININT1, BININT2, BININT, LONG1
    if (v >= 0 && v < 256) { op('K'); op(std::uint8_t(v)); return; }
    if (v >= 0 && v < 65536) { op('M'); op(std::uint8_t(v)); op(std::uint8_t(v >> 8)); return; }
    if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      for (int i = 0; i < 4; ++i) op(std::uint8_t(std::uint64_t(v) >> (8 * i)));
      return;
    }
    op(0x8a);
    op(8);
    for (int i = 0; i < 8; ++i) op(std::uint8_t(std::uint64_t(v) >> (8 * i)));
  }
};

void generated(const std::uint8_t* data, std::size_t size) {
  static const char* kTypes[] = {"FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
                                 "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage"};
  Numbers in{data, size};
  const int storages = 1 + int(in.take(1) % 3), tensors = 1 + int(in.take(1) % 4);
  std::vector<int> type(std::size_t(storages), 0);
  std::vector<std::int64_t> numel(std::size_t(storages), 0);
  for (int i = 0; i < storages; ++i) {
    type[std::size_t(i)] = int(in.take(1) % 10);
    numel[std::size_t(i)] = in.count();
  }
  PickleWriter w;
  w.op(0x80);
  w.op(2);
  w.global("collections", "OrderedDict");
  w.op(')');
  w.op('R');
  w.op('(');
  bool expect_ok = true;
  for (int t = 0; t < tensors; ++t) {
    const int s = int(in.take(1) % std::uint64_t(storages));
    const std::int64_t offset = in.count();
    const int rank = int(in.take(1) % 5);
    std::vector<std::int64_t> shape, stride;
    for (int d = 0; d < rank; ++d) shape.push_back(in.count());
    for (int d = 0; d < rank; ++d) stride.push_back(in.count());
    w.text("t" + std::to_string(t));
    w.global("torch._utils", "_rebuild_tensor_v2");
    w.op('(');
    w.op('(');
    w.text("storage");
    w.global("torch", kTypes[type[std::size_t(s)]]);
    w.text(std::to_string(s));
    w.text("cpu");
    w.integer(numel[std::size_t(s)]);
    w.op('t');
    w.op('Q');
    w.integer(offset);
    w.op('(');
    for (std::int64_t v : shape) w.integer(v);
    w.op('t');
    w.op('(');
    for (std::int64_t v : stride) w.integer(v);
    w.op('t');
    w.op(0x89);
    w.global("collections", "OrderedDict");
    w.op(')');
    w.op('R');
    w.op('t');
    w.op('R');
    // The oracle, in exact arithmetic (every number is below 2^62, so nothing here can overflow 128 bits):
    // refused when a prefix product of the sizes passes int64 (the product is taken left to right, as
    // safetensors' reference does), or, for a tensor with elements, when a partial sum of
    // (size - 1) x stride does, or when offset + that sum is not below the storage's numel.
    const unsigned __int128 max64 = std::uint64_t(INT64_MAX);
    unsigned __int128 product = 1, reach = 0;
    bool ok = true;
    for (std::int64_t v : shape) {
      product = product * std::uint64_t(v);
      if (product > max64) { ok = false; break; }
    }
    if (ok && product > 0) {
      for (int d = 0; d < rank && ok; ++d) {
        const unsigned __int128 term = (unsigned __int128)std::uint64_t(shape[std::size_t(d)] - 1) * std::uint64_t(stride[std::size_t(d)]);
        reach += term;
        if (term > max64 || reach > max64) ok = false;
      }
      if (ok && (std::uint64_t(offset) + reach > max64 || std::uint64_t(offset) + reach >= std::uint64_t(numel[std::size_t(s)]))) ok = false;
    }
    expect_ok = expect_ok && ok;
  }
  w.op('u');
  w.op('.');
  TorchPickle pickle;
  const std::string error = parse_torch_pickle(w.b.data(), w.b.size(), "archive/data.pkl", pickle);
  ++g_stats.generated;
  count_message(error);
  if (error.empty()) ++g_stats.generated_accepted;
  if (!error.empty() && expect_ok) std::fprintf(stderr, "refused: %s\n", error.c_str());
  require(error.empty() == expect_ok, "a generated state_dict is accepted exactly when every tensor lies inside its storage");
  check_pickle(error, pickle);  // the reads and the other promises
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* keep = std::getenv("TORCH_FUZZ_MESSAGES");
  g_stats.keep = keep && *keep && std::strcmp(keep, "0") != 0;
  std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 3 == 0) whole_file(data + 1, size - 1);
  else if (data[0] % 3 == 1) pickle_only(data + 1, size - 1);
  else generated(data + 1, size - 1);
  return 0;
}
