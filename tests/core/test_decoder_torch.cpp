// The decoder built from a spec (core/models/decoder.h) against plain PyTorch
// (tests/fixtures/make_decoder_fixtures.py): the pieces a Llama-style kind adds to GPT-2's, each alone
// (RMSNorm, rotary positions, the gated SiLU, grouped-query attention reading a group's keys and values
// in place, on scalar and simd128), then a tiny decoder of them under the "llama" name table: the
// prompt's logits, attentions and residuals within twice PyTorch's own float32 error against its
// float64 run (at least 1e-5), cached steps against PyTorch's full recompute, greedy ids equal. The
// key/value cache's growth, truncation and beam reordering on their own.
#include <cmath>
#include <limits>

#include "attention.h"
#include "layers/activations.h"
#include "layers/rms_norm.h"
#include "layers/rotary.h"
#include "models/decoder.h"
#include "models/kv_cache.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const SafeTensorsFile& pieces() {
  static const SafeTensorsFile f = load_fixture("decoder_pieces.safetensors");
  return f;
}
const SafeTensorsFile& tiny() {
  static const SafeTensorsFile f = load_fixture("decoder_tiny.safetensors");
  return f;
}

double tolerance(const SafeTensorsFile& f, const std::string& name) {
  return std::max(1e-5, 2 * std::stod(f.metadata.at(name + ".f32_vs_f64")));
}

void expect_close(const SafeTensorsFile& f, const std::string& name, const std::vector<float>& ours) {
  const std::vector<float> torch = tensor_f(f, name);
  REQUIRE(ours.size() == torch.size());
  const double worst = max_abs_diff(ours.data(), torch.data(), ours.size());
  INFO(name << ": max |ours - torch| " << worst << ", tolerance " << tolerance(f, name));
  CHECK(worst <= tolerance(f, name));
}

// The fixture's decoder: Llama's names, Qwen2's q/k/v biases, 4 query heads over 2 key/value heads.
DecoderSpec tiny_spec() {
  DecoderSpec s;
  s.vocab_size = 97, s.n_embd = 24, s.n_layer = 2, s.n_head = 4, s.n_kv_head = 2, s.head_dim = 6, s.n_inner = 40, s.n_positions = 64;
  s.norm_eps = 1e-6, s.rope_theta = 10000.0;
  s.norm = DecoderNorm::rms_norm, s.mlp = DecoderMlp::gated_silu, s.positions = DecoderPositions::rotary;
  s.layout = WeightLayout::out_in;
  s.qkv_bias = true, s.out_bias = false, s.mlp_bias = false, s.tied_unembedding = false;
  return s;
}

// Every tensor decoder_tensors() lists, from the fixture, through the loader's two calls.
std::unique_ptr<Decoder> tiny_decoder() {
  const DecoderSpec spec = tiny_spec();
  REQUIRE(check_decoder_spec(spec) == "");
  auto model = std::make_unique<Decoder>(spec, *decoder_names("llama"));
  for (const DecoderTensorShape& t : decoder_tensors(spec, model->names())) {
    const auto it = tiny().tensors.find(t.name);
    REQUIRE_MESSAGE(it != tiny().tensors.end(), "fixture has no tensor " << t.name);
    REQUIRE(it->second.shape == t.shape);
    const std::vector<float> data = it->second.to_float();
    if (t.linear) {
      REQUIRE(model->set_linear_weight(t.name, data.data()));
    } else {
      float* storage = model->storage(t.name);
      REQUIRE_MESSAGE(storage, "no storage for " << t.name);
      std::copy(data.begin(), data.end(), storage);
    }
  }
  return model;
}

}  // namespace

TEST_CASE("decoder pieces: RMSNorm, rotary positions and the gated SiLU against PyTorch") {
  const std::vector<float> x = tensor_f(pieces(), "rms.x"), gamma = tensor_f(pieces(), "rms.weight");
  const int E = int(gamma.size()), N = int(x.size()) / E;
  RowMatrix y(N, E);
  rms_norm_forward(ConstMatrixMap(x.data(), N, E), gamma.data(), 1e-6, y);
  expect_close(pieces(), "rms.y", std::vector<float>(y.data(), y.data() + y.size()));

  // Rotary: [H, T, D], position start + t; applying it again at position 0 changes nothing.
  std::vector<float> r = tensor_f(pieces(), "rotary.x");
  const int D = 6, T = int(r.size()) / (4 * D), start = std::stoi(pieces().metadata.at("rotary.start"));
  const Rotary rotary(D, 10000.0);
  const std::vector<float> unturned = r;
  for (int h = 0; h < 4; ++h)
    for (int t = 0; t < T; ++t) rotary.apply(r.data() + (std::size_t(h) * T + t) * D, start + t);
  expect_close(pieces(), "rotary.y", r);
  std::vector<float> same = unturned;
  rotary.apply(same.data(), 0);
  CHECK(std::equal(same.begin(), same.begin() + D, unturned.begin()));

  std::vector<float> gate = tensor_f(pieces(), "silu_gate.gate");
  const std::vector<float> up = tensor_f(pieces(), "silu_gate.up");
  const int F = 40, rows = int(gate.size()) / F;
  MatrixMap g(gate.data(), rows, F);
  silu_gate_forward(g, ConstMatrixMap(up.data(), rows, F));
  expect_close(pieces(), "silu_gate.y", gate);
}

