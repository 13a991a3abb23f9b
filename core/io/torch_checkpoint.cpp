#include "torch_checkpoint.h"

#include <algorithm>
#include <unordered_map>

#include "safetensors.h"

namespace attnlab {

namespace {

const std::string kFile = "pytorch_model.bin: ";

std::string n(std::uint64_t v) { return std::to_string(v); }

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

std::string locate_torch_archive(const ZipDirectory& directory, TorchArchive& out) {
  out = TorchArchive{};
  if (directory.entries.empty()) return kFile + "the archive is empty";
  // torch.save puts every entry in one folder, named after the file it was given (or "archive").
  const std::string& first = directory.entries[0].name;
  const std::size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0)
    return kFile + "entry " + zip_shown_name(first) + " is in no folder; torch.save puts every entry in one";
  TorchArchive archive;
  archive.prefix = first.substr(0, slash);
  const std::string folder = archive.prefix + "/";
  for (const ZipEntry& e : directory.entries) {
    if (!starts_with(e.name, folder) || e.name.size() == folder.size())
      return kFile + "entry " + zip_shown_name(e.name) + " is not in the folder " + zip_shown_name(folder) +
             " of the others; torch.save puts every entry in one";
  }
  archive.pickle = directory.find(folder + "data.pkl");
  archive.byteorder = directory.find(folder + "byteorder");
  if (archive.pickle < 0)
    return kFile + "the archive has no " + zip_shown_name(folder + "data.pkl") + ": it is not a checkpoint written by torch.save";
  out = std::move(archive);
  return {};
}

std::string check_torch_byteorder(const std::uint8_t* bytes, std::uint64_t size) {
  const std::string text(reinterpret_cast<const char*>(bytes), std::size_t(std::min<std::uint64_t>(size, 64)));
  if (size == 6 && text == "little") return {};
  if (size == 3 && text == "big")
    return kFile + "its byteorder entry says \"big\": the checkpoint was saved on a big-endian machine, and only little-endian storages are read";
  return kFile + "its byteorder entry says " + zip_shown_name(text) + "; torch.save writes \"little\" or \"big\"";
}

const TorchTensor* TorchCheckpointIndex::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string build_torch_checkpoint_index(const ZipDirectory& directory, const TorchArchive& archive, const TorchPickle& pickle,
                                         TorchCheckpointIndex& out) {
  out = TorchCheckpointIndex{};
  const std::string data_folder = archive.prefix + "/data/";
  TorchCheckpointIndex index;
  index.prefix = archive.prefix;
  index.storages = pickle.storages;
  // The entries under data/ by name (looked up once per storage: ZipDirectory::find is linear, and an
  // archive may hold 100,000 entries).
  std::unordered_map<std::string, std::size_t> entries;
  for (std::size_t i = 0; i < directory.entries.size(); ++i)
    if (starts_with(directory.entries[i].name, data_folder)) entries.emplace(directory.entries[i].name, i);
  std::unordered_map<std::string, std::size_t> named;  // entry name -> storage
  for (std::size_t i = 0; i < index.storages.size(); ++i) {
    TorchStorage& s = index.storages[i];
    const std::string entry_name = data_folder + s.key;
    const auto found = entries.find(entry_name);
    const long e = found == entries.end() ? -1 : long(found->second);
    if (e < 0)
      return kFile + "data.pkl names storage " + zip_shown_name(s.key) + ", but the archive has no entry " + zip_shown_name(entry_name);
    const ZipEntry& entry = directory.entries[std::size_t(e)];
    if (!entry.data_located())
      return kFile + "entry " + zip_shown_name(entry_name) + ": its local header has not been read (zip_read_local_header)";
    std::uint64_t bytes = 0;
    const bool overflow = __builtin_mul_overflow(std::uint64_t(s.numel), std::uint64_t(torch_dtype_size(s.dtype)), &bytes);
    if (overflow || bytes != entry.size)
      return kFile + "storage " + zip_shown_name(s.key) + " of " + n(std::uint64_t(s.numel)) + " x " + s.dtype + " needs " +
             (overflow ? std::string("more bytes than 64 bits count") : n(bytes) + " bytes") + ", but entry " +
             zip_shown_name(entry_name) + " has " + n(entry.size);
    s.begin = entry.data_offset;
    s.end = entry.data_offset + entry.size;
    named.emplace(entry_name, i);
  }
  // torch.save writes exactly the storages its pickle names; anything else under data/ is not its.
  for (const ZipEntry& e : directory.entries) {
    if (starts_with(e.name, data_folder) && named.find(e.name) == named.end())
      return kFile + "entry " + zip_shown_name(e.name) + " is a storage that data.pkl does not name";
  }
  index.tensors = pickle.tensors;
  for (TorchTensor& t : index.tensors) {
    // Inside the storage (parse_torch_pickle checked offset + span <= numel), so inside its entry.
    const TorchStorage& s = index.storages[t.storage];
    const std::uint64_t element = torch_dtype_size(s.dtype);
    t.begin = s.begin + std::uint64_t(t.storage_offset) * element;
    t.end = t.begin + std::uint64_t(t.span) * element;
    if (t.span == 0) t.begin = t.end = s.begin;  // no elements: nothing to read, whatever the offset
  }
  out = std::move(index);
  return {};
}

namespace {

bool is_integer_dtype(const std::string& dtype) {
  return dtype == "I64" || dtype == "I32" || dtype == "I16" || dtype == "I8" || dtype == "U8" || dtype == "BOOL";
}

// n little-endian integers (or bools) as torch.save writes them -> floats.
void decode_integers(const std::string& dtype, const std::uint8_t* bytes, std::size_t n, float* out) {
  const std::size_t size = torch_dtype_size(dtype);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t u = 0;
    for (std::size_t b = 0; b < size; ++b) u |= std::uint64_t(bytes[i * size + b]) << (8 * b);
    if (dtype == "U8" || dtype == "BOOL") {
      out[i] = float(u);
    } else {
      const unsigned shift = unsigned(64 - 8 * size);  // sign-extend from the element's width
      out[i] = float(std::int64_t(u << shift) >> shift);
    }
  }
}

}  // namespace

