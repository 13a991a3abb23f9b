#include "raw_scaled.h"

#include <cmath>
#include <vector>

#include "attention_stages.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

constexpr int kMaxTokens = 512;  // a page's editable example or sentence: far beyond what is legible
constexpr int kMaxWidth = 4096;

struct StageBuffers {
  ScoreStages stages;
  std::vector<double> entropies;
};
StageBuffers& buffers() {
  static StageBuffers b;
  return b;
}

}  // namespace

std::string _attention_score_stages(const val& args) {
  int T = 0, S = 0, D = 0;
  std::string error = first_error({check_int_field(args, "T", kMaxTokens, T), check_int_field(args, "S", kMaxTokens, S),
                                   check_int_field(args, "D", kMaxWidth, D)});
  if (!error.empty()) return error;
  std::vector<float> q, k, mask;
  error = first_error({read_float_field(args, "q", std::size_t(T) * D, shape_text({{"T", T}, {"D", D}}), q),
                       read_float_field(args, "k", std::size_t(S) * D, shape_text({{"S", S}, {"D", D}}), k)});
  if (!error.empty()) return error;
  const val scale = args["scale"];
  if (scale.typeOf().as<std::string>() != "number" || !std::isfinite(scale.as<double>()))
    return "scale must be a finite number";
  const val m = args["mask"];
  if (!m.isUndefined() && !m.isNull()) {
    error = check_array("mask", m);
    if (!error.empty()) return error;
    mask = to_floats(m);
    error = first_error({check_length("mask", mask.size(), std::size_t(T) * S, shape_text({{"T", T}, {"S", S}})),
                         check_additive_mask("mask", mask)});
    if (!error.empty()) return error;
  }
  buffers().stages = score_stages(ConstMatrixMap(q.data(), T, D), ConstMatrixMap(k.data(), S, D), scale.as<float>(),
                                  mask.empty() ? nullptr : mask.data());
  return {};
}

val _stage_scores() { return view_of(buffers().stages.scores); }
val _stage_scaled() { return view_of(buffers().stages.scaled); }
val _stage_masked() { return view_of(buffers().stages.masked); }

std::string _row_entropies(const val& weights, int rows, int cols) {
  std::string error = first_error({check_array("weights", weights), check_positive("rows", rows), check_positive("cols", cols)});
  if (!error.empty()) return error;
  const std::vector<float> w = to_floats(weights);
  error = first_error({check_length("weights", w.size(), std::size_t(rows) * cols, shape_text({{"rows", rows}, {"cols", cols}})),
                       check_unit_interval("weights", w.data(), w.size())});
  if (!error.empty()) return error;
  buffers().entropies = row_entropies(w.data(), rows, cols);
  return {};
}

val _entropies() {
  const auto& e = buffers().entropies;
  return val(emscripten::typed_memory_view(e.size(), e.data()));
}

RawSelfAttention::RawSelfAttention(int input_dim, float dropout, std::uint32_t seed)
    : rng_(seed), layer_(input_dim, dropout, rng_) {}

std::string RawSelfAttention::_config_error(int input_dim, double dropout) {
  if (!(dropout >= 0.0 && dropout <= 1.0)) return "dropout must be in [0, 1], got " + std::to_string(dropout);
  return first_error({check_positive("input_dim", input_dim), check_at_most("input_dim", input_dim, kMaxWidth)});
}

std::string RawSelfAttention::_begin(const val& x, int batch, int length, const val& mask, bool train, double seed) {
  std::string error = first_error({check_array("input", x), check_positive("batch", batch), check_positive("length", length),
                                   check_at_most("length", length, kMaxTokens), check_at_most("batch", batch, 64)});
  if (!error.empty()) return error;
  if (!(seed >= 0 && seed < 4294967296.0 && seed == std::floor(seed))) return "seed must be an integer in [0, 2^32)";
  const std::vector<float> v = to_floats(x);
  const int E = layer_.input_dim(), rows = batch * length;
  error = first_error({check_length("input", v.size(), std::size_t(rows) * E, shape_text({{"N*L", rows}, {"input_dim", E}})),
                       check_finite("input", v.data(), v.size())});
  if (!error.empty()) return error;
  std::vector<float> m;
  if (!mask.isNull() && !mask.isUndefined()) {
    error = check_array("mask", mask);
    if (!error.empty()) return error;
    m = to_floats(mask);
    error = first_error({check_length("mask", m.size(), std::size_t(rows) * length, shape_text({{"N", batch}, {"L", length}, {"L", length}})),
                         check_additive_mask("mask", m)});
    if (!error.empty()) return error;
  }
  layer_.begin(ConstMatrixMap(v.data(), rows, E), batch, length, m.empty() ? nullptr : m.data(), train, std::uint64_t(seed));
  return {};
}

}  // namespace attnlab::wasm