TEST_CASE("grouped-query attention[H=4,Hkv=2,T=S=9,D=6,causal]: query head h reads key/value head h/2 in place, scalar and simd128 against PyTorch") {
  const std::vector<float> q = tensor_f(pieces(), "gqa.q"), k = tensor_f(pieces(), "gqa.k"), v = tensor_f(pieces(), "gqa.v");
  const int H = 4, Hkv = 2, D = 6, T = 9, S = 9;
  std::vector<float> mask(std::size_t(T) * S, 0.0f);
  for (int t = 0; t < T; ++t)
    for (int s = t + 1; s < S; ++s) mask[std::size_t(t) * S + s] = -std::numeric_limits<float>::infinity();
  // The same keys and values also in a cache with room to grow (capacity 13), NaN in the unused rows:
  // the kernel must read only each head's first S rows, kv_stride apart.
  const int C = 13;
  std::vector<float> k_room(std::size_t(Hkv) * C * D, std::nanf("")), v_room = k_room;
  for (int h = 0; h < Hkv; ++h) {
    std::copy_n(k.data() + std::size_t(h) * S * D, S * D, k_room.data() + std::size_t(h) * C * D);
    std::copy_n(v.data() + std::size_t(h) * S * D, S * D, v_room.data() + std::size_t(h) * C * D);
  }
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    std::vector<float> packed_w, packed_o;
    for (bool room : {false, true}) {
      std::vector<float> weights(std::size_t(H) * T * S, -1.0f), out(std::size_t(H) * T * D, -1.0f);
      AttentionForward a;
      a.shape = {1, H, T, S, D};
      a.scale = 1.0f / std::sqrt(float(D));
      a.q = q.data();
      a.k = room ? k_room.data() : k.data();
      a.v = room ? v_room.data() : v.data();
      a.kv_heads = Hkv;
      a.kv_stride = room ? std::size_t(C) * D : 0;
      a.mask = {mask.data(), 0, 0};
      a.weights = weights.data();
      a.out = out.data();
      attention_forward(backend, a);
      INFO(backend_name(backend) << (room ? ", kv_stride" : ", packed"));
      expect_close(pieces(), "gqa.weights", weights);
      expect_close(pieces(), "gqa.out", out);
      if (!room) packed_w = weights, packed_o = out;
      else CHECK((weights == packed_w && out == packed_o));  // the same bits, read in place
    }
  }
}

TEST_CASE("decoder[llama names, RMSNorm, rotary, gated SiLU, 4 over 2 heads, q/k/v biases, own lm_head]: the prompt's pass against PyTorch") {
  auto model = tiny_decoder();
  const std::vector<std::int32_t> ids = tensor_i(tiny(), "prompt.input_ids");
  const int T = int(ids.size()), L = 2, V = 97;
  REQUIRE(model->check_prompt(ids.data(), T) == "");
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    INFO(backend_name(backend));
    model->forward(backend, ids.data(), T);
    std::vector<float> logits, attentions, residuals;
    for (int t = 0; t < T; ++t) {
      const std::vector<float> z = model->logits(t);
      REQUIRE(int(z.size()) == V);
      logits.insert(logits.end(), z.begin(), z.end());
    }
    for (int l = 0; l < L; ++l) attentions.insert(attentions.end(), model->attention(l).begin(), model->attention(l).end());
    for (int l = 0; l <= L; ++l) residuals.insert(residuals.end(), model->residual(l).data(), model->residual(l).data() + model->residual(l).size());
    expect_close(tiny(), "prompt.logits", logits);
    expect_close(tiny(), "prompt.attentions", attentions);
    expect_close(tiny(), "prompt.residuals", residuals);
  }
}