std::string torch_tensor_to_float(const TorchTensor& t, const std::uint8_t* bytes, std::uint64_t size, float* out, bool integers) {
  const std::string tensor = kFile + "tensor " + zip_shown_name(t.name);
  const bool integer = is_integer_dtype(t.dtype);
  if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16" && t.dtype != "F64" && !(integers && integer))
    return tensor + " has dtype " + t.dtype + ", not a float";
  const auto decode = [&](const std::uint8_t* from, std::size_t n, float* to) {
    if (integer) decode_integers(t.dtype, from, n, to);
    else decode_floats(t.dtype, from, n, to);
  };
  if (size != t.end - t.begin)
    return tensor + " is read from its " + n(t.end - t.begin) + " bytes [" + n(t.begin) + ", " + n(t.end) + "); " + n(size) + " were given";
  const std::int64_t count = t.numel();
  if (count == 0) return {};
  const std::size_t element = torch_dtype_size(t.dtype);
  if (t.is_contiguous()) {
    decode(bytes, std::size_t(count), out);
    return {};
  }
  // An odometer over the indices, the last fastest (row-major); `at` is the element's position in
  // `bytes`, which start at the tensor's storage_offset. Every position is below span (checked at parse).
  const std::size_t rank = t.shape.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    decode(bytes + std::size_t(at) * element, 1, out + i);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < t.shape[d]) {
        at += t.stride[d];
        break;
      }
      at -= (t.shape[d] - 1) * t.stride[d];
      index[d] = 0;
    }
  }
  return {};
}

