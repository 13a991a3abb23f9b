#include "raw_marian.h"

#include <cmath>

#include "validate.h"

namespace attnlab::wasm {

namespace {

const char* const kFile = "model.safetensors";

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

std::string RawMarian::_open(const std::string& config_json, double file_size) {
  if (model_) return "this checkpoint object is already in use: open another";
  if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size < 9.0e15)) return std::string(kFile) + ": bad file size";
  file_size_ = std::uint64_t(file_size);
  return parse_marian_config(config_json, config_);
}

std::string RawMarian::_header_length(const val& first8) {
  if (!config_.d_model) return "open() first";
  if (file_size_ < 8) return std::string(kFile) + ": " + safetensors_header_length(nullptr, file_size_, header_size_);
  if (!is_uint8_array(first8) || first8["length"].as<std::size_t>() != 8) return "the header length takes the file's first 8 bytes";
  std::uint8_t bytes[8];
  val(emscripten::typed_memory_view(8, bytes)).call<void>("set", first8);
  std::string error = safetensors_header_length(bytes, file_size_, header_size_);
  if (!error.empty()) return std::string(kFile) + ": " + error;
  header_read_ = true;
  return {};
}

std::string RawMarian::_plan(const val& header) {
  if (!header_read_ || model_) return "_header_length() first, once";
  if (!is_uint8_array(header) || header["length"].as<double>() != double(header_size_))
    return "the plan takes the " + std::to_string(header_size_) + " header bytes after the first 8";
  std::vector<std::uint8_t> bytes(header_size_);
  val(emscripten::typed_memory_view(bytes.size(), bytes.data())).call<void>("set", header);
  std::string error = parse_safetensors_index(bytes.data(), header_size_, file_size_, index_);
  if (!error.empty()) return std::string(kFile) + ": " + error;
  error = plan_marian_load(config_, checkpoint_tensors(index_), kFile, plan_);
  if (!error.empty()) return error;
  model_ = std::make_unique<MarianModel>(config_);
  stored_.assign(plan_.loads.size(), false);
  return {};
}

val RawMarian::_load(int i) const {
  if (i < 0 || i >= _load_count()) return val::undefined();
  const MarianTensorLoad& load = plan_.loads[std::size_t(i)];
  const SafeTensorsEntry* e = index_.find(load.file_name);
  val out = val::object();
  out.set("name", load.canonical);
  out.set("fileName", load.file_name);
  out.set("dtype", e->dtype);
  out.set("shape", shape_of(e->shape));
  out.set("begin", double(e->begin));
  out.set("end", double(e->end));
  return out;
}

std::string RawMarian::_write(int i, const val& bytes, double offset) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const SafeTensorsEntry* e = index_.find(plan_.loads[std::size_t(i)].file_name);
  const std::size_t size = std::size_t(e->end - e->begin);
  if (!is_uint8_array(bytes)) return "write() takes a Uint8Array";
  const std::size_t n = bytes["length"].as<std::size_t>();
  if (!(offset >= 0 && offset == std::floor(offset)) || std::size_t(offset) > size || n > size - std::size_t(offset))
    return std::string(kFile) + ": " + std::to_string(n) + " bytes at " + std::to_string(std::uint64_t(offset)) +
           " do not fit tensor \"" + e->name + "\" of " + std::to_string(size) + " bytes";
  if (staging_.size() != size) staging_.assign(size, 0);
  val(emscripten::typed_memory_view(n, staging_.data() + std::size_t(offset))).call<void>("set", bytes);
  return {};
}

std::string RawMarian::_store(int i) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const MarianTensorLoad& load = plan_.loads[std::size_t(i)];
  const SafeTensorsEntry* e = index_.find(load.file_name);
  if (staging_.size() != std::size_t(e->end - e->begin)) return std::string(kFile) + ": tensor \"" + e->name + "\" was not written";
  dense_.resize(std::size_t(e->numel()));
  decode_floats(e->dtype, staging_.data(), dense_.size(), dense_.data());
  std::string error = store_marian_tensor(*model_, load, dense_.data(), kFile);
  if (!error.empty()) return error;
  stored_[std::size_t(i)] = true;
  return {};
}

std::string RawMarian::_finish() {
  if (!model_) return "_plan() first";
  for (std::size_t i = 0; i < stored_.size(); ++i)
    if (!stored_[i]) return std::string(kFile) + ": tensor \"" + plan_.loads[i].file_name + "\" was never read";
  std::vector<std::uint8_t>().swap(staging_);
  std::vector<float>().swap(dense_);
  finished_ = true;
  return {};
}

val RawMarian::_summary() const {
  val out = val::object();
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
  decoded_ = false;
  return {};
}

std::string RawMarian::_decode(const val& target, int backend) {
  std::vector<std::int32_t> t;
  std::string error = read_ids("target ids", target, t);
  if (!error.empty()) return error;
  if (model_->source_length() == 0) return "encode() first";
  if (backend < 0 || backend > 1) return "the translation model runs on scalar or simd128";
  model_->decode(Backend(backend), t.data(), int(t.size()));
  decoded_ = true;
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

val RawMarian::_encoder_attention(int layer) const {
  if (!ready() || model_->source_length() == 0 || layer < 0 || layer >= config_.encoder_layers) return val::undefined();
  return view_of(model_->encoder_attention(layer));
}
val RawMarian::_decoder_attention(int layer) const {
  if (!ready() || !decoded_ || layer < 0 || layer >= config_.decoder_layers) return val::undefined();
  return view_of(model_->decoder_attention(layer));
}
val RawMarian::_cross_attention(int layer) const {
  if (!ready() || !decoded_ || layer < 0 || layer >= config_.decoder_layers) return val::undefined();
  return view_of(model_->cross_attention(layer));
}
val RawMarian::_logits() const {
  if (!ready() || !decoded_) return val::undefined();
  return view_of(model_->logits());
}

}  // namespace attnlab::wasm