TEST_CASE("decoder[llama names]: cached steps give the full recompute's logits and PyTorch's greedy ids") {
  auto model = tiny_decoder();
  const std::vector<std::int32_t> prompt = tensor_i(tiny(), "prompt.input_ids"), greedy = tensor_i(tiny(), "greedy.ids");
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    INFO(backend_name(backend));
    std::vector<std::int32_t> text = prompt;
    model->forward(backend, text.data(), int(text.size()));
    std::vector<float> z = model->logits(int(text.size()) - 1);
    std::vector<std::int32_t> written;
    for (std::size_t i = 0; i < greedy.size(); ++i) {
      const int next = int(std::max_element(z.begin(), z.end()) - z.begin());
      written.push_back(next);
      text.push_back(next);
      REQUIRE(model->check_step(next) == "");
      model->step(backend, next);
      CHECK(model->cached() == int(text.size()));
      z = model->logits(0);
    }
    CHECK(written == greedy);
    // The last step's logits against a pass over the whole text (rotary positions from the cache's length).
    const std::vector<float> cached = z;
    auto fresh = tiny_decoder();
    fresh->forward(backend, text.data(), int(text.size()));
    const std::vector<float> full = fresh->logits(int(text.size()) - 1);
    CHECK(max_abs_diff(cached.data(), full.data(), full.size()) <= 1e-4);
    // Going back: truncated to the prompt, the same step again gives the first step's logits.
    model->truncate(int(prompt.size()));
    CHECK(model->cached() == int(prompt.size()));
    model->step(backend, greedy[0]);
    fresh->forward(backend, text.data(), int(prompt.size()) + 1);
    const std::vector<float> again = model->logits(0), first = fresh->logits(int(prompt.size()));
    CHECK(max_abs_diff(again.data(), first.data(), first.size()) <= 1e-4);
  }
}

TEST_CASE("decoder spec: heads that do not group evenly and odd rotary widths are refused by name") {
  DecoderSpec s = tiny_spec();
  s.n_kv_head = 3;
  CHECK(check_decoder_spec(s) == "4 query heads cannot share 3 key/value heads evenly");
  s = tiny_spec();
  s.head_dim = 5;
  CHECK(check_decoder_spec(s) == "rotary positions turn pairs of dimensions: the head width must be even, got 5");
  CHECK(decoder_names("no-such-kind") == nullptr);
  CHECK(decoder_names("llama")->name(DecoderTensor::attn_q, 3) == "model.layers.3.self_attn.q_proj");
  CHECK(decoder_names("gpt2")->name(DecoderTensor::ffn_gate, 0) == "");
}

TEST_CASE("kv cache: exact from empty, doubling past its capacity (rows kept), truncation, beams reordered") {
  KvCache cache;
  const int L = 2, B = 3, H = 2, D = 4;
  cache.reset(L, B, H, D, 20);
  cache.extend(3);
  CHECK(cache.capacity() == 3);
  auto fill = [&](int from, int to) {
    for (int l = 0; l < L; ++l)
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
          for (int p = from; p < to; ++p)
            for (int d = 0; d < D; ++d) {
              cache.key(l, b, h, p)[d] = float(1000 * l + 100 * b + 10 * h + p) + 0.1f * d;
              cache.value(l, b, h, p)[d] = -cache.key(l, b, h, p)[d];
            }
  };
  fill(0, 3);
  cache.extend(1);  // 4 > 3: doubles to 6
  CHECK(cache.capacity() == 6);
  CHECK(cache.length() == 4);
  CHECK(cache.stride() == std::size_t(6) * D);
  fill(3, 4);
  for (int b = 0; b < B; ++b)
    for (int p = 0; p < 4; ++p) CHECK(cache.key(1, b, 1, p)[2] == float(1000 + 100 * b + 10 + p) + 0.2f);
  cache.extend(15);  // 19: more than double
  CHECK(cache.capacity() == 19);
  cache.truncate(4);
  CHECK(cache.length() == 4);
  // Beam 0 <- 2, beam 1 <- 0, beam 2 <- 2: a source that is also overwritten is read before.
  cache.reorder({2, 0, 2});
  const int from[3] = {2, 0, 2};
  for (int l = 0; l < L; ++l)
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int p = 0; p < 4; ++p) {
          CHECK(cache.key(l, b, h, p)[1] == float(1000 * l + 100 * from[b] + 10 * h + p) + 0.1f);
          CHECK(cache.value(l, b, h, p)[3] == -(float(1000 * l + 100 * from[b] + 10 * h + p) + 0.3f));
        }
}
