#include "raw_trainer.h"

#include "raw_digits.h"

#include "validate.h"

namespace attnlab::wasm {

namespace {

Backend cpu_backend(int code) { return code == int(Backend::scalar) ? Backend::scalar : Backend::simd128; }

TrainerAssets assets_of(const RawDigits* digits) {
  TrainerAssets assets;
  if (digits) assets.digits = &digits->asset();
  return assets;
}

// The JS side writes the text (attnlab.js): a parse error means a bug there, still said, never thrown.
std::string read(const std::string& text, Json& out) {
  std::string error = parse_json(text, out);
  return error.empty() ? error : "the record is not JSON (" + error + ")";
}

}  // namespace

RawTrainer::RawTrainer(const std::string& id, const std::string& config, const RawDigits* digits) {
  Json c;
  read(config, c);
  std::string error;
  trainer_ = create_trainer(id, c, assets_of(digits), error);
  if (trainer_) step_ = trainer_->staged_step();
}

std::string RawTrainer::_config_error(const std::string& id, const std::string& config, const RawDigits* digits) {
  Json c;
  std::string error = read(config, c);
  return error.empty() ? trainer_config_error(id, c, assets_of(digits)) : error;
}

std::string RawTrainer::_defaults(const std::string& id, const std::string& variant) {
  const TrainerKind* kind = find_trainer_kind(id);
  return kind ? write_json(kind->defaults(variant)) : std::string();
}

double RawTrainer::_training_bytes(const std::string& id, const std::string& config) {
  const TrainerKind* kind = find_trainer_kind(id);
  Json c;
  if (!kind || !kind->training_bytes || !read(config, c).empty()) return -1.0;
  return kind->training_bytes(c);
}

std::string RawTrainer::_trainer_ids() {
  Json ids = Json::array();
  for (const TrainerKind& kind : trainer_kinds()) ids.push(Json(kind.id));
  return write_json(ids);
}

std::string RawTrainer::_train(int steps, int backend) {
  std::string error = first_error({check_positive("steps", steps), check_at_most("steps", steps, 100000)});
  if (!error.empty()) return error;
  metrics_.clear();
  for (int i = 0; i < steps; ++i) {
    const StepMetrics m = trainer_->step(cpu_backend(backend));
    metrics_.push_back(m.loss);
    metrics_.push_back(m.accuracy);
  }
  return {};
}

val RawTrainer::_metrics() const { return view_of(metrics_); }

std::string RawTrainer::_set_lr(double lr) {
  if (!(lr > 0.0 && lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(lr);
  trainer_->set_lr(lr);
  return {};
}

std::string RawTrainer::_config() const { return write_json(trainer_->config_record()); }

std::string RawTrainer::_end_step() {
  const StepMetrics m = step_->end();
  Json out = Json::object();
  out.set("step", m.step);
  if (m.epoch > 0) out.set("epoch", m.epoch);  // a trainer without epochs reports none
  out.set("loss", m.loss);
  out.set("accuracy", m.accuracy);
  return write_json(out);
}

std::string RawTrainer::keep(std::string error, Json record) {
  blobs_.clear();
  result_ = error.empty() ? std::move(record) : Json();
  result_text_ = error.empty() ? write_json(result_, &blobs_) : std::string();
  return error;
}

std::string RawTrainer::_evaluate(const std::string& options, int backend) {
  Json in, out;
  std::string error = read(options, in);
  if (error.empty()) error = trainer_->evaluate_record(in, cpu_backend(backend), out);
  return keep(std::move(error), std::move(out));
}

std::string RawTrainer::_inspect(const std::string& input, int backend) {
  Json in, out;
  std::string error = read(input, in);
  if (error.empty()) error = trainer_->inspect_record(in, cpu_backend(backend), out);
  return keep(std::move(error), std::move(out));
}

std::string RawTrainer::_data(const std::string& part) {
  Json out;
  std::string error = trainer_->data_record(part, out);
  return keep(std::move(error), std::move(out));
}

std::string RawTrainer::_set_data(const std::string& input) {
  Json in;
  std::string error = read(input, in);
  return error.empty() ? trainer_->set_data_record(in) : error;
}

void RawTrainer::_release() {
  blobs_.clear();
  result_ = Json();
  std::string().swap(result_text_);
}

val RawTrainer::_blob(int i) const {
  if (i < 0 || i >= int(blobs_.size())) return val::undefined();
  const Json& b = *blobs_[i];
  switch (b.kind()) {
    case Json::Kind::floats: return val(emscripten::typed_memory_view(b.floats().size(), b.floats().data()));
    case Json::Kind::ints: return val(emscripten::typed_memory_view(b.ints().size(), b.ints().data()));
    case Json::Kind::bytes: return val(emscripten::typed_memory_view(b.bytes().size(), b.bytes().data()));
    default: return val::undefined();
  }
}

}  // namespace attnlab::wasm