std::string parse_torch_checkpoint(const std::uint8_t* data, std::uint64_t size, TorchCheckpointIndex& out) {
  out = TorchCheckpointIndex{};
  const std::uint64_t tail = std::min(size, kZipTailBytes);
  ZipEnd end;
  std::string error = zip_find_end(data + (size - tail), tail, size, end);
  if (!error.empty()) return error;
  ZipDirectory directory;
  error = parse_zip_directory(data + end.directory_offset, end.directory_size, end, directory);
  if (!error.empty()) return error;
  TorchArchive archive;
  error = locate_torch_archive(directory, archive);
  if (!error.empty()) return error;
  // Every entry's local header and CRC-32 (the central directory placed each inside the file).
  for (ZipEntry& e : directory.entries) {
    std::uint64_t length = 0;
    error = zip_local_header_length(data + e.local_header_offset, e, length);
    if (error.empty()) error = zip_read_local_header(data + e.local_header_offset, length, e);
    if (error.empty()) error = zip_check_crc(e, data + e.data_offset, e.size);
    if (!error.empty()) return error;
  }
  if (archive.byteorder >= 0) {
    const ZipEntry& e = directory.entries[std::size_t(archive.byteorder)];
    error = check_torch_byteorder(data + e.data_offset, e.size);
    if (!error.empty()) return error;
  }
  const ZipEntry& pkl = directory.entries[std::size_t(archive.pickle)];
  TorchPickle pickle;
  error = parse_torch_pickle(data + pkl.data_offset, pkl.size, pkl.name, pickle);
  if (!error.empty()) return error;
  return build_torch_checkpoint_index(directory, archive, pickle, out);
}

TorchCheckpointReader::TorchCheckpointReader(std::uint64_t file_size) : file_size_(file_size) {
  const std::uint64_t tail = std::min(file_size, kZipTailBytes);
  wanted_ = {{file_size - tail, file_size}};
}

std::string TorchCheckpointReader::fail(std::string error) {
  stage_ = Stage::failed;
  wanted_.clear();
  asked_.clear();
  pending_.clear();
  directory_ = ZipDirectory{};
  pickle_ = TorchPickle{};
  index_ = TorchCheckpointIndex{};
  return error;
}

void TorchCheckpointReader::ask_headers(std::vector<std::size_t> entries) {
  // One read per entry holds the whole local header of a torch archive (zip_reader.h, step 3); the room
  // holds at least 30 + name + data bytes (parse_zip_directory), so the read never leaves the entry's room.
  wanted_.clear();
  for (std::size_t i : entries) {
    const ZipEntry& e = directory_.entries[i];
    wanted_.push_back({e.local_header_offset, std::min(e.local_header_offset + kZipLocalHeaderBytes + e.name.size() + 128, e.room_end)});
  }
  asked_ = std::move(entries);
}

// The asked local headers, in wanted_'s order; those whose extra field runs past the bytes read are
// asked for again, whole (wanted_ then holds just them).
std::string TorchCheckpointReader::read_headers(const std::uint8_t* bytes) {
  std::vector<std::size_t> again;
  std::vector<ByteRange> again_ranges;
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < asked_.size(); ++k) {
    ZipEntry& e = directory_.entries[asked_[k]];
    const std::uint8_t* header = bytes + at;
    const std::uint64_t read = wanted_[k].end - wanted_[k].begin;  // >= 30 + name (see ask_headers)
    at += read;
    std::uint64_t length = 0;
    std::string error = zip_local_header_length(header, e, length);
    if (!error.empty()) return error;
    if (length > read) {
      again.push_back(asked_[k]);
      again_ranges.push_back({e.local_header_offset, e.local_header_offset + length});
      continue;
    }
    error = zip_read_local_header(header, length, e);
    if (!error.empty()) return error;
  }
  wanted_ = std::move(again_ranges);
  asked_ = std::move(again);
  return {};
}

std::string TorchCheckpointReader::next_storage_headers() {
  stage_ = Stage::storage_headers;
  if (pending_.empty()) {
    std::string error = build_torch_checkpoint_index(directory_, archive_, pickle_, index_);
    if (!error.empty()) return fail(std::move(error));
    stage_ = Stage::done;
    wanted_.clear();
    asked_.clear();
    directory_ = ZipDirectory{};
    pickle_ = TorchPickle{};
    return {};
  }
  const std::size_t n_ask = std::min(pending_.size(), kTorchHeaderBatch);
  ask_headers(std::vector<std::size_t>(pending_.begin(), pending_.begin() + std::ptrdiff_t(n_ask)));
  pending_.erase(pending_.begin(), pending_.begin() + std::ptrdiff_t(n_ask));
  return {};
}

