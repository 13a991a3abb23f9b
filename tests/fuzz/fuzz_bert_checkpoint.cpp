// libFuzzer target for the BERT checkpoint reader: config.json (core/models/bert_config.cpp), the
// safetensors index (core/io/safetensors.cpp), the load plan (core/models/bert_checkpoint.cpp), the
// loader (core/models/checkpoint_loader.cpp with the BERT kind) and, when a file loads, a forward and the MLM head
// (core/models/bert.cpp). Built with ASan and UBSan by `tests/fuzz/run_cpp_fuzz.sh RUNS bert_checkpoint`.
//
// The first byte picks what the rest of the input is (byte & 3):
//   0  model.safetensors, loaded with the fixed config of tests/fixtures/bert_tiny (kTinyConfig);
//   1  config.json text alone, for parse_bert_config;
//   2  config.json text, a NUL byte, then model.safetensors: both fuzzed (tiny configs, tiny files);
//   3  an edit of kTinyConfig: "key:value" replaces that field's JSON value (adds the field when it is
//      absent; "key:" with nothing after removes it), then the real modern checkpoint is loaded with it.
// Seeds: tests/fuzz/corpus/bert/ (node tests/fuzz/make_corpus.mjs), including the three tiny checkpoints.
//
// Beyond "no crash, no UB, no leak, no allocation past -malloc_limit_mb", it checks what the functions
// promise, and aborts (a finding, with the input saved) when a promise breaks:
//   - a rejected config.json leaves BertConfig{} and its message starts with "config.json"; an accepted
//     one has every field in its range, hidden_size a multiple of the heads, and fits kMaxBertWeightBytes;
//   - a failed load leaves no model and its message names config.json or model.safetensors (never
//     "the model has no tensor": the plan and the model would disagree);
//   - a loaded model holds the planned number of tensors, all finite; check_input refuses an id past the
//     vocabulary and one token too many;
//   - a forward (scalar and SIMD128) and predict(): attention rows sum to 1, layer 0's attention is the
//     same on both backends to 1e-5, the top-k is sorted, and every output is finite: the loader refuses
//     weights beyond ±1e6 (a finite 3e38 overflowed float32 in the next layer and gave NaN everywhere, a
//     finding of this fuzzer). Float32 overflow flags are still counted and printed at exit
//     ("[bert-fuzz] ...").
// The shard runner is set to run inline: the fuzzer stays on one core, and the FP flags of the whole
// forward are those of this thread (the results are the same bits either way; shard_runner.h).
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/bert.h"
#include "models/bert_checkpoint.h"
#include "models/checkpoint_loader.h"
#include "shard_runner.h"

using namespace attnlab;

#ifndef BERT_FIXTURES_DIR
#define BERT_FIXTURES_DIR "tests/fixtures/bert_tiny"  // run_cpp_fuzz.sh passes an absolute path
#endif

