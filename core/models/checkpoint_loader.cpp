#include "checkpoint_loader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "../validate.h"
#include "model_kinds.h"

namespace attnlab {

namespace {

// NaN, infinity (or an F64 past float32's range) and |w| > kMaxInputMagnitude are refused: a weight of
// 3e38 is finite, but it overflows float32 in the next layer and every output becomes NaN. Trained
// weights are far below 1e6 (bert-base's largest is about 20, opus-mt's about 60).
// `first`: the index in the whole tensor of data[0] (a block of a 16-bit tensor), for the message.
std::string first_non_finite(const std::string& file, const std::string& tensor_name, const float* data, std::size_t n,
                             std::size_t first = 0) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = first + k;
    const float w = data[k];
    if (std::isfinite(w) && std::fabs(w) <= kMaxInputMagnitude) continue;
    const std::string tensor = file + ": tensor \"" + tensor_name + "\" holds ";
    if (std::isnan(w)) return tensor + "NaN at element " + std::to_string(i) + ": the model would compute nothing but NaN";
    if (std::isinf(w))
      return tensor + "an infinity (or a value past float32's range) at element " + std::to_string(i) +
             ": the model would compute nothing but NaN";
    char value[32];
    std::snprintf(value, sizeof value, "%g", double(w));
    return tensor + value + " at element " + std::to_string(i) +
           ": weights beyond ±1e6 overflow float32 in the forward (trained weights are far smaller)";
  }
  return {};
}

// The same check on 16-bit values (BF16, F16), widened a block at a time (no float32 copy of the tensor).
std::string first_non_finite_16(const std::string& file, const std::string& tensor_name, const std::string& dtype,
                                const std::uint8_t* bytes, std::size_t n) {
  constexpr std::size_t kBlock = 1024;  // 4 KB of stack
  float widened[kBlock];
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t m = std::min(kBlock, n - i);
    decode_floats(dtype, bytes + 2 * i, m, widened);
    std::string error = first_non_finite(file, tensor_name, widened, m, i);
    if (!error.empty()) return error;
  }
  return {};
}

bool is_16_bit(const std::string& dtype) { return dtype == "F16" || dtype == "BF16"; }

// A safetensors entry as the layout a .bin's tensor has: contiguous, row-major, from its first byte.
TorchTensor as_layout(const SafeTensorsEntry& e) {
  TorchTensor t;
  t.name = e.name;
  t.dtype = e.dtype;
  t.shape = e.shape;
  t.stride.assign(t.shape.size(), 1);
  for (std::size_t d = t.shape.size(); d-- > 1;) t.stride[d - 1] = t.stride[d] * t.shape[d];
  t.span = e.numel();
  t.begin = e.begin;
  t.end = e.end;
  return t;
}

std::uint64_t byte_size(const TorchTensor& t) { return t.end - t.begin; }

}  // namespace

bool is_float_dtype(const std::string& d) { return d == "F32" || d == "F16" || d == "BF16" || d == "F64"; }

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string checkpoint_format(const std::string& f) {
  if (f == "safetensors" || f == "model.safetensors") return "safetensors";
  if (f == "bin" || f == "pytorch_model.bin") return "bin";
  return {};
}

std::string CheckpointLoader::open(std::unique_ptr<ModelKind> kind, const std::string& config_json, std::uint64_t file_size,
                                   const std::string& format) {
  if (kind_) return "this checkpoint object is already in use: open another";
  if (!kind) return "no such model kind";
  const std::string f = checkpoint_format(format);
  if (f.empty()) return "the checkpoint's format is \"safetensors\" or \"bin\", not \"" + format + "\"";
  file_ = f == "bin" ? "pytorch_model.bin" : "model.safetensors";
  if (file_size >= (std::uint64_t(1) << 53)) return file_ + ": bad file size";
  std::string error = kind->read_config(config_json);
  if (!error.empty()) return error;
  kind_ = std::move(kind);
  file_size_ = file_size;
  files_ = {file_};
  sizes_ = {file_size};
  if (f == "bin") torch_ = std::make_unique<TorchCheckpointReader>(file_size_);
  else reads_ = {{0, std::min<std::uint64_t>(8, file_size_)}};
  return {};
}

