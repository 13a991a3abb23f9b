#include "raw_marian.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "validate.h"

namespace attnlab::wasm {

namespace {

val shape_of(const std::vector<std::int64_t>& shape) {
  val out = val::array();
  for (std::int64_t d : shape) out.call<void>("push", double(d));
  return out;
}

bool is_uint8_array(const val& v) { return v.instanceof(val::global("Uint8Array")); }

val floats_of(const std::vector<float>& v) {
  return val::global("Float32Array").new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

}  // namespace

std::string RawMarian::_open(const std::string& config_json, double file_size, const std::string& format) {
  if (model_ || torch_ || !reads_.empty() || index_read_) return "this checkpoint object is already in use: open another";
  if (format != "safetensors" && format != "bin") return "the checkpoint's format is \"safetensors\" or \"bin\", not \"" + format + "\"";
  bin_ = format == "bin";
  file_ = bin_ ? "pytorch_model.bin" : "model.safetensors";
  if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size < 9.0e15)) return file_ + ": bad file size";
  std::string error = parse_marian_config(config_json, config_);
  if (!error.empty()) return error;
  file_size_ = std::uint64_t(file_size);
  if (bin_) torch_ = std::make_unique<TorchCheckpointReader>(file_size_);
  else reads_ = {{0, std::min<std::uint64_t>(8, file_size_)}};
  return {};
}

val RawMarian::_index_reads() const {
  val out = val::array();
  for (const ByteRange& r : torch_ ? torch_->wanted() : reads_) {
    out.call<void>("push", double(r.begin));
    out.call<void>("push", double(r.end));
  }
  return out;
}

std::string RawMarian::_index_give(const val& bytes) {
  if (!config_.d_model || index_read_) return "_open() first, and _index_give() only while _index_reads() asks";
  if (!is_uint8_array(bytes)) return "_index_give() takes a Uint8Array";
  std::vector<std::uint8_t> b(bytes["length"].as<std::size_t>());
  val(emscripten::typed_memory_view(b.size(), b.data())).call<void>("set", bytes);
  if (!torch_) return give_safetensors(b.data(), b.size());
  std::string error = torch_->give(b.data(), b.size());
  if (!error.empty()) torch_.reset();
  else if (torch_->done()) index_read_ = true;
  return error;
}

// model.safetensors' two reads: the first 8 bytes (the header's length), then the header.
std::string RawMarian::give_safetensors(const std::uint8_t* bytes, std::uint64_t size) {
  if (reads_.empty()) return "_open() first, and _index_give() only while _index_reads() asks";
  const ByteRange asked = reads_[0];
  reads_.clear();
  if (size != asked.end - asked.begin)
    return file_ + ": " + std::to_string(size) + " bytes were given for the " + std::to_string(asked.end - asked.begin) + " asked for";
  std::string error;
  if (asked.begin == 0) {
    error = safetensors_header_length(size < 8 ? nullptr : bytes, file_size_, header_size_);
    if (error.empty()) reads_ = {{8, 8 + header_size_}};
  } else {
    error = parse_safetensors_index(bytes, header_size_, file_size_, safetensors_);
    if (error.empty()) index_read_ = true;
  }
  return error.empty() ? error : file_ + ": " + error;
}

std::string RawMarian::_plan() {
  if (!index_read_ || model_) return "_index_reads() answered first, and _plan() once";
  std::vector<CheckpointTensor> tensors =
      bin_ ? checkpoint_tensors(torch_->index()) : checkpoint_tensors(safetensors_);
  std::string error = plan_marian_load(config_, tensors, file_, plan_);
  if (!error.empty()) return error;
  // Each planned tensor's bytes and layout; the rest of the indexes (the tied copies, the position
  // tables) are dropped now.
  std::unordered_map<std::string, const TorchTensor*> torch_tensors;
  if (bin_)
    for (const TorchTensor& t : torch_->index().tensors) torch_tensors.emplace(t.name, &t);
  for (const MarianTensorLoad& load : plan_.loads) {
    TorchTensor t;
    if (bin_) {
      t = *torch_tensors.at(load.file_name);
    } else {
      const SafeTensorsEntry* e = safetensors_.find(load.file_name);
      t.name = e->name;
      t.dtype = e->dtype;
      t.shape = e->shape;
      t.stride.assign(t.shape.size(), 1);
      for (std::size_t d = t.shape.size(); d-- > 1;) t.stride[d - 1] = t.stride[d] * t.shape[d];
      t.span = e->numel();
      t.begin = e->begin;
      t.end = e->end;
    }
    sources_.push_back(std::move(t));
  }
  torch_.reset();
  safetensors_ = SafeTensorsIndex{};
  model_ = std::make_unique<MarianModel>(config_);
  stored_.assign(plan_.loads.size(), false);
  return {};
}