namespace {

// tests/fixtures/bert_tiny/modern/config.json, fields in its order (legacy and bf16 differ only in
// "architectures" and "torch_dtype"; the sizes are the same, so all three checkpoints load with it).
const std::vector<std::pair<std::string, std::string>> kTinyConfigFields = {
    {"architectures", "[\"BertForMaskedLM\"]"},
    {"attention_probs_dropout_prob", "0.1"},
    {"classifier_dropout", "null"},
    {"hidden_act", "\"gelu\""},
    {"hidden_dropout_prob", "0.1"},
    {"hidden_size", "32"},
    {"initializer_range", "0.02"},
    {"intermediate_size", "64"},
    {"layer_norm_eps", "1e-12"},
    {"max_position_embeddings", "64"},
    {"model_type", "\"bert\""},
    {"num_attention_heads", "2"},
    {"num_hidden_layers", "2"},
    {"pad_token_id", "0"},
    {"position_embedding_type", "\"absolute\""},
    {"torch_dtype", "\"float32\""},
    {"type_vocab_size", "2"},
    {"use_cache", "true"},
    {"vocab_size", "179"},
};

std::string config_text(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = "{\n";
  for (std::size_t i = 0; i < fields.size(); ++i)
    out += "  \"" + fields[i].first + "\": " + fields[i].second + (i + 1 < fields.size() ? ",\n" : "\n");
  return out + "}";
}

const std::string kTinyConfig = config_text(kTinyConfigFields);

// tests/fixtures/bert_tiny/modern/model.safetensors, for mode 3 (read once).
std::vector<std::uint8_t> g_modern;

// ---- what the run saw, printed at exit
struct Stats {
  long loads = 0, forwards = 0, overflowed = 0, non_finite = 0, invalid_without_overflow = 0;
  std::map<std::string, long> first_non_finite;  // where the first non-finite output appeared
  std::map<std::string, long> messages;          // error messages with numbers elided (BERT_FUZZ_MESSAGES=1)
  bool keep_messages = false;
} g_stats;

void print_stats() {
  std::fprintf(stderr,
               "[bert-fuzz] models loaded %ld; forwards %ld (each model on scalar and on simd128); %ld overflowed float32, %ld of "
               "them to a non-finite output; FE_INVALID without an overflow %ld\n",
               g_stats.loads, g_stats.forwards, g_stats.overflowed, g_stats.non_finite, g_stats.invalid_without_overflow);
  for (const auto& [where, n] : g_stats.first_non_finite) std::fprintf(stderr, "[bert-fuzz]   first non-finite in %s: %ld\n", where.c_str(), n);
  if (!g_stats.keep_messages) return;
  std::vector<std::pair<long, std::string>> sorted;
  for (const auto& [m, n] : g_stats.messages) sorted.push_back({n, m});
  std::sort(sorted.rbegin(), sorted.rend());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    std::fprintf(stderr, "[bert-fuzz] %9ld  %s\n", sorted[i].first, sorted[i].second.c_str());
}

// A message with its numbers as N and quoted names as "…" (for the tally of kinds).
void count_message(const std::string& m) {
  if (!g_stats.keep_messages) return;
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < m.size() && out.size() < 140; ++i) {
    const char c = m[i];
    if (quoted && c == '\\') {
      ++i;  // an escape inside a quoted name (names are shown JSON-quoted)
    } else if (c == '"') {
      out += quoted ? "\"" : "\"…";
      quoted = !quoted;
    } else if (!quoted) {
      if (c >= '0' && c <= '9') {
        if (out.empty() || out.back() != 'N') out += 'N';
      } else {
        out += c;
      }
    }
  }
  ++g_stats.messages[out];
}

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool all_finite(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

// ---- parse_bert_config's promises
void check_config(const std::string& error, const BertConfig& c) {
  if (!error.empty()) {
    count_message(error);
    require(starts_with(error, "config.json"), "a config message starts with \"config.json\"");
    const BertConfig d;
    require(c.vocab_size == d.vocab_size && c.hidden_size == d.hidden_size && c.num_hidden_layers == d.num_hidden_layers &&
                c.num_attention_heads == d.num_attention_heads && c.intermediate_size == d.intermediate_size &&
                c.max_position_embeddings == d.max_position_embeddings && c.type_vocab_size == d.type_vocab_size &&
                c.layer_norm_eps == d.layer_norm_eps && c.hidden_act == d.hidden_act,
            "a rejected config leaves BertConfig{}");
    return;
  }
  require(c.vocab_size >= 1 && c.vocab_size <= 1000000 && c.hidden_size >= 1 && c.hidden_size <= 8192 &&
              c.num_hidden_layers >= 1 && c.num_hidden_layers <= 64 && c.num_attention_heads >= 1 &&
              c.num_attention_heads <= 128 && c.intermediate_size >= 1 && c.intermediate_size <= 32768 &&
              c.max_position_embeddings >= 1 && c.max_position_embeddings <= 8192 && c.type_vocab_size >= 1 &&
              c.type_vocab_size <= 16,
          "an accepted config has every size in its range");
  require(c.hidden_size % c.num_attention_heads == 0, "hidden_size is a multiple of num_attention_heads");
  require(c.layer_norm_eps > 0 && c.layer_norm_eps < 1, "layer_norm_eps in (0, 1)");
  require(c.hidden_act == "gelu", "hidden_act is gelu");
  require(4 * (c.encoder_floats() + std::uint64_t(c.vocab_size) + std::uint64_t(c.hidden_size) * c.hidden_size) <=
              kMaxBertWeightBytes,
          "an accepted config fits kMaxBertWeightBytes");
}

// ---- a loaded model: its tensors, a forward on both CPU backends, the MLM head
void check_model(BertModel& m, const LoadPlan& plan, const Json& summary) {
  const BertConfig& c = m.config();
  ++g_stats.loads;
  const bool mlm_head = summary.find("mlm")->as_bool(), separate_decoder = summary.find("separateDecoder")->as_bool();
  const std::size_t head = mlm_head ? bert_mlm_specs(c).size() + (separate_decoder ? 1 : 0) : 0;
  require(plan.loads.size() == bert_encoder_specs(c).size() + head, "the plan loads every encoder (and head) tensor");
  require(m.has_mlm_head() == mlm_head, "the model has the head the plan found");
  for (const auto& load : plan.loads) {
    std::size_t n = 1;
    for (std::int64_t d : load.shape) n *= std::size_t(d);
    if (!load.linear) {
      const float* x = m.storage(load.canonical);
      require(x != nullptr, "a planned tensor has storage");
      require(all_finite(x, n), "a loaded tensor is finite");
    }
  }

  // [CLS] ? [MASK] ? [SEP] of tests/fixtures/bert_tiny's vocabulary, folded into the config's sizes.
  const int T = std::min(5, c.max_position_embeddings), mask_position = std::min(2, T - 1);
  const std::int32_t kIds[5] = {2, 9, 4, 17, 3}, kTypes[5] = {0, 0, 0, 1, 1};
  std::vector<std::int32_t> ids(std::size_t(c.max_position_embeddings) + 1), types(ids.size(), 0);
  for (int t = 0; t < T; ++t) {
    ids[std::size_t(t)] = kIds[t] % c.vocab_size;
    types[std::size_t(t)] = kTypes[t] % c.type_vocab_size;
  }
  require(m.check_input(ids.data(), types.data(), T).empty(), "ids in the vocabulary are accepted");
  require(!m.check_input(ids.data(), types.data(), c.max_position_embeddings + 1).empty(), "one token too many is refused");
  ids[0] = c.vocab_size;
  require(!m.check_input(ids.data(), types.data(), T).empty(), "an id past the vocabulary is refused");
  ids[0] = kIds[0] % c.vocab_size;

  const int L = c.num_hidden_layers, H = c.num_attention_heads, D = c.head_dim(), E = c.hidden_size;
  // Layer 0's attention on scalar, for SIMD128: the same scores (the products match bit for bit), only
  // the exp and the row sums differ, by a few ulp (attention_simd128.cpp).
  std::vector<float> scalar_attention;
  bool scalar_overflowed = false;
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    std::feclearexcept(FE_ALL_EXCEPT);
    m.forward(backend, ids.data(), types.data(), T);
    std::vector<BertModel::Prediction> top;
    if (m.has_mlm_head()) top = m.predict(mask_position, 5);
    const bool overflowed = std::fetestexcept(FE_OVERFLOW | FE_DIVBYZERO) != 0;
    const bool invalid = std::fetestexcept(FE_INVALID) != 0;
    ++g_stats.forwards;
    g_stats.overflowed += overflowed;
    g_stats.invalid_without_overflow += invalid && !overflowed;

    // Shapes, then finiteness in the order the forward computes (the first non-finite stage is counted).
    require(m.length() == T, "length() is T");
    std::string first;
    auto look = [&](const std::string& where, const float* x, std::size_t n) {
      if (first.empty() && !all_finite(x, n)) first = where;
    };
    look("embeddings", m.hidden_state(0).data(), std::size_t(m.hidden_state(0).size()));
    for (int l = 0; l < L; ++l) {
      const auto& q = m.queries(l);
      const auto& k = m.keys(l);
      const auto& a = m.attention(l);
      const RowMatrix& h = m.hidden_state(l + 1);
      require(q.size() == std::size_t(H) * T * D && k.size() == q.size(), "queries and keys are [H, T, D]");
      require(a.size() == std::size_t(H) * T * T, "attention is [H, T, T]");
      require(h.rows() == T && h.cols() == E, "a hidden state is [T, E]");
      look("layer " + std::to_string(l) + " queries/keys", q.data(), q.size());
      look("layer " + std::to_string(l) + " queries/keys", k.data(), k.size());
      look("layer " + std::to_string(l) + " attention", a.data(), a.size());
      look("layer " + std::to_string(l) + " output", h.data(), std::size_t(h.size()));
      if (!overflowed) {
        for (std::size_t row = 0; row < std::size_t(H) * T; ++row) {
          double sum = 0;
          for (int s = 0; s < T; ++s) {
            const float w = a[row * T + std::size_t(s)];
            require(w >= 0.0f && w <= 1.0f, "an attention weight is in [0, 1]");
            sum += w;
          }
          require(std::fabs(sum - 1.0) <= 1e-4, "an attention row sums to 1");
        }
      }
    }
    if (m.has_mlm_head()) {
      require(top.size() == std::size_t(std::min(5, c.vocab_size)), "predict gives min(k, V) tokens");
      for (std::size_t i = 0; i < top.size(); ++i) {
        require(top[i].id >= 0 && top[i].id < c.vocab_size, "a predicted id is in the vocabulary");
        for (std::size_t j = 0; j < i; ++j) require(top[j].id != top[i].id, "predicted ids are distinct");
        if (first.empty() && !(std::isfinite(top[i].logit) && std::isfinite(top[i].probability))) first = "MLM head";
      }
      if (first.empty()) {
        double total = 0;
        for (std::size_t i = 0; i < top.size(); ++i) {
          require(top[i].probability >= 0.0f && top[i].probability <= 1.0f, "a probability is in [0, 1]");
          if (i) require(top[i - 1].logit >= top[i].logit, "the top-k is sorted by logit");
          total += top[i].probability;
        }
        require(total <= 1.0 + 1e-5, "the top-k probabilities sum to at most 1");
      }
    } else {
      require(top.empty(), "no head, no predictions");
    }
    if (backend == Backend::scalar) {
      scalar_attention = m.attention(0);
      scalar_overflowed = overflowed;
    } else if (!overflowed && !scalar_overflowed) {
      const auto& a = m.attention(0);
      for (std::size_t i = 0; i < a.size(); ++i)
        require(std::fabs(a[i] - scalar_attention[i]) <= 1e-5f, "layer 0's attention on SIMD128 is scalar's to 1e-5");
    }
    if (!first.empty()) {
      // The loader refuses weights beyond ±1e6 (checkpoint_loader.cpp), which cannot overflow float32 at
      // these sizes: a loaded model computes finite outputs, overflow flag or not.
      std::fprintf(stderr, "non-finite output (first in %s, %s backend%s)\n", first.c_str(), backend_name(backend),
                   overflowed ? ", float32 overflowed" : "");
      require(false, "a loaded model (every weight within ±1e6) computes finite outputs");
      ++g_stats.non_finite;
      ++g_stats.first_non_finite[first];
    }
  }
}