std::string CheckpointLoader::open_sharded(std::unique_ptr<ModelKind> kind, const std::string& config_json, const std::string& index_json,
                                           const std::vector<std::uint64_t>& shard_sizes) {
  if (kind_) return "this checkpoint object is already in use: open another";
  if (!kind) return "no such model kind";
  SafetensorsShardIndex index;
  std::string error = parse_safetensors_shard_index(index_json, index);
  if (!error.empty()) return error;
  if (shard_sizes.size() != index.shards.size())
    return std::string(kShardIndexFile) + " names " + std::to_string(index.shards.size()) + " shards; " +
           std::to_string(shard_sizes.size()) + " sizes were given";
  for (std::size_t k = 0; k < shard_sizes.size(); ++k)
    if (shard_sizes[k] >= (std::uint64_t(1) << 53)) return index.shards[k] + ": bad file size";
  error = kind->read_config(config_json);
  if (!error.empty()) return error;
  kind_ = std::move(kind);
  file_ = kShardIndexFile;
  files_ = index.shards;
  sizes_ = shard_sizes;
  shards_ = std::move(index);
  shard_ = 0;
  file_size_ = sizes_[0];
  reads_ = {{0, std::min<std::uint64_t>(8, file_size_)}};
  return {};
}

std::string CheckpointLoader::check_shards() const {
  const std::string index = std::string(kShardIndexFile) + " ";
  std::unordered_map<std::string, int> held;  // tensor -> the shard holding it
  for (std::size_t e = 0; e < safetensors_.entries.size(); ++e) {
    const std::string& name = safetensors_.entries[e].name;
    const int file = entry_files_[e];
    auto [at, fresh] = held.emplace(name, file);
    if (!fresh)
      return "tensor \"" + name + "\" is in two shards, " + files_[std::size_t(at->second)] + " and " + files_[std::size_t(file)] +
             ": a checkpoint holds each tensor once";
    auto placed = shards_.weight_map.find(name);
    if (placed == shards_.weight_map.end())
      return files_[std::size_t(file)] + " holds tensor \"" + name + "\", which " + index + "does not name";
    if (placed->second != files_[std::size_t(file)])
      return index + "places tensor \"" + name + "\" in " + placed->second + ", but " + files_[std::size_t(file)] + " holds it";
  }
  for (const auto& [name, shard] : shards_.weight_map)
    if (!held.count(name)) return index + "places tensor \"" + name + "\" in " + shard + ", which does not hold it";
  return {};
}

const std::vector<ByteRange>& CheckpointLoader::index_reads() const { return torch_ ? torch_->wanted() : reads_; }

std::string CheckpointLoader::give_index(const std::uint8_t* bytes, std::uint64_t size) {
  if (!kind_ || index_read_ || model_) return "open() first, and give_index() only while index_reads() asks";
  if (!torch_) return give_safetensors(bytes, size);
  std::string error = torch_->give(bytes, size);
  if (!error.empty()) torch_.reset();
  else if (torch_->done()) index_read_ = true;
  return error;
}

