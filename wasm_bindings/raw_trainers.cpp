#include "raw_trainers.h"

#include <cmath>
#include <sstream>

#include "raw_kernel_stages.h"
#include "validate.h"

namespace attnlab::wasm {

namespace {

AlignmentTaskKind task_kind(const std::string& task) {
  return task == "reverse" ? AlignmentTaskKind::reverse
         : task == "pointer" ? AlignmentTaskKind::pointer
                             : AlignmentTaskKind::copy;
}

Backend cpu_backend(int code) { return code == int(Backend::scalar) ? Backend::scalar : Backend::simd128; }

val int_array(const std::vector<std::int32_t>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}
val float_array(const std::vector<float>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

const char* kIntFields[][2] = {{"seed", "seed"}, {"dModel", "dModel"}, {"heads", "heads"}, {"batch", "batch"},
                               {"vocab", "vocab"}, {"length", "length"}, {"pairs", "pairs"},
                               {"keyRange", "keyRange"}, {"valueRange", "valueRange"}};

}  // namespace

AlignmentConfig RawAlignmentTrainer::parse(const val& c) {
  AlignmentConfig config;
  if (c.isUndefined() || c.isNull()) return config;
  config.task = task_kind(c["task"].isUndefined() ? "copy" : c["task"].as<std::string>());
  auto read_int = [&](const char* name, int& field) {
    if (!c[name].isUndefined()) field = int(c[name].as<double>());
  };
  int seed = 0;
  read_int("seed", seed);
  config.seed = std::uint32_t(seed);
  if (!c["seed"].isUndefined()) config.seed = std::uint32_t(c["seed"].as<double>());
  read_int("dModel", config.d_model);
  read_int("heads", config.heads);
  read_int("batch", config.batch);
  read_int("vocab", config.vocab);
  read_int("length", config.length);
  read_int("pairs", config.pairs);
  read_int("keyRange", config.key_range);
  read_int("valueRange", config.value_range);
  if (!c["lr"].isUndefined()) config.lr = c["lr"].as<double>();
  if (!c["uniqueKeys"].isUndefined()) config.unique_keys = c["uniqueKeys"].as<bool>();
  if (!c["positional"].isUndefined()) config.positional = c["positional"].as<bool>();
  return config;
}

std::string RawAlignmentTrainer::_config_error(const val& c) {
  if (c.isUndefined() || c.isNull()) return {};
  if (c.typeOf().as<std::string>() != "object") return "the trainer config must be an object";
  if (!c["task"].isUndefined()) {
    if (c["task"].typeOf().as<std::string>() != "string") return "task must be copy, reverse or pointer";
    const std::string task = c["task"].as<std::string>();
    if (task != "copy" && task != "reverse" && task != "pointer")
      return "task must be copy, reverse or pointer, got '" + task + "'";
  }
  for (const auto& field : kIntFields) {
    const val v = c[field[0]];
    if (v.isUndefined()) continue;
    if (v.typeOf().as<std::string>() != "number" || v.as<double>() != std::floor(v.as<double>()))
      return std::string(field[1]) + " must be an integer";
    if (std::string(field[0]) == "seed" && (v.as<double>() < 0 || v.as<double>() > 4294967295.0))
      return "seed must be an integer in [0, 4294967295]";
    if (std::fabs(v.as<double>()) > 1e6) return std::string(field[1]) + " is too large";
  }
  if (!c["lr"].isUndefined() && (c["lr"].typeOf().as<std::string>() != "number" || !std::isfinite(c["lr"].as<double>())))
    return "lr must be a finite number";
  for (const char* name : {"uniqueKeys", "positional"})
    if (!c[name].isUndefined() && c[name].typeOf().as<std::string>() != "boolean")
      return std::string(name) + " must be true or false";
  const AlignmentConfig config = parse(c);
  std::string error = validate_alignment_config(config);
  // Name the settings as JS spells them.
  for (const auto& [cpp, js] : {std::pair{"d_model", "dModel"}, std::pair{"key_range", "keyRange"},
                                std::pair{"value_range", "valueRange"}}) {
    for (std::size_t at = error.find(cpp); at != std::string::npos; at = error.find(cpp))
      error.replace(at, std::string(cpp).size(), js);
  }
  return error;
}

namespace {

// An AlignmentConfig as JS sees it (the names of docs/api.md), with the task's default step count.
val config_to_js(const AlignmentConfig& c) {
  val out = val::object();
  out.set("task", std::string(alignment_task_name(c.task)));
  out.set("seed", double(c.seed));
  out.set("dModel", c.d_model);
  out.set("heads", c.heads);
  out.set("batch", c.batch);
  out.set("lr", c.lr);
  out.set("vocab", c.vocab);
  out.set("length", c.length);
  out.set("pairs", c.pairs);
  out.set("keyRange", c.key_range);
  out.set("valueRange", c.value_range);
  out.set("uniqueKeys", c.unique_keys);
  out.set("positional", c.positional);
  out.set("steps", default_steps(c.task));
  return out;
}

}  // namespace

val RawAlignmentTrainer::_defaults(const std::string& task) {
  AlignmentConfig c;
  c.task = task_kind(task);
  return config_to_js(c);
}

RawAlignmentTrainer::RawAlignmentTrainer(const val& config) : trainer_(parse(config)) {}

double RawAlignmentTrainer::_training_bytes(const val& config) { return double(alignment_training_bytes(parse(config))); }

val RawAlignmentTrainer::_config() const {
  const AlignmentConfig& c = trainer_.config();
  val out = config_to_js(c);
  out.set("vocabSize", c.vocab_size());
  out.set("inLength", c.in_len());
  out.set("outLength", c.out_len());
  return out;
}

std::string RawAlignmentTrainer::_train(int steps, int backend) {
  std::string error = first_error({check_positive("steps", steps), check_at_most("steps", steps, 100000)});
  if (!error.empty()) return error;
  metrics_.clear();
  for (int i = 0; i < steps; ++i) {
    const StepMetrics m = trainer_.step(cpu_backend(backend));
    metrics_.push_back(m.loss);
    metrics_.push_back(m.accuracy);
  }
  return {};
}

val RawAlignmentTrainer::_metrics() const { return view_of(metrics_); }

std::string RawAlignmentTrainer::_set_lr(double lr) {
  if (!(lr > 0.0 && lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(lr);
  trainer_.set_lr(lr);
  return {};
}

val RawAlignmentTrainer::_end_step() {
  const StepMetrics m = trainer_.end_step();
  val out = val::object();
  out.set("step", m.step);
  out.set("loss", m.loss);
  out.set("accuracy", m.accuracy);
  return out;
}

val RawAlignmentTrainer::_kernel_shape() { return kernel_shape_of(trainer_.mha(), false); }

val RawAlignmentTrainer::_kernel_view(const std::string& which) { return kernel_view_of(trainer_.mha(), which); }

void RawAlignmentTrainer::_run_kernel_forward(int backend) {
  attention_forward(cpu_backend(backend), trainer_.mha().kernel_forward_args());
}

void RawAlignmentTrainer::_run_kernel_backward(int backend) {
  attention_backward(cpu_backend(backend), trainer_.mha().kernel_backward_args());
}

val RawAlignmentTrainer::_evaluate(int samples, int backend) {
  const AlignmentEvaluation e = trainer_.evaluate(std::max(1, std::min(samples, 4096)), cpu_backend(backend));
  val out = val::object();
  out.set("samples", e.samples);
  out.set("accuracy", e.accuracy);
  out.set("loss", e.loss);
  out.set("bayesCeiling", e.bayes_ceiling);
  out.set("patternMass", e.pattern_mass);
  out.set("bestHead", e.best_head);
  out.set("bestHeadMass", e.best_head_mass);
  val heads = val::array();
  for (double m : e.head_mass) heads.call<void>("push", m);
  out.set("headMass", heads);
  return out;
}

std::string RawAlignmentTrainer::_inspect(const val& sample, int backend) {
  if (sample.isUndefined() || sample.isNull() || sample.typeOf().as<std::string>() != "object")
    return "inspect takes {tokens} (copy, reverse) or {keys, values, query} (pointer)";
  const AlignmentConfig& c = trainer_.config();
  AlignmentBatch b;
  b.B = 1;
  if (!c.pointer()) {
    std::string error = check_array("tokens", sample["tokens"]);
    if (!error.empty()) return error;
    error = to_int32s("tokens", sample["tokens"], b.keys);
    if (!error.empty()) return error;
    b.values = b.keys;
    b.S = b.T = int(b.keys.size());
    b.targets.resize(b.keys.size());
    for (int t = 0; t < b.T; ++t)
      b.targets[t] = c.task == AlignmentTaskKind::copy ? b.keys[t] : b.keys[b.S - 1 - t];
  } else {
    std::string error = first_error({check_array("keys", sample["keys"]), check_array("values", sample["values"])});
    if (!error.empty()) return error;
    error = first_error({to_int32s("keys", sample["keys"], b.keys), to_int32s("values", sample["values"], b.values)});
    if (!error.empty()) return error;
    if (b.keys.size() != b.values.size())
      return "keys and values must have the same length, got " + std::to_string(b.keys.size()) + " and " +
             std::to_string(b.values.size());
    const val query = sample["query"];
    if (query.typeOf().as<std::string>() != "number" || query.as<double>() != std::floor(query.as<double>()) ||
        std::fabs(query.as<double>()) > 2147483647.0)
    {
      std::ostringstream got;
      if (query.typeOf().as<std::string>() == "number") got << query.as<double>();
      else got << "a " << query.typeOf().as<std::string>();
      return "query must be a key (a whole number), got " + got.str();
    }
    b.query = {std::int32_t(query.as<double>())};
    b.S = int(b.keys.size());
    b.T = 1;
    b.targets = {0};
    for (int s = 0; s < b.S; ++s)
      if (b.keys[s] == b.query[0]) {
        b.targets[0] = b.values[s];
        break;
      }
  }
  return trainer_.inspect(b, cpu_backend(backend), inspection_);
}

val RawAlignmentTrainer::_inspection() const {
  val out = val::object();
  out.set("H", inspection_.H);
  out.set("T", inspection_.T);
  out.set("S", inspection_.S);
  out.set("weights", float_array(inspection_.weights));
  out.set("weightsMean", float_array(inspection_.weights_mean));
  out.set("predictions", int_array(inspection_.predictions));
  out.set("confidence", float_array(inspection_.confidence));
  return out;
}

val RawAlignmentTrainer::_fixed_sample() const {
  const AlignmentBatch& b = trainer_.fixed_sample();
  val out = val::object();
  out.set("keys", int_array(b.keys));
  out.set("values", int_array(b.values));
  out.set("targets", int_array(b.targets));
  if (!b.query.empty()) out.set("query", b.query[0]);
  return out;
}

}  // namespace attnlab::wasm