val RawMarian::_load(int i) const {
  if (!model_ || i < 0 || i >= _load_count()) return val::undefined();
  const MarianTensorLoad& load = plan_.loads[std::size_t(i)];
  const TorchTensor& t = sources_[std::size_t(i)];
  val out = val::object();
  out.set("name", load.canonical);
  out.set("fileName", load.file_name);
  out.set("dtype", t.dtype);
  out.set("shape", shape_of(t.shape));
  out.set("begin", double(t.begin));
  out.set("end", double(t.end));
  return out;
}

std::string RawMarian::_write(int i, const val& bytes, double offset) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const std::size_t size = std::size_t(tensor_bytes(i));
  if (!is_uint8_array(bytes)) return "write() takes a Uint8Array";
  const std::size_t n = bytes["length"].as<std::size_t>();
  if (!(offset >= 0 && offset == std::floor(offset)) || std::size_t(offset) > size || n > size - std::size_t(offset))
    return file_ + ": " + std::to_string(n) + " bytes at " + std::to_string(std::uint64_t(offset)) + " do not fit tensor \"" +
           sources_[std::size_t(i)].name + "\" of " + std::to_string(size) + " bytes";
  if (staged_ != i) {
    // Sized once for the largest planned tensor (so the heap is not fragmented by one size after another).
    if (staging_.empty()) {
      std::uint64_t largest = 0;
      for (int k = 0; k < _load_count(); ++k) largest = std::max(largest, tensor_bytes(k));
      staging_.resize(std::size_t((largest + 3) / 4));
    }
    staged_ = i;
  }
  val(emscripten::typed_memory_view(n, reinterpret_cast<std::uint8_t*>(staging_.data()) + std::size_t(offset))).call<void>("set", bytes);
  return {};
}

std::string RawMarian::_store(int i) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const MarianTensorLoad& load = plan_.loads[std::size_t(i)];
  const TorchTensor& t = sources_[std::size_t(i)];
  const std::uint64_t size = tensor_bytes(i);
  if (staged_ != i && size != 0) return file_ + ": tensor \"" + t.name + "\" was not written";
  const std::uint8_t* bytes = reinterpret_cast<const std::uint8_t*>(staging_.data());
  const float* dense = staging_.data();  // a dense F32 tensor is its own float32 copy (WASM is little-endian)
  if (!(t.dtype == "F32" && t.is_contiguous())) {
    dense_.resize(std::size_t(t.numel()));
    std::string error = torch_tensor_to_float(t, bytes, size, dense_.data());
    if (!error.empty()) return error;
    dense = dense_.data();
  }
  std::string error = store_marian_tensor(*model_, load, dense, file_);
  if (!error.empty()) return error;
  staged_ = -1;
  stored_[std::size_t(i)] = true;
  return {};
}

std::string RawMarian::_finish() {
  if (!model_) return "_plan() first";
  for (std::size_t i = 0; i < stored_.size(); ++i)
    if (!stored_[i]) return file_ + ": tensor \"" + plan_.loads[i].file_name + "\" was never read";
  std::vector<float>().swap(staging_);
  std::vector<float>().swap(dense_);
  std::vector<TorchTensor>().swap(sources_);
  finished_ = true;
  return {};
}

val RawMarian::_summary() const {
  val out = val::object();
  out.set("file", file_);
  val skipped = val::array();
  for (const auto& s : plan_.skipped) skipped.call<void>("push", s);
  out.set("skipped", skipped);
  val c = val::object();
  c.set("vocabSize", config_.vocab_size);
  c.set("dModel", config_.d_model);
  c.set("encoderLayers", config_.encoder_layers);
  c.set("decoderLayers", config_.decoder_layers);
  c.set("encoderHeads", config_.encoder_heads);
  c.set("decoderHeads", config_.decoder_heads);
  c.set("maxPositions", config_.max_positions);
  c.set("padId", config_.pad_id);
  c.set("eosId", config_.eos_id);
  c.set("decoderStartId", config_.decoder_start_id);
  c.set("numBeams", config_.num_beams);
  c.set("maxLength", config_.max_length);
  out.set("config", c);
  double parameters = 0;
  for (const auto& load : plan_.loads) {
    double n = 1;
    for (std::int64_t d : load.shape) n *= double(d);
    parameters += n;
  }
  out.set("parameters", parameters);
  return out;
}