// model.safetensors' two reads: the first 8 bytes (the header's length), then the header.
std::string CheckpointLoader::give_safetensors(const std::uint8_t* bytes, std::uint64_t size) {
  if (reads_.empty()) return "open() first, and give_index() only while index_reads() asks";
  const ByteRange asked = reads_[0];
  reads_.clear();
  if (size != asked.end - asked.begin)
    return files_[std::size_t(shard_)] + ": " + std::to_string(size) + " bytes were given for the " + std::to_string(asked.end - asked.begin) + " asked for";
  std::string error;
  if (asked.begin == 0) {
    error = safetensors_header_length(size < 8 ? nullptr : bytes, file_size_, header_size_);
    if (error.empty()) reads_ = {{8, 8 + header_size_}};
  } else {
    SafeTensorsIndex header;
    error = parse_safetensors_index(bytes, header_size_, file_size_, header);
    if (error.empty()) {
      // Each file's entries join one index (one file: its own); entry_files_ keeps where each came from.
      for (SafeTensorsEntry& e : header.entries) {
        safetensors_.entries.push_back(std::move(e));
        entry_files_.push_back(shard_);
      }
      if (shard_ + 1 < int(files_.size())) {
        file_size_ = sizes_[std::size_t(++shard_)];
        reads_ = {{0, std::min<std::uint64_t>(8, file_size_)}};
        return {};
      }
      if (!shards_.shards.empty()) {
        std::string mismatch = check_shards();
        if (!mismatch.empty()) return mismatch;
      }
      index_read_ = true;
    }
  }
  return error.empty() ? error : files_[std::size_t(shard_)] + ": " + error;
}

std::string CheckpointLoader::plan() {
  if (!index_read_ || model_) return "index_reads() answered first, and plan() once";
  std::vector<CheckpointTensor> tensors;
  if (torch_)
    for (const TorchTensor& t : torch_->index().tensors) tensors.push_back({t.name, t.dtype, t.shape});
  else
    for (const SafeTensorsEntry& e : safetensors_.entries) tensors.push_back({e.name, e.dtype, e.shape});
  std::string error = kind_->plan(tensors, file_, plan_);
  if (!error.empty()) return error;
  // Each planned tensor's bytes and layout; the rest of the index (tied copies, buffers) is dropped now.
  std::unordered_map<std::string, const TorchTensor*> torch_tensors;
  if (torch_)
    for (const TorchTensor& t : torch_->index().tensors) torch_tensors.emplace(t.name, &t);
  std::unordered_map<std::string, std::size_t> entries;  // safetensors: name -> its entry
  for (std::size_t e = 0; e < safetensors_.entries.size(); ++e) entries.emplace(safetensors_.entries[e].name, e);
  for (const TensorLoad& load : plan_.loads) {
    if (torch_) {
      sources_.push_back(*torch_tensors.at(load.file_name));
      source_files_.push_back(0);
    } else {
      const std::size_t e = entries.at(load.file_name);
      sources_.push_back(as_layout(safetensors_.entries[e]));
      source_files_.push_back(entry_files_[e]);
    }
  }
  std::vector<int>().swap(entry_files_);
  torch_.reset();
  safetensors_ = SafeTensorsIndex{};
  model_ = kind_->build();
  stored_.assign(plan_.loads.size(), false);
  return {};
}

// A dense F32 tensor the model keeps as stored, or a dense 16-bit one it holds at 16 bits, goes straight
// into the model (WASM and x86 are little-endian, as the files are).
std::uint8_t* CheckpointLoader::in_place_target(int i) const {
  const TensorLoad& load = plan_.loads[std::size_t(i)];
  const TorchTensor& t = sources_[std::size_t(i)];
  if (load.linear || !t.is_contiguous()) return nullptr;
  if (t.dtype == "F32" && byte_size(t) == std::uint64_t(t.numel()) * 4)
    return reinterpret_cast<std::uint8_t*>(model_->storage(load.canonical));
  if (is_16_bit(t.dtype) && byte_size(t) == std::uint64_t(t.numel()) * 2)
    return reinterpret_cast<std::uint8_t*>(model_->storage_16(load.canonical, t.dtype));
  return nullptr;
}

bool CheckpointLoader::in_place(int i) const { return in_place_target(i) != nullptr; }

