#include "raw_marian.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "validate.h"

namespace attnlab::wasm {

namespace {

val floats_of(const std::vector<float>& v) {
  return val::global("Float32Array").new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

}  // namespace

std::string RawMarian::read_ids(const char* what, const val& ids, std::vector<std::int32_t>& out) const {
  if (!marian()) return "no model is loaded";
  std::string error = check_array(what, ids);
  if (error.empty()) error = to_int32s(what, ids, out);
  if (error.empty()) error = marian()->check_ids(what, out.data(), int(out.size()));
  return error;
}

std::string RawMarian::_encode(const val& ids, int backend) {
  std::vector<std::int32_t> i;
  std::string error = read_ids("source ids", ids, i);
  if (!error.empty()) return error;
  if (backend < 0 || backend > 1) return "the translation model runs on scalar or simd128";
  marian()->encode(Backend(backend), i.data(), int(i.size()));
  return {};
}

std::string RawMarian::_decode(const val& target, int backend, const val& heads) {
  std::vector<std::int32_t> t;
  std::string error = read_ids("target ids", target, t);
  if (!error.empty()) return error;
  if (marian()->source_length() == 0) return "encode() first";
  if (backend < 0 || backend > 1) return "the translation model runs on scalar or simd128";
  HeadAblation off;
  error = read_heads_off(heads, off);
  if (!error.empty()) return error;
  marian()->decode(Backend(backend), t.data(), int(t.size()), off);
  return {};
}

val RawMarian::_generate(int num_beams, int max_length, int backend, const val& heads) {
  val out = val::object();
  if (!marian() || marian()->source_length() == 0) {
    out.set("error", std::string(marian() ? "encode() first" : "no model is loaded"));
    return out;
  }
  if (num_beams < 1 || num_beams > 16 || max_length < 2 || max_length > marian()->config().max_positions || backend < 0 || backend > 1) {
    out.set("error", "beams must be in [1, 16] and max_length in [2, " + std::to_string(marian()->config().max_positions) +
                         "] (the model's positions); the backend scalar or simd128");
    return out;
  }
  HeadAblation off;
  const std::string error = read_heads_off(heads, off);
  if (!error.empty()) {
    out.set("error", error);
    return out;
  }
  const MarianModel::Generation g = marian()->generate(Backend(backend), num_beams, max_length, off);
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
  marian()->begin_encode(i.data(), int(i.size()));
  return {};
}

std::string RawMarian::_begin_decode(const val& target, const val& heads) {
  std::vector<std::int32_t> t;
  std::string error = read_ids("target ids", target, t);
  if (!error.empty()) return error;
  if (marian()->source_length() == 0) return "encode the source first (every encoder layer's stages)";
  HeadAblation off;
  error = read_heads_off(heads, off);
  if (!error.empty()) return error;
  marian()->begin_decode(t.data(), int(t.size()), off);
  return {};
}

val RawMarian::_encoder_attention(int layer) const {
  if (!marian() || marian()->source_length() == 0 || layer < 0 || layer >= marian()->config().encoder_layers) return val::undefined();
  return view_of(marian()->encoder_attention(layer));
}
val RawMarian::_decoder_attention(int layer) const {
  if (!marian() || !marian()->decoded() || layer < 0 || layer >= marian()->config().decoder_layers) return val::undefined();
  return view_of(marian()->decoder_attention(layer));
}
val RawMarian::_cross_attention(int layer) const {
  if (!marian() || !marian()->decoded() || layer < 0 || layer >= marian()->config().decoder_layers) return val::undefined();
  return view_of(marian()->cross_attention(layer));
}
val RawMarian::_logits() const {
  if (!marian() || !marian()->decoded()) return val::undefined();
  return view_of(marian()->logits());
}

}  // namespace attnlab::wasm