std::string TorchCheckpointReader::give(const std::uint8_t* bytes, std::uint64_t size) {
  if (stage_ == Stage::done || stage_ == Stage::failed) return kFile + "no bytes were asked for";
  std::uint64_t asked = 0;
  for (const ByteRange& r : wanted_) asked += r.end - r.begin;
  if (size != asked) return fail(kFile + n(size) + " bytes were given for the " + n(asked) + " asked for");
  std::string error;
  switch (stage_) {
    case Stage::tail: {
      ZipEnd end;
      error = zip_find_end(bytes, size, file_size_, end);
      if (!error.empty()) return fail(std::move(error));
      directory_.end = end;
      wanted_ = {{end.directory_offset, end.directory_offset + end.directory_size}};
      stage_ = Stage::directory;
      return {};
    }
    case Stage::directory: {
      const ZipEnd end = directory_.end;
      error = parse_zip_directory(bytes, size, end, directory_);
      if (error.empty()) error = locate_torch_archive(directory_, archive_);
      if (!error.empty()) return fail(std::move(error));
      const ZipEntry& pkl = directory_.entries[std::size_t(archive_.pickle)];
      // parse_torch_pickle refuses an oversized pickle from its size alone, before it reads a byte.
      if (pkl.size > kTorchPickleMaxBytes) return fail(parse_torch_pickle(nullptr, pkl.size, pkl.name, pickle_));
      std::vector<std::size_t> first = {std::size_t(archive_.pickle)};
      if (archive_.byteorder >= 0) {
        const ZipEntry& order = directory_.entries[std::size_t(archive_.byteorder)];
        if (order.size > 64)
          return fail(kFile + "its byteorder entry has " + n(order.size) + " bytes; torch.save writes \"little\" or \"big\"");
        first.push_back(std::size_t(archive_.byteorder));
      }
      ask_headers(std::move(first));
      stage_ = Stage::first_headers;
      return {};
    }
    case Stage::first_headers: {
      error = read_headers(bytes);
      if (!error.empty()) return fail(std::move(error));
      if (!wanted_.empty()) return {};
      const ZipEntry& pkl = directory_.entries[std::size_t(archive_.pickle)];
      wanted_ = {{pkl.data_offset, pkl.data_offset + pkl.size}};
      if (archive_.byteorder >= 0) {
        const ZipEntry& order = directory_.entries[std::size_t(archive_.byteorder)];
        wanted_.push_back({order.data_offset, order.data_offset + order.size});
      }
      stage_ = Stage::pickle;
      return {};
    }
    case Stage::pickle: {
      const ZipEntry& pkl = directory_.entries[std::size_t(archive_.pickle)];
      error = zip_check_crc(pkl, bytes, pkl.size);
      if (error.empty() && archive_.byteorder >= 0) {
        const ZipEntry& order = directory_.entries[std::size_t(archive_.byteorder)];
        error = zip_check_crc(order, bytes + pkl.size, order.size);
        if (error.empty()) error = check_torch_byteorder(bytes + pkl.size, order.size);
      }
      if (error.empty()) error = parse_torch_pickle(bytes, pkl.size, pkl.name, pickle_);
      if (!error.empty()) return fail(std::move(error));
      const std::string data_folder = archive_.prefix + "/data/";
      for (std::size_t i = 0; i < directory_.entries.size(); ++i)
        if (starts_with(directory_.entries[i].name, data_folder)) pending_.push_back(i);
      return next_storage_headers();
    }
    case Stage::storage_headers: {
      error = read_headers(bytes);
      if (!error.empty()) return fail(std::move(error));
      if (!wanted_.empty()) return {};
      return next_storage_headers();
    }
    case Stage::done:
    case Stage::failed:
      break;
  }
  return kFile + "no bytes were asked for";
}

}  // namespace attnlab