std::string CheckpointLoader::write_target(int i, std::uint64_t offset, std::uint64_t n, std::uint8_t*& out) {
  out = nullptr;
  if (!model_ || finished_) return "plan() first";
  if (i < 0 || i >= load_count()) return "no planned tensor " + std::to_string(i);
  const TorchTensor& t = sources_[std::size_t(i)];
  const std::uint64_t size = byte_size(t);
  if (offset > size || n > size - offset)
    return file_of(i) + ": " + std::to_string(n) + " bytes at " + std::to_string(offset) + " do not fit tensor \"" + t.name + "\" of " +
           std::to_string(size) + " bytes";
  if (std::uint8_t* target = in_place_target(i)) {
    out = target + offset;
    return {};
  }
  if (staged_ != i) {
    // Sized once for the largest staged tensor, so the heap is not fragmented by one size after another.
    if (staging_.empty()) {
      std::uint64_t largest = 0;
      for (int k = 0; k < load_count(); ++k)
        if (!in_place(k)) largest = std::max(largest, byte_size(sources_[std::size_t(k)]));
      staging_.resize(std::size_t((largest + 3) / 4));
    }
    staged_ = i;
  }
  out = reinterpret_cast<std::uint8_t*>(staging_.data()) + offset;
  return {};
}

std::string CheckpointLoader::write(int i, const std::uint8_t* bytes, std::uint64_t n, std::uint64_t offset) {
  std::uint8_t* target = nullptr;
  std::string error = write_target(i, offset, n, target);
  if (error.empty() && n) std::memcpy(target, bytes, std::size_t(n));
  return error;
}

std::string CheckpointLoader::store(int i) {
  if (!model_ || finished_) return "plan() first";
  if (i < 0 || i >= load_count()) return "no planned tensor " + std::to_string(i);
  const TensorLoad& load = plan_.loads[std::size_t(i)];
  const TorchTensor& t = sources_[std::size_t(i)];
  const std::size_t n = std::size_t(t.numel());
  if (const std::uint8_t* target = in_place_target(i)) {
    std::string error = t.dtype == "F32" ? first_non_finite(file_of(i), t.name, reinterpret_cast<const float*>(target), n)
                                         : first_non_finite_16(file_of(i), t.name, t.dtype, target, n);
    if (!error.empty()) return error;
    stored_[std::size_t(i)] = true;
    return {};
  }
  if (staged_ != i && byte_size(t) != 0) return file_of(i) + ": tensor \"" + t.name + "\" was not written";
  const std::uint8_t* bytes = reinterpret_cast<const std::uint8_t*>(staging_.data());
  // A dense 16-bit Linear weight the model packs at 16 bits: checked, then handed over as stored.
  if (load.linear && is_16_bit(t.dtype) && t.is_contiguous() && byte_size(t) == std::uint64_t(t.numel()) * 2) {
    std::string error = first_non_finite_16(file_of(i), t.name, t.dtype, bytes, n);
    if (!error.empty()) return error;
    if (model_->set_linear_weight_16(load.canonical, reinterpret_cast<const std::uint16_t*>(bytes), t.dtype)) {
      staged_ = -1;
      stored_[std::size_t(i)] = true;
      return {};
    }
  }
  const float* dense = staging_.data();  // a dense F32 tensor is its own float32 copy
  if (!(t.dtype == "F32" && t.is_contiguous())) {
    dense_.resize(n);
    std::string error = torch_tensor_to_float(t, bytes, byte_size(t), dense_.data());
    if (!error.empty()) return file_of(i) + ": tensor \"" + t.name + "\" has dtype " + t.dtype + ", not a float";
    dense = dense_.data();
  }
  std::string error = first_non_finite(file_of(i), t.name, dense, n);
  if (!error.empty()) return error;
  float* kept = load.linear ? nullptr : model_->storage(load.canonical);  // kept as stored, else packed
  if (load.linear ? !model_->set_linear_weight(load.canonical, dense) : !kept) return "the model has no tensor \"" + load.canonical + "\"";
  if (kept) std::copy(dense, dense + n, kept);
  staged_ = -1;
  stored_[std::size_t(i)] = true;
  return {};
}