std::string RawMarian::read_ids(const char* what, const val& ids, std::vector<std::int32_t>& out) const {
  if (!ready()) return "no model is loaded";
  std::string error = check_array(what, ids);
  if (error.empty()) error = to_int32s(what, ids, out);
  if (error.empty()) error = model_->check_ids(what, out.data(), int(out.size()));
  return error;
}

std::string RawMarian::_encode(const val& ids, int backend) {
  std::vector<std::int32_t> i;
  std::string error = read_ids("source ids", ids, i);
  if (!error.empty()) return error;
  if (backend < 0 || backend > 1) return "the translation model runs on scalar or simd128";
  model_->encode(Backend(backend), i.data(), int(i.size()));
  return {};
}

std::string RawMarian::_decode(const val& target, int backend) {
  std::vector<std::int32_t> t;
  std::string error = read_ids("target ids", target, t);
  if (!error.empty()) return error;
  if (model_->source_length() == 0) return "encode() first";
  if (backend < 0 || backend > 1) return "the translation model runs on scalar or simd128";
  model_->decode(Backend(backend), t.data(), int(t.size()));
  return {};
}

val RawMarian::_generate(int num_beams, int max_length, int backend) {
  val out = val::object();
  if (!ready() || model_->source_length() == 0) {
    out.set("error", std::string(ready() ? "encode() first" : "no model is loaded"));
    return out;
  }
  if (num_beams < 1 || num_beams > 16 || max_length < 2 || max_length > config_.max_positions || backend < 0 || backend > 1) {
    out.set("error", "beams must be in [1, 16] and max_length in [2, " + std::to_string(config_.max_positions) +
                         "] (the model's positions); the backend scalar or simd128");
    return out;
  }
  const MarianModel::Generation g = model_->generate(Backend(backend), num_beams, max_length);
  val ids = val::array();
  for (int id : g.ids) ids.call<void>("push", id);
  out.set("ids", ids);
  out.set("score", g.score);
  val cross = val::array();
  for (const auto& c : g.cross) cross.call<void>("push", floats_of(c));
  out.set("cross", cross);
  val steps = val::array();
  for (const auto& s : g.steps) {
    val step = val::object(), beams = val::array(), scores = val::array(), finished = val::array();
    for (const auto& b : s.beams) {
      val beam = val::array();
      for (int id : b) beam.call<void>("push", id);
      beams.call<void>("push", beam);
    }
    for (float x : s.scores) scores.call<void>("push", x);
    for (int f : s.finished) finished.call<void>("push", f);
    step.set("beams", beams);
    step.set("scores", scores);
    step.set("finished", finished);
    steps.call<void>("push", step);
  }
  out.set("steps", steps);
  return out;
}

std::string RawMarian::_begin_encode(const val& ids) {
  std::vector<std::int32_t> i;
  std::string error = read_ids("source ids", ids, i);
  if (!error.empty()) return error;
  model_->begin_encode(i.data(), int(i.size()));
  return {};
}

std::string RawMarian::_begin_decode(const val& target) {
  std::vector<std::int32_t> t;
  std::string error = read_ids("target ids", target, t);
  if (!error.empty()) return error;
  if (model_->source_length() == 0) return "encode the source first (every encoder layer's stages)";
  model_->begin_decode(t.data(), int(t.size()));
  return {};
}

val RawMarian::_encoder_attention(int layer) const {
  if (!ready() || model_->source_length() == 0 || layer < 0 || layer >= config_.encoder_layers) return val::undefined();
  return view_of(model_->encoder_attention(layer));
}
val RawMarian::_decoder_attention(int layer) const {
  if (!ready() || !model_->decoded() || layer < 0 || layer >= config_.decoder_layers) return val::undefined();
  return view_of(model_->decoder_attention(layer));
}
val RawMarian::_cross_attention(int layer) const {
  if (!ready() || !model_->decoded() || layer < 0 || layer >= config_.decoder_layers) return val::undefined();
  return view_of(model_->cross_attention(layer));
}
val RawMarian::_logits() const {
  if (!ready() || !model_->decoded()) return val::undefined();
  return view_of(model_->logits());
}

}  // namespace attnlab::wasm