// load_checkpoint("bert", ...) and its promises; `config_fixed`: the config is known to be valid.
void load_and_check(const std::string& config, const std::uint8_t* file, std::size_t size, bool config_fixed) {
  std::unique_ptr<BertModel> model;
  LoadPlan plan;
  Json summary;
  const std::string error = load_checkpoint_as("bert", config, file, size, "safetensors", model, &summary, &plan);
  if (!error.empty()) {
    count_message(error);
    require(!model, "a failed load leaves no model");
    require(starts_with(error, "model.safetensors") || (!config_fixed && starts_with(error, "config.json")),
            "a load message names model.safetensors (or config.json)");
    return;
  }
  require(model != nullptr, "a load without an error gives a model");
  check_model(*model, plan, summary);
}

void fuzz_config(const std::string& text) {
  BertConfig c;
  const std::string error = parse_bert_config(text, c);
  check_config(error, c);
}

// Mode 3: "key:value" -> kTinyConfig with that field's value replaced (or added, or removed).
std::string edited_config(const std::string& edit) {
  const std::size_t colon = edit.find(':');
  const std::string key = edit.substr(0, colon);
  const std::string value = colon == std::string::npos ? std::string() : edit.substr(colon + 1);
  auto fields = kTinyConfigFields;
  bool found = false;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it->first != key) continue;
    found = true;
    if (value.empty()) fields.erase(it);
    else it->second = value;
    break;
  }
  if (!found && !value.empty()) fields.push_back({key, value});
  return config_text(fields);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shard_runner().set_active_workers(0);
  std::ifstream in(BERT_FIXTURES_DIR "/modern/model.safetensors", std::ios::binary);
  g_modern.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (g_modern.empty()) {
    std::fprintf(stderr, "fuzz_bert_checkpoint: cannot read %s/modern/model.safetensors\n", BERT_FIXTURES_DIR);
    std::exit(1);
  }
  // The fixture loads with the fixed config, and the fixed config is the fixture's.
  fuzz_config(kTinyConfig);
  std::unique_ptr<BertModel> model;
  const std::string error = load_checkpoint_as("bert", kTinyConfig, g_modern.data(), g_modern.size(), "safetensors", model);
  if (!error.empty() || !model || !model->has_mlm_head()) {
    std::fprintf(stderr, "fuzz_bert_checkpoint: the modern fixture does not load: %s\n", error.c_str());
    std::exit(1);
  }
  const char* keep = std::getenv("BERT_FUZZ_MESSAGES");
  g_stats.keep_messages = keep && *keep && std::strcmp(keep, "0") != 0;
  std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t* rest = data + 1;
  const std::size_t n = size - 1;
  switch (data[0] & 3) {
    case 0:
      load_and_check(kTinyConfig, rest, n, true);
      break;
    case 1:
      fuzz_config(std::string(reinterpret_cast<const char*>(rest), n));
      break;
    case 2: {
      const auto* nul = static_cast<const std::uint8_t*>(std::memchr(rest, 0, n));
      const std::size_t config_size = nul ? std::size_t(nul - rest) : n;
      const std::string config(reinterpret_cast<const char*>(rest), config_size);
      BertConfig c;
      check_config(parse_bert_config(config, c), c);
      // The file: after the NUL (none: an empty file). A copy, so ASan sees its exact end.
      const std::vector<std::uint8_t> file(nul ? nul + 1 : rest + n, rest + n);
      load_and_check(config, file.data(), file.size(), false);
      break;
    }
    default: {
      const std::string config = edited_config(std::string(reinterpret_cast<const char*>(rest), n));
      BertConfig c;
      const std::string error = parse_bert_config(config, c);
      check_config(error, c);
      if (error.empty()) load_and_check(config, g_modern.data(), g_modern.size(), false);
      break;
    }
  }
  return 0;
}
