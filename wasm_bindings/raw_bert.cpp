#include "raw_bert.h"

#include <cmath>

#include "attention.h"
#include "validate.h"

namespace attnlab::wasm {

std::string RawBert::read_inputs(const val& ids, const val& types, std::vector<std::int32_t>& i, std::vector<std::int32_t>& t) const {
  if (!bert()) return "no model is loaded";
  std::string error = first_error({check_array("ids", ids), check_array("types", types)});
  if (!error.empty()) return error;
  error = first_error({to_int32s("ids", ids, i), to_int32s("types", types, t)});
  if (!error.empty()) return error;
  if (i.size() != t.size())
    return "ids has " + std::to_string(i.size()) + " tokens but types has " + std::to_string(t.size());
  return bert()->check_input(i.data(), t.data(), int(i.size()));
}

std::string RawBert::_forward(const val& ids, const val& types, int backend, const val& heads) {
  std::vector<std::int32_t> i, t;
  std::string error = read_inputs(ids, types, i, t);
  if (!error.empty()) return error;
  if (backend < 0 || backend > 2) return "backend must be scalar, simd128 or webgpu";
  HeadAblation off;
  error = read_heads_off(heads, off);
  if (!error.empty()) return error;
  bert()->forward(Backend(backend), i.data(), t.data(), int(i.size()), off);
  return {};
}

std::string RawBert::_begin_forward(const val& ids, const val& types, const val& heads) {
  std::vector<std::int32_t> i, t;
  std::string error = read_inputs(ids, types, i, t);
  if (!error.empty()) return error;
  HeadAblation off;
  error = read_heads_off(heads, off);
  if (!error.empty()) return error;
  bert()->begin_forward(i.data(), t.data(), int(i.size()), off);
  return {};
}

std::string RawBert::check_layer(int layer) const {
  if (!bert()) return "no model is loaded";
  if (bert()->length() == 0) return "run the model first";
  const int layers = bert()->config().num_hidden_layers;
  if (layer < 0 || layer >= layers) return "layer must be in [0, " + std::to_string(layers) + "), got " + std::to_string(layer);
  return {};
}

val RawBert::_attention(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(bert()->attention(layer));
}
val RawBert::_queries(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(bert()->queries(layer));
}
val RawBert::_keys(int layer) const {
  if (!check_layer(layer).empty()) return val::undefined();
  return view_of(bert()->keys(layer));
}
val RawBert::_hidden(int layer) const {
  if (!bert() || layer < 0 || layer > bert()->config().num_hidden_layers || bert()->length() == 0) return val::undefined();
  return view_of(bert()->hidden_state(layer));
}

val RawBert::_predict(int position, int k) const {
  if (!bert() || !bert()->computed()) return val::array();
  return chance_records(bert()->predict(position, k));
}

}  // namespace attnlab::wasm