std::string CheckpointLoader::finish() {
  if (!model_) return "plan() first";
  for (std::size_t i = 0; i < stored_.size(); ++i)
    if (!stored_[i]) return file_of(int(i)) + ": tensor \"" + plan_.loads[i].file_name + "\" was never read";
  std::vector<float>().swap(staging_);
  std::vector<float>().swap(dense_);
  std::vector<TorchTensor>().swap(sources_);
  std::vector<int>().swap(source_files_);
  finished_ = true;
  return {};
}

Json CheckpointLoader::summary() const {
  Json out = kind_ ? kind_->summary() : Json::object();
  out.set("kind", Json(kind_ ? kind_->id() : ""));
  out.set("file", Json(file_));
  Json skipped = Json::array();
  for (const auto& s : plan_.skipped) skipped.push(Json(s));
  out.set("skipped", std::move(skipped));
  double parameters = 0;
  for (const auto& load : plan_.loads) {
    double n = 1;
    for (std::int64_t d : load.shape) n *= double(d);
    parameters += n;
  }
  out.set("parameters", Json(parameters));
  return out;
}

namespace {

// The loader's steps over files in memory (one, or a sharded checkpoint's shards).
std::string drive_loader(CheckpointLoader& loader, const std::vector<std::pair<const std::uint8_t*, std::size_t>>& files,
                         std::unique_ptr<CheckpointModel>& model, Json* summary, LoadPlan* plan) {
  std::string error;
  while (error.empty() && !loader.index_reads().empty()) {
    const std::uint8_t* data = files[std::size_t(loader.index_file())].first;
    std::vector<std::uint8_t> bytes;
    for (const ByteRange& r : loader.index_reads()) bytes.insert(bytes.end(), data + r.begin, data + r.end);
    error = loader.give_index(bytes.data(), bytes.size());
  }
  if (error.empty()) error = loader.plan();
  for (int i = 0; error.empty() && i < loader.load_count(); ++i) {
    const TorchTensor& t = loader.source(i);
    error = loader.write(i, files[std::size_t(loader.load_file(i))].first + t.begin, t.end - t.begin, 0);
    if (error.empty()) error = loader.store(i);
  }
  if (error.empty()) error = loader.finish();
  if (!error.empty()) return error;
  if (summary) *summary = loader.summary();
  if (plan) *plan = loader.loaded();
  model = loader.take();
  return {};
}

}  // namespace

std::string load_checkpoint(const std::string& kind, const std::string& config_json, const std::uint8_t* data, std::size_t size,
                            const std::string& format, std::unique_ptr<CheckpointModel>& model, Json* summary, LoadPlan* plan) {
  std::unique_ptr<ModelKind> k = make_model_kind(kind);
  if (!k) return "no model kind \"" + kind + "\" (" + model_kind_names() + ")";
  CheckpointLoader loader;
  std::string error = loader.open(std::move(k), config_json, size, format);
  if (!error.empty()) return error;
  return drive_loader(loader, {{data, size}}, model, summary, plan);
}

std::string load_sharded_checkpoint(const std::string& kind, const std::string& config_json, const std::string& index_json,
                                    const std::map<std::string, std::vector<std::uint8_t>>& shards, std::unique_ptr<CheckpointModel>& model,
                                    Json* summary) {
  std::unique_ptr<ModelKind> k = make_model_kind(kind);
  if (!k) return "no model kind \"" + kind + "\" (" + model_kind_names() + ")";
  SafetensorsShardIndex index;
  std::string error = parse_safetensors_shard_index(index_json, index);
  if (!error.empty()) return error;
  std::vector<std::pair<const std::uint8_t*, std::size_t>> files;
  std::vector<std::uint64_t> sizes;
  for (const std::string& name : index.shards) {
    auto found = shards.find(name);
    if (found == shards.end()) return std::string(kShardIndexFile) + " names " + name + ", which is not among the files given";
    files.emplace_back(found->second.data(), found->second.size());
    sizes.push_back(found->second.size());
  }
  CheckpointLoader loader;
  error = loader.open_sharded(std::move(k), config_json, index_json, sizes);
  if (!error.empty()) return error;
  return drive_loader(loader, files, model, summary, nullptr);
}

}  // namespace attnlab
