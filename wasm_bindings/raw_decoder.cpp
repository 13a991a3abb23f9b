#include "raw_decoder.h"

#include <cmath>
#include <tuple>

#include "models/circuits.h"
#include "models/decoder_probes.h"
#include "raw_api.h"

namespace attnlab::wasm {

namespace {

val floats_of(const std::vector<float>& v) {
  return val::global("Float32Array").new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

val error_record(const std::string& message) {
  val out = val::object();
  out.set("error", message);
  return out;
}

std::string check_backend(int backend) {
  return backend == 0 || backend == 1 ? "" : "the backend must be scalar or simd128 (WebGPU runs the staged calls)";
}

// A whole number in [0, 2^53): JS numbers hold those exactly.
bool whole(double x) { return x >= 0 && x < 9007199254740992.0 && x == std::floor(x); }

// settings[name] as a number, or `fallback` when undefined; "" or "<name> must be a number, got ...".
std::string number_field(const val& settings, const char* name, double fallback, double& out) {
  const val v = settings[name];
  if (v.isUndefined()) {
    out = fallback;
    return {};
  }
  if (!v.isNumber()) return std::string(name) + " must be a number, got " + v.typeOf().as<std::string>();
  out = v.as<double>();
  if (!std::isfinite(out)) return std::string(name) + " must be finite";
  return {};
}

}  // namespace

std::string RawDecoder::read_ids(const val& ids, std::vector<std::int32_t>& out) const {
  if (!decoder()) return "no model is loaded";
  std::string error = check_array("ids", ids);
  if (!error.empty()) return error;
  error = to_int32s("ids", ids, out);
  if (!error.empty()) return error;
  return decoder()->check_prompt(out.data(), int(out.size()));
}

std::string RawDecoder::read_heads(const val& heads, Intervention& out) const { return read_heads_off(heads, out.heads_off); }

std::string RawDecoder::_forward(const val& ids, int backend, const val& heads) {
  std::vector<std::int32_t> i;
  Intervention off;
  std::string error = read_ids(ids, i);
  if (error.empty()) error = check_backend(backend);
  if (error.empty()) error = read_heads(heads, off);
  if (!error.empty()) return error;
  decoder()->forward(Backend(backend), i.data(), int(i.size()), off);
  return {};
}

std::string RawDecoder::_begin_forward(const val& ids, const val& heads) {
  std::vector<std::int32_t> i;
  Intervention off;
  std::string error = read_ids(ids, i);
  if (error.empty()) error = read_heads(heads, off);
  if (!error.empty()) return error;
  decoder()->begin_forward(i.data(), int(i.size()), off);
  return {};
}

std::string RawDecoder::_step(double id, int backend, const val& heads) {
  if (!decoder()) return "no model is loaded";
  if (!(id == std::floor(id)) || id < 0 || id > 2e9) return "the token id must be a whole number, got " + std::to_string(id);
  Intervention off;
  std::string error = check_backend(backend);
  if (error.empty()) error = decoder()->check_step(std::int32_t(id));
  if (error.empty()) error = read_heads(heads, off);
  if (!error.empty()) return error;
  decoder()->step(Backend(backend), std::int32_t(id), off);
  return {};
}

val RawDecoder::_attention(int layer) const {
  if (!decoder() || !decoder()->computed() || layer < 0 || layer >= decoder()->spec().n_layer) return val::undefined();
  return view_of(decoder()->attention(layer));
}

val RawDecoder::_residual(int layer) const {
  if (!decoder() || !decoder()->computed() || layer < 0 || layer > decoder()->spec().n_layer) return val::undefined();
  return view_of(decoder()->residual(layer));
}

val RawDecoder::_logits(int row) const {
  if (!decoder() || !decoder()->computed() || row < 0 || row >= decoder()->pass_length()) return val::undefined();
  return floats_of(decoder()->logits(row));
}

val RawDecoder::_rotary_speeds() const {
  if (!decoder()) return val::undefined();
  return floats_of(decoder()->rotary_speeds());
}

namespace {

// {temperature, topK, topP, maxNewTokens, seed, stopAtEos, eosIds, top, keepLogits, headsOff} (any left
// out: the default; headsOff [layer, head, ...] checked against the model's layers x heads) -> "" and the
// settings, or what is wrong.
std::string read_writing_settings(const val& settings, const DecoderSpec& spec, WritingSettings& s) {
  if (settings.typeOf().as<std::string>() != "object" || settings.isNull())
    return "the settings must be an object {temperature, topK, topP, maxNewTokens, seed, stopAtEos, top, keepLogits}";
  double temperature, top_k, top_p, max_new, seed, top;
  for (auto [name, fallback, out] : {std::tuple<const char*, double, double*>{"temperature", 1.0, &temperature}, {"topK", 0.0, &top_k},
                                     {"topP", 1.0, &top_p}, {"maxNewTokens", 20.0, &max_new}, {"seed", 0.0, &seed}, {"top", 10.0, &top}}) {
    const std::string error = number_field(settings, name, fallback, *out);
    if (!error.empty()) return error;
  }
  if (!whole(top_k) || top_k > 1e9) return "topK must be a whole number, 0 (no limit) or more";
  if (!whole(max_new) || max_new > 1e6) return "maxNewTokens must be a whole number, 0 or more";
  if (!whole(seed)) return "seed must be a whole number in [0, 2^53)";
  if (!whole(top) || top > 1e6) return "top must be a whole number, 0 or more";
  s = WritingSettings{};
  s.sampling = {temperature, int(top_k), top_p};
  s.max_new_tokens = int(max_new);
  s.seed = std::uint64_t(seed);
  s.top = int(top);
  for (auto [name, out] : {std::pair<const char*, bool*>{"stopAtEos", &s.stop_at_eos}, {"keepLogits", &s.keep_logits}}) {
    const val flag = settings[name];
    if (flag.isUndefined()) continue;
    if (!(flag.isTrue() || flag.isFalse())) return std::string(name) + " must be true or false";
    *out = flag.isTrue();
  }
  // eosIds: the tokenizer's end-of-text ids (generation_config.json's list, a chat template's turn end).
  const val eos = settings["eosIds"];
  if (!eos.isUndefined() && !eos.isNull()) {
    if (!eos.isArray()) return "eosIds must be an array of token ids";
    const std::size_t n = eos["length"].as<std::size_t>();
    if (n > 64) return "eosIds holds " + std::to_string(n) + " ids: at most 64";
    for (std::size_t i = 0; i < n; ++i) {
      const val id = eos[i];
      const double x = id.isNumber() ? id.as<double>() : -1.0;
      if (!whole(x) || x > 2e9) return "eosIds[" + std::to_string(i) + "] must be a token id (a whole number 0 or more)";
      s.eos_ids.push_back(int(x));
    }
  }
  const val heads = settings["headsOff"];
  if (!heads.isUndefined() && !heads.isNull()) {
    const std::string error = read_head_pairs(heads, spec.n_layer, spec.n_head, s.heads_off);
    if (!error.empty()) return "headsOff: " + error;
  }
  return {};
}

val step_record(const WritingStep& step) {
  val out = val::object();
  out.set("id", step.id);
  out.set("probability", step.probability);
  out.set("position", step.position);
  out.set("top", chance_records(step.top));
  out.set("attention", floats_of(step.attention));
  return out;
}

}  // namespace

std::string RawDecoder::_begin_writing(const val& ids, const val& settings, int backend) {
  std::vector<std::int32_t> i;
  std::string error = read_ids(ids, i);
  if (error.empty()) error = check_backend(backend);
  if (!error.empty()) return error;
  WritingSettings s;
  error = read_writing_settings(settings, decoder()->spec(), s);
  if (!error.empty()) return error;
  auto writer = std::make_unique<Writer>(*decoder());
  error = writer->begin(Backend(backend), i.data(), int(i.size()), s);
  if (!error.empty()) return error;
  writer_ = std::move(writer);
  return {};
}

val RawDecoder::_write_to(const val& settings, int count) {
  if (!writer_) return error_record("begin writing first");
  if (count < 0) return error_record("count must be 0 or more");
  WritingSettings s;
  std::string error = read_writing_settings(settings, decoder()->spec(), s);
  if (error.empty()) error = writer_->write_to(s, count);
  if (!error.empty()) return error_record(error);
  val out = val::object();
  out.set("written", writer_->written());
  out.set("firstChanged", writer_->take_first_changed());
  out.set("stopReason", writer_->stop_reason());
  return out;
}

val RawDecoder::_written_step(int k) const {
  if (!writer_ || k < 0 || k >= writer_->written()) return val::null();
  return step_record(writer_->steps()[std::size_t(k)]);
}

std::string RawDecoder::drawn_from(int step, const std::vector<float>*& out) const {
  out = nullptr;
  if (!writer_) return "begin writing first";
  if (step < 0) step = writer_->written();  // the next token's
  if (step > writer_->written()) return "step must be in [0, " + std::to_string(writer_->written()) + "] (the tokens written, then the next)";
  if (step == writer_->written()) {
    out = &writer_->logits();
    return {};
  }
  const std::vector<float>& kept = writer_->steps()[std::size_t(step)].logits;
  if (kept.empty()) return "the writer keeps no logits of written steps: begin writing with keepLogits";
  out = &kept;
  return {};
}

val RawDecoder::_next_token() {
  const WritingStep* step = writer_ ? writer_->next_step() : nullptr;
  return step ? step_record(*step) : val::null();
}

val RawDecoder::_distribution(int step, double temperature, int top_k, double top_p, int k) const {
  const Sampling s{temperature, top_k, top_p};
  std::string error = check_sampling(s);
  if (!error.empty()) return error_record(error);
  if (k < 0) return error_record("k must be 0 or more");
  const std::vector<float>* z = nullptr;
  error = drawn_from(step, z);
  if (!error.empty()) return error_record(error);
  return chance_records(top_tokens(next_token_distribution(z->data(), int(z->size()), s), z->data(), k));
}

val RawDecoder::_chance(int step, double temperature, int top_k, double top_p, int id) const {
  const Sampling s{temperature, top_k, top_p};
  std::string error = check_sampling(s);
  const std::vector<float>* z = nullptr;
  if (error.empty()) error = drawn_from(step, z);
  if (error.empty() && (id < 0 || id >= int(z->size()))) error = "id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(z->size()) + ")";
  if (!error.empty()) return error_record(error);
  return val(next_token_distribution(z->data(), int(z->size()), s)[std::size_t(id)]);
}

val RawDecoder::_head_roles(int n, double seed, int backend, const val& heads) {
  if (!decoder()) return error_record("no model is loaded");
  if (!whole(seed)) return error_record("seed must be a whole number in [0, 2^53)");
  Intervention off;
  std::string error = check_backend(backend);
  if (error.empty()) error = read_heads(heads, off);
  if (!error.empty()) return error_record(error);
  HeadRoles r;
  error = head_roles(*decoder(), Backend(backend), n, std::uint64_t(seed), off.heads_off, r);
  if (!error.empty()) return error_record(error);
  val out = val::object();
  out.set("layers", r.layers);
  out.set("heads", r.heads);
  val tokens = val::array();
  for (int id : r.tokens) tokens.call<void>("push", id);
  out.set("tokens", tokens);
  out.set("previous", floats_of(r.previous));
  out.set("first", floats_of(r.first));
  out.set("induction", floats_of(r.induction));
  out.set("duplicate", floats_of(r.duplicate));
  out.set("firstCopyLoss", r.first_copy_loss);
  out.set("secondCopyLoss", r.second_copy_loss);
  return out;
}

namespace {

val doubles_of(const std::vector<double>& v) {
  return val::global("Float64Array").new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

val cache_record(const ActivationCache& cache) {
  val out = val::array();
  for (const CachedActivation& a : cache.entries()) {
    val entry = val::object();
    entry.set("name", a.name);
    val shape = val::array();
    for (int d : a.shape) shape.call<void>("push", d);
    entry.set("shape", shape);
    entry.set("values", floats_of(a.values));
    out.call<void>("push", entry);
  }
  return out;
}

bool whole_id(const val& v, int& out) {
  if (!v.isNumber()) return false;
  const double x = v.as<double>();
  if (!whole(x) || x > 2e9) return false;
  out = int(x);
  return true;
}

}  // namespace

val RawDecoder::_capture(const val& ids, int backend, const val& heads) {
  std::vector<std::int32_t> i;
  Intervention iv;
  std::string error = read_ids(ids, i);
  if (error.empty()) error = check_backend(backend);
  if (error.empty()) error = read_heads(heads, iv);
  if (!error.empty()) return error_record(error);
  ActivationCache cache;
  iv.capture = &cache;
  decoder()->forward(Backend(backend), i.data(), int(i.size()), iv);
  return cache_record(cache);
}

val RawDecoder::_attribute(const val& ids, const val& answer, const val& wrong, int backend) {
  if (!decoder()) return error_record("no model is loaded");
  std::vector<std::int32_t> i;
  std::string error = check_array("ids", ids);
  if (error.empty()) error = to_int32s("ids", ids, i);
  if (error.empty()) error = check_backend(backend);
  int a = -1, b = -1;
  if (error.empty() && !(whole_id(answer, a) && whole_id(wrong, b))) error = "the answer and the wrong answer must be token ids";
  if (!error.empty()) return error_record(error);
  LogitAttribution r;
  error = attribute_logits(*decoder(), Backend(backend), i, a, b, r);
  if (!error.empty()) return error_record(error);
  val out = val::object();
  out.set("layers", r.layers);
  out.set("heads", r.heads);
  out.set("embed", r.embed);
  out.set("posEmbed", r.pos_embed);
  out.set("head", doubles_of(r.head));
  out.set("attnBias", doubles_of(r.attn_bias));
  out.set("mlp", doubles_of(r.mlp));
  out.set("constant", r.constant);
  // What the constant and the scale are of (the page's and the CLI's words): a final norm, an unembedding bias.
  out.set("finalNorm", decoder()->spec().has_norm());
  out.set("outputBias", decoder()->spec().output_bias);
  out.set("total", r.total);
  out.set("logitDiff", r.logit_diff);
  return out;
}

val RawDecoder::_patch_begin(const val& clean, const val& corrupt, const val& answer, const val& wrong, int backend) {
  patcher_.reset();
  if (!decoder()) return error_record("no model is loaded");
  std::vector<std::int32_t> c, k;
  std::string error = check_array("clean", clean);
  if (error.empty()) error = to_int32s("clean", clean, c);
  if (error.empty()) error = check_array("corrupt", corrupt);
  if (error.empty()) error = to_int32s("corrupt", corrupt, k);
  if (error.empty()) error = check_backend(backend);
  int a = -1, b = -1;
  if (error.empty() && !(whole_id(answer, a) && whole_id(wrong, b))) error = "the answer and the wrong answer must be token ids";
  if (!error.empty()) return error_record(error);
  auto patcher = std::make_unique<ActivationPatcher>();
  error = patcher->begin(*decoder(), Backend(backend), c, k, a, b);
  if (!error.empty()) return error_record(error);
  patcher_ = std::move(patcher);
  val out = val::object();
  out.set("cleanDiff", patcher_->clean_diff());
  out.set("corruptDiff", patcher_->corrupt_diff());
  out.set("tokens", patcher_->tokens());
  return out;
}

val RawDecoder::_patch_row(const std::string& site, int layer) {
  if (!patcher_ || !decoder()) return error_record("begin patching first");
  PatchSite s;
  if (!patch_site_from_name(site, s)) return error_record("no patching site '" + site + "' (resid_pre, z, pattern, attn_out, mlp_out)");
  if (const std::string error = check_patch_site(*decoder(), s); !error.empty()) return error_record(error);
  if (layer < 0 || layer >= decoder()->spec().n_layer)
    return error_record("layer " + std::to_string(layer) + " is not in this model (0 to " + std::to_string(decoder()->spec().n_layer - 1) + ")");
  return doubles_of(patcher_->row(s, layer));
}

val RawDecoder::_patch_clean_cache() const {
  if (!patcher_) return error_record("begin patching first");
  return cache_record(patcher_->clean_cache());
}

val RawDecoder::_logit_lens() const {
  val out = val::array();
  if (!decoder()) return out;
  for (const auto& row : logit_lens(*decoder())) {
    val cells = val::array();
    for (const LensCell& c : row) {
      val cell = val::object();
      cell.set("id", c.id);
      cell.set("probability", c.probability);
      cells.call<void>("push", cell);
    }
    out.call<void>("push", cells);
  }
  return out;
}

}  // namespace attnlab::wasm
