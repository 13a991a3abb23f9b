#include "raw_bert.h"

#include <cmath>

#include "attention.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

val shape_of(const std::vector<std::int64_t>& shape) {
  val out = val::array();
  for (std::int64_t d : shape) out.call<void>("push", double(d));
  return out;
}

bool is_uint8_array(const val& v) {
  return v.instanceof(val::global("Uint8Array"));
}

}  // namespace

std::string RawBert::_open(const std::string& config_json, double file_size) {
  if (model_) return "this checkpoint object is already in use: open another";
  if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size < 9.0e15)) return "model.safetensors: bad file size";
  file_size_ = std::uint64_t(file_size);
  return parse_bert_config(config_json, config_);
}

std::string RawBert::_header_length(const val& first8) {
  if (!config_.hidden_size) return "open() first";
  // A file under 8 bytes: the same message as a whole-file parse (nothing is read).
  if (file_size_ < 8) return "model.safetensors: " + safetensors_header_length(nullptr, file_size_, header_size_);
  if (!is_uint8_array(first8) || first8["length"].as<std::size_t>() != 8) return "the header length takes the file's first 8 bytes";
  std::uint8_t bytes[8];
  val(emscripten::typed_memory_view(8, bytes)).call<void>("set", first8);
  std::string error = safetensors_header_length(bytes, file_size_, header_size_);
  if (!error.empty()) return "model.safetensors: " + error;
  header_read_ = true;  // (a header length of 0 is read too: its parse says what is wrong)
  return {};
}

std::string RawBert::_plan(const val& header) {
  if (!header_read_ || model_) return "_header_length() first, once";
  if (!is_uint8_array(header) || header["length"].as<double>() != double(header_size_))
    return "the plan takes the " + std::to_string(header_size_) + " header bytes after the first 8";
  std::vector<std::uint8_t> bytes(header_size_);
  val(emscripten::typed_memory_view(bytes.size(), bytes.data())).call<void>("set", header);
  SafeTensorsIndex index;
  std::string error = parse_safetensors_index(bytes.data(), header_size_, file_size_, index);
  if (!error.empty()) return "model.safetensors: " + error;
  error = plan_bert_load(config_, index, plan_);
  if (!error.empty()) return error;
  model_ = std::make_unique<BertModel>(config_, plan_.mlm_head, plan_.separate_decoder);
  stored_.assign(plan_.loads.size(), false);
  return {};
}

val RawBert::_load(int i) const {
  if (i < 0 || i >= _load_count()) return val::undefined();
  const BertTensorLoad& load = plan_.loads[std::size_t(i)];
  val out = val::object();
  out.set("name", load.spec.name);
  out.set("fileName", load.entry.name);
  out.set("dtype", load.entry.dtype);
  out.set("shape", shape_of(load.entry.shape));
  out.set("begin", double(load.entry.begin));
  out.set("end", double(load.entry.end));
  return out;
}

std::string RawBert::_write(int i, const val& bytes, double offset) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const BertTensorLoad& load = plan_.loads[std::size_t(i)];
  const std::size_t size = std::size_t(load.entry.end - load.entry.begin);
  if (!is_uint8_array(bytes)) return "write() takes a Uint8Array";
  const std::size_t n = bytes["length"].as<std::size_t>();
  if (!(offset >= 0 && offset == std::floor(offset)) || std::size_t(offset) > size || n > size - std::size_t(offset))
    return "model.safetensors: " + std::to_string(n) + " bytes at " + std::to_string(std::uint64_t(offset)) + " do not fit tensor \"" +
           load.entry.name + "\" of " + std::to_string(size) + " bytes";
  std::uint8_t* destination;
  if (loads_in_place(load)) {
    destination = reinterpret_cast<std::uint8_t*>(model_->storage(load.spec.name));
  } else {
    if (staging_.size() != size) staging_.assign(size, 0);  // one tensor at a time: the largest sets the peak
    destination = staging_.data();
  }
  val(emscripten::typed_memory_view(n, destination + std::size_t(offset))).call<void>("set", bytes);
  return {};
}

