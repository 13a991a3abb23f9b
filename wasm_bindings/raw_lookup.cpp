#include "raw_lookup.h"

#include <cmath>

#include "raw_kernel_stages.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

Backend cpu_backend(int code) { return code == int(Backend::scalar) ? Backend::scalar : Backend::simd128; }

bool is_uint8_array(const val& v) {
  return !v.isUndefined() && !v.isNull() && v.instanceof(val::global("Uint8Array"));
}

val bytes_copy(const std::uint8_t* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data)).call<val>("slice");
}

template <typename T>
val array_copy(const std::vector<T>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

// The JS names of the config's fields, and the C++ names validate_lookup_config uses in its messages.
const char* kIntFields[][2] = {{"heads", "heads"}, {"embedDim", "embed_dim"}, {"batch", "batch"}};

}  // namespace

std::string RawDigits::_load(const val& bytes) {
  if (!is_uint8_array(bytes)) return "the digit asset must be a Uint8Array (the inflated mnist10k.bin.gz)";
  const std::size_t n = bytes["length"].as<std::size_t>();
  std::vector<std::uint8_t> copy(n);
  val(emscripten::typed_memory_view(n, copy.data())).call<void>("set", bytes);
  MnistAsset parsed;
  std::string error = parse_mnist_asset(copy.data(), copy.size(), parsed);
  if (!error.empty()) return error;
  asset_ = std::move(parsed);
  return {};
}

val RawDigits::_images(int first, int count) const {
  first = std::max(0, std::min(first, asset_.count));
  count = std::max(0, std::min(count, asset_.count - first));
  const std::size_t P = std::size_t(asset_.pixels_per_image());
  val out = val::object();
  out.set("pixels", bytes_copy(asset_.pixels.data() + first * P, count * P));
  out.set("labels", bytes_copy(asset_.labels.data() + first, std::size_t(count)));
  out.set("rows", asset_.rows);
  out.set("cols", asset_.cols);
  return out;
}

LookupConfig RawLookupTrainer::parse(const val& c) {
  LookupConfig config;
  if (c.isUndefined() || c.isNull()) return config;
  if (!c["seed"].isUndefined()) config.seed = std::uint32_t(c["seed"].as<double>());
  if (!c["heads"].isUndefined()) config.heads = int(c["heads"].as<double>());
  if (!c["embedDim"].isUndefined()) config.embed_dim = int(c["embedDim"].as<double>());
  if (!c["batch"].isUndefined()) config.batch = int(c["batch"].as<double>());
  if (!c["lr"].isUndefined()) config.lr = c["lr"].as<double>();
  return config;
}

std::string RawLookupTrainer::_config_error(const val& c, const RawDigits& digits) {
  if (digits.asset().count == 0) return "load the digit asset first (Digits.load)";
  if (!c.isUndefined() && !c.isNull()) {
    if (c.typeOf().as<std::string>() != "object") return "the trainer config must be an object";
    const val seed = c["seed"];
    if (!seed.isUndefined() && (seed.typeOf().as<std::string>() != "number" || seed.as<double>() != std::floor(seed.as<double>()) ||
                                seed.as<double>() < 0 || seed.as<double>() > 4294967295.0))
      return "seed must be an integer in [0, 4294967295]";
    for (const auto& field : kIntFields) {
      const val v = c[field[0]];
      if (v.isUndefined()) continue;
      if (v.typeOf().as<std::string>() != "number" || v.as<double>() != std::floor(v.as<double>()))
        return std::string(field[0]) + " must be an integer";
      if (std::fabs(v.as<double>()) > 1e6) return std::string(field[0]) + " is too large";
    }
    if (!c["lr"].isUndefined() && (c["lr"].typeOf().as<std::string>() != "number" || !std::isfinite(c["lr"].as<double>())))
      return "lr must be a finite number";
  }
  const LookupConfig config = parse(c);
  LookupData data;
  std::string error = make_lookup_data(digits.asset(), config.seed, data);
  if (error.empty()) error = validate_lookup_config(config, data.training.count());
  // Name the settings as JS spells them.
  for (const auto& field : kIntFields) {
    const std::string cpp = field[1], js = field[0];
    for (std::size_t at = error.find(cpp); at != std::string::npos; at = error.find(cpp, at + js.size()))
      error.replace(at, cpp.size(), js);
  }
  return error;
}

namespace {

val config_to_js(const LookupConfig& c) {
  val out = val::object();
  out.set("seed", double(c.seed));
  out.set("heads", c.heads);
  out.set("embedDim", c.embed_dim);
  out.set("batch", c.batch);
  out.set("lr", c.lr);
  return out;
}

LookupData split(const RawDigits& digits, std::uint32_t seed) {
  LookupData data;
  make_lookup_data(digits.asset(), seed, data);  // checked by _config_error
  return data;
}

}  // namespace

val RawLookupTrainer::_defaults() {
  val out = config_to_js(LookupConfig{});
  // The notebook trains 10 epochs of its 60,000 digits at batch 64: 9,370 steps.
  out.set("steps", 9370);
  return out;
}

