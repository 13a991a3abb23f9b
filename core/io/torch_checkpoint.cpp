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

std::string torch_tensor_to_float(const TorchTensor& t, const std::uint8_t* bytes, std::uint64_t size, float* out) {
  const std::string tensor = kFile + "tensor " + zip_shown_name(t.name);
  if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16" && t.dtype != "F64")
    return tensor + " has dtype " + t.dtype + ", not a float";
  if (size != t.end - t.begin)
    return tensor + " is read from its " + n(t.end - t.begin) + " bytes [" + n(t.begin) + ", " + n(t.end) + "); " + n(size) + " were given";
  const std::int64_t count = t.numel();
  if (count == 0) return {};
  const std::size_t element = torch_dtype_size(t.dtype);
  if (t.is_contiguous()) {
    decode_floats(t.dtype, bytes, std::size_t(count), out);
    return {};
  }
  // An odometer over the indices, the last fastest (row-major); `at` is the element's position in
  // `bytes`, which start at the tensor's storage_offset. Every position is below span (checked at parse).
  const std::size_t rank = t.shape.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    decode_floats(t.dtype, bytes + std::size_t(at) * element, 1, out + i);
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

}  // namespace attnlab