std::string RawBert::_store(int i) {
  if (!model_ || finished_) return "_plan() first";
  if (i < 0 || i >= _load_count()) return "no planned tensor " + std::to_string(i);
  const BertTensorLoad& load = plan_.loads[std::size_t(i)];
  const std::uint8_t* bytes = loads_in_place(load) ? reinterpret_cast<const std::uint8_t*>(model_->storage(load.spec.name))
                                                   : staging_.data();
  if (!loads_in_place(load) && staging_.size() != std::size_t(load.entry.end - load.entry.begin))
    return "model.safetensors: tensor \"" + load.entry.name + "\" was not written";
  std::string error = load_bert_tensor(*model_, load, bytes);
  if (!error.empty()) return error;
  stored_[std::size_t(i)] = true;
  return {};
}

std::string RawBert::_finish() {
  if (!model_) return "_plan() first";
  for (std::size_t i = 0; i < stored_.size(); ++i)
    if (!stored_[i]) return "model.safetensors: tensor \"" + plan_.loads[i].entry.name + "\" was never read";
  std::vector<std::uint8_t>().swap(staging_);  // give the staging buffer back
  finished_ = true;
  return {};
}

val RawBert::_summary() const {
  val out = val::object();
  out.set("naming", plan_.naming);
  out.set("mlm", plan_.mlm_head);
  out.set("separateDecoder", plan_.separate_decoder);
  val skipped = val::array();
  for (const auto& s : plan_.skipped) skipped.call<void>("push", s);
  out.set("skipped", skipped);
  val c = val::object();
  c.set("vocabSize", config_.vocab_size);
  c.set("hiddenSize", config_.hidden_size);
  c.set("layers", config_.num_hidden_layers);
  c.set("heads", config_.num_attention_heads);
  c.set("intermediateSize", config_.intermediate_size);
  c.set("maxPositions", config_.max_position_embeddings);
  c.set("typeVocabSize", config_.type_vocab_size);
  out.set("config", c);
  double parameters = 0;
  for (const auto& load : plan_.loads) parameters += double(load.entry.numel());
  out.set("parameters", parameters);
  return out;
}

std::string RawBert::read_inputs(const val& ids, const val& types, std::vector<std::int32_t>& i, std::vector<std::int32_t>& t) const {
  if (!ready()) return "no model is loaded";
  std::string error = first_error({check_array("ids", ids), check_array("types", types)});
  if (!error.empty()) return error;
  error = first_error({to_int32s("ids", ids, i), to_int32s("types", types, t)});
  if (!error.empty()) return error;
  if (i.size() != t.size())
    return "ids has " + std::to_string(i.size()) + " tokens but types has " + std::to_string(t.size());
  return model_->check_input(i.data(), t.data(), int(i.size()));
}

std::string RawBert::_forward(const val& ids, const val& types, int backend) {
  std::vector<std::int32_t> i, t;
  std::string error = read_inputs(ids, types, i, t);
  if (!error.empty()) return error;
  if (backend < 0 || backend > 2) return "backend must be scalar, simd128 or webgpu";
  model_->forward(Backend(backend), i.data(), t.data(), int(i.size()));
  return {};
}

std::string RawBert::_begin_forward(const val& ids, const val& types) {
  std::vector<std::int32_t> i, t;
  std::string error = read_inputs(ids, types, i, t);
  if (!error.empty()) return error;
  model_->begin_forward(i.data(), t.data(), int(i.size()));
  return {};
}

std::string RawBert::check_layer(int layer) const {
  if (!ready()) return "no model is loaded";
  if (model_->length() == 0) return "run the model first";
  if (layer < 0 || layer >= config_.num_hidden_layers)
    return "layer must be in [0, " + std::to_string(config_.num_hidden_layers) + "), got " + std::to_string(layer);
  return {};
}

val RawBert::_attention(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(model_->attention(layer));
}
val RawBert::_queries(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(model_->queries(layer));
}
val RawBert::_keys(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(model_->keys(layer));
}
val RawBert::_hidden(int layer) const {
  if (!ready() || layer < 0 || layer > config_.num_hidden_layers || model_->length() == 0) return val::undefined();
  return view_of(model_->hidden_state(layer));
}

val RawBert::_predict(int position, int k) const {
  val out = val::array();
  if (!ready() || !model_->computed()) return out;
  for (const auto& p : model_->predict(position, k)) {
    val item = val::object();
    item.set("id", p.id);
    item.set("probability", p.probability);
    item.set("logit", p.logit);
    out.call<void>("push", item);
  }
  return out;
}

}  // namespace attnlab::wasm