RawLookupTrainer::RawLookupTrainer(const val& config, const RawDigits& digits)
    : trainer_(parse(config), split(digits, parse(config).seed)) {}

val RawLookupTrainer::_config() const {
  val out = config_to_js(trainer_.config());
  out.set("stepsPerEpoch", trainer_.steps_per_epoch());
  out.set("pixels", trainer_.data().pixels);
  out.set("databaseImages", trainer_.data().database.count());
  out.set("heldOutImages", trainer_.data().held_out.count());
  out.set("trainingImages", trainer_.data().training.count());
  return out;
}

std::string RawLookupTrainer::_train(int steps, int backend) {
  std::string error = first_error({check_positive("steps", steps), check_at_most("steps", steps, 100000)});
  if (!error.empty()) return error;
  metrics_.clear();
  for (int i = 0; i < steps; ++i) {
    const LookupStepMetrics m = trainer_.step(cpu_backend(backend));
    metrics_.push_back(m.loss);
    metrics_.push_back(m.accuracy);
  }
  return {};
}

val RawLookupTrainer::_metrics() const { return view_of(metrics_); }

std::string RawLookupTrainer::_set_lr(double lr) {
  if (!(lr > 0.0 && lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(lr);
  trainer_.set_lr(lr);
  return {};
}

val RawLookupTrainer::_end_step() {
  const LookupStepMetrics m = trainer_.end_step();
  val out = val::object();
  out.set("step", m.step);
  out.set("epoch", m.epoch);
  out.set("loss", m.loss);
  out.set("accuracy", m.accuracy);  // the staged step's metric, as every trainer names it
  return out;
}

// The retrieval is the attention weights times the database images: the model needs the weights.
val RawLookupTrainer::_kernel_shape() { return kernel_shape_of(trainer_.mha(), true); }

val RawLookupTrainer::_kernel_view(const std::string& which) { return kernel_view_of(trainer_.mha(), which); }

void RawLookupTrainer::_run_kernel_forward(int backend) {
  attention_forward(cpu_backend(backend), trainer_.mha().kernel_forward_args());
}

void RawLookupTrainer::_run_kernel_backward(int backend) {
  attention_backward(cpu_backend(backend), trainer_.mha().kernel_backward_args());
}

val RawLookupTrainer::_evaluate(int backend) {
  const LookupEvaluation e = trainer_.evaluate(cpu_backend(backend));
  val out = val::object();
  out.set("queries", e.queries);
  out.set("top1", e.top1);
  out.set("top10", e.top10);
  out.set("mse", e.mse);
  out.set("meanImageMse", e.mean_image_mse);
  out.set("nearestNeighbourTop1", e.nearest_neighbour_top1);
  out.set("nearestNeighbourMse", e.nearest_neighbour_mse);
  out.set("chance", e.chance);
  return out;
}

std::string RawLookupTrainer::_inspect(const val& query, int backend) {
  if (query.isUndefined() || query.isNull() || query.typeOf().as<std::string>() != "object")
    return "inspect takes {heldOut: index} or {pixels: 784 normalised values}";
  const val held_out = query["heldOut"];
  if (!held_out.isUndefined()) {
    if (held_out.typeOf().as<std::string>() != "number" || held_out.as<double>() != std::floor(held_out.as<double>()) ||
        std::fabs(held_out.as<double>()) > 1e9)
      return "heldOut must be an integer index";
    return trainer_.inspect_held_out(int(held_out.as<double>()), cpu_backend(backend), inspection_);
  }
  std::string error = check_array("pixels", query["pixels"]);
  if (!error.empty()) return error;
  const std::vector<float> pixels = to_floats(query["pixels"]);
  return trainer_.inspect(pixels.data(), pixels.size(), cpu_backend(backend), inspection_);
}

val RawLookupTrainer::_inspection() const {
  val out = val::object();
  out.set("H", inspection_.H);
  out.set("S", inspection_.S);
  out.set("P", inspection_.P);
  out.set("label", inspection_.label);
  out.set("weights", array_copy(inspection_.weights));
  out.set("weightsMean", array_copy(inspection_.weights_mean));
  out.set("retrieval", array_copy(inspection_.retrieval));
  out.set("topIndex", array_copy(inspection_.top_index));
  out.set("topLabel", array_copy(inspection_.top_label));
  out.set("topWeight", array_copy(inspection_.top_weight));
  return out;
}

val RawLookupTrainer::_images(const std::string& part) const {
  const LookupData& d = trainer_.data();
  const LookupImages* images = part == "database" ? &d.database : part == "heldOut" ? &d.held_out
                               : part == "training" ? &d.training : nullptr;
  if (!images) return val::undefined();
  val out = val::object();
  out.set("pixels", array_copy(images->pixels));
  out.set("labels", array_copy(images->labels));
  return out;
}

}  // namespace attnlab::wasm
