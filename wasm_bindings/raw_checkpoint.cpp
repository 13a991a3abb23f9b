#include "raw_checkpoint.h"

#include <cmath>

#include "models/config_json.h"
#include "models/model_kinds.h"

namespace attnlab::wasm {

namespace {

bool is_uint8_array(const val& v) { return v.instanceof(val::global("Uint8Array")); }

}  // namespace

std::string RawCheckpoint::_open(const std::string& config_json, double file_size, const std::string& format) {
  if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size < 9.0e15)) return "the weights file has a bad size";
  return loader_.open(make_model_kind(kind_), config_json, std::uint64_t(file_size), format);
}

std::string RawCheckpoint::_open_sharded(const std::string& config_json, const std::string& index_json, const val& sizes) {
  if (sizes.typeOf().as<std::string>() != "object" || sizes.isNull()) return "the shards' sizes must be an object {file name: bytes}";
  SafetensorsShardIndex index;
  std::string error = parse_safetensors_shard_index(index_json, index);
  if (!error.empty()) return error;
  std::vector<std::uint64_t> bytes;
  for (const std::string& name : index.shards) {
    const val size = sizes[name];
    if (size.isUndefined()) return std::string(kShardIndexFile) + " names " + name + ", which is not among the files given";
    const double n = size.isNumber() ? size.as<double>() : -1.0;
    if (!(n >= 0 && n == std::floor(n) && n < 9.0e15)) return name + ": bad file size";
    bytes.push_back(std::uint64_t(n));
  }
  return loader_.open_sharded(make_model_kind(kind_), config_json, index_json, bytes);
}

val RawCheckpoint::_file_names() const {
  val out = val::array();
  for (const std::string& name : loader_.file_names()) out.call<void>("push", name);
  return out;
}

val RawCheckpoint::_index_reads() const {
  val out = val::array();
  for (const ByteRange& r : loader_.index_reads()) {
    out.call<void>("push", double(r.begin));
    out.call<void>("push", double(r.end));
  }
  return out;
}

std::string RawCheckpoint::_index_give(const val& bytes) {
  if (!is_uint8_array(bytes)) return "_index_give() takes a Uint8Array";
  std::vector<std::uint8_t> b(bytes["length"].as<std::size_t>());
  val(emscripten::typed_memory_view(b.size(), b.data())).call<void>("set", bytes);
  return loader_.give_index(b.data(), b.size());
}

val RawCheckpoint::_load(int i) const {
  if (loader_.model() || i < 0 || i >= _load_count()) return val::undefined();
  const TensorLoad& load = loader_.load(i);
  const TorchTensor& t = loader_.source(i);
  val shape = val::array();
  for (std::int64_t d : t.shape) shape.call<void>("push", double(d));
  val out = val::object();
  out.set("name", load.canonical);
  out.set("fileName", load.file_name);
  out.set("dtype", t.dtype);
  out.set("shape", shape);
  out.set("begin", double(t.begin));
  out.set("end", double(t.end));
  out.set("file", loader_.load_file(i));
  return out;
}

std::string RawCheckpoint::_write(int i, const val& bytes, double offset) {
  if (!is_uint8_array(bytes)) return "_write() takes a Uint8Array";
  if (!(offset >= 0 && offset == std::floor(offset) && offset < 9.0e15)) return "_write()'s offset must be a whole number of bytes";
  const std::size_t n = bytes["length"].as<std::size_t>();
  std::uint8_t* target = nullptr;
  std::string error = loader_.write_target(i, std::uint64_t(offset), n, target);
  if (!error.empty()) return error;
  val(emscripten::typed_memory_view(n, target)).call<void>("set", bytes);
  return {};
}

std::string RawCheckpoint::_summary() const { return write_json(loader_.summary()); }

std::string _model_kinds() { return write_json(model_kinds_record()); }

std::string _check_config(const std::string& kind, const std::string& config_json) {
  std::unique_ptr<ModelKind> k = make_model_kind(kind);
  if (!k) return "no model kind \"" + kind + "\" (" + model_kind_names() + ")";
  return k->read_config(config_json);
}

std::string _unread_architecture(const std::string& config_json) { return unread_architecture(config_json); }

std::string read_head_pairs(const val& pairs, int layers, int heads_per_layer, HeadAblation& out) {
  if (!pairs.isArray()) return "the heads to switch off must be an array [layer, head, layer, head, ...]";
  const std::size_t n = pairs["length"].as<std::size_t>();
  if (n % 2 != 0) return "the heads to switch off must come in pairs [layer, head, ...], got " + std::to_string(n) + " numbers";
  std::vector<LayerHead> heads(n / 2);
  for (std::size_t i = 0; i < n; ++i) {
    const val v = pairs[i];
    const double x = v.isNumber() ? v.as<double>() : -1.0;
    if (!(x >= 0 && x < 1e6 && x == std::floor(x))) return "a layer or head number must be a whole number 0 or more (item " + std::to_string(i) + ")";
    (i % 2 == 0 ? heads[i / 2].layer : heads[i / 2].head) = int(x);
  }
  return out.set(heads, layers, heads_per_layer);
}

val RawCheckpoint::_head_grid() const {
  val grid = val::object();
  grid.set("layers", model() ? model()->ablation_layers() : 0);
  grid.set("heads", model() ? model()->ablation_heads() : 0);
  return grid;
}

std::string RawCheckpoint::read_heads_off(const val& pairs, HeadAblation& out) const {
  if (!model()) return "no model is loaded";
  if (pairs.isUndefined() || pairs.isNull()) return {};
  return read_head_pairs(pairs, model()->ablation_layers(), model()->ablation_heads(), out);
}

}  // namespace attnlab::wasm
