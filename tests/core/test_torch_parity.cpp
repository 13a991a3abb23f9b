// Golden parity with PyTorch 1.13: nn.MultiheadAttention (forward, per-head and mean weights, every
// gradient), Adam and the losses, from the fixtures of tests/fixtures/make_fixtures.py.
#include <limits>

#include "layers/multihead_attention.h"
#include "losses.h"
#include "optim/adam.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr double kTolerance = 1e-5;

// Boolean masks (True = may not attend) become additive 0 / -inf; float masks are used as they are.
std::vector<float> additive_mask(const SafeTensor& t) {
  std::vector<float> m = t.to_float();
  if (t.dtype == "BOOL")
    for (float& x : m) x = x != 0.0f ? -std::numeric_limits<float>::infinity() : 0.0f;
  return m;
}

void copy_into(Parameter& p, const std::vector<float>& values) {
  REQUIRE(values.size() == p.size());
  std::copy(values.begin(), values.end(), p.value.data());
}

void expect_close(const std::string& what, const float* ours, const std::vector<float>& torch) {
  INFO(what);
  CHECK(max_abs_diff(ours, torch.data(), torch.size()) <= kTolerance);
}

}  // namespace

TEST_CASE("MultiheadAttention matches PyTorch: forward, weights and every gradient") {
  const char* cases[] = {"self_1head", "self_4heads", "cross_2heads", "cross_4heads_long",
                         "bool_masks", "bool_padding_float_attn", "float_padding", "float_attn_per_head"};
  for (Backend backend : {Backend::scalar, Backend::simd128})
    for (const char* name : cases) {
      const auto f = load_fixture(std::string("mha_") + name + ".safetensors");
      const auto dims = f.tensors.at("dims").to_int32();
      const int B = dims[0], T = dims[1], S = dims[2], E = dims[3], H = dims[4];
      Rng rng(0);
      MultiheadAttention mha(E, H, rng);
      copy_into(mha.in_proj_weight, tensor_f(f, "in_proj_weight"));
      copy_into(mha.in_proj_bias, tensor_f(f, "in_proj_bias"));
      copy_into(mha.out_proj_weight, tensor_f(f, "out_proj.weight"));
      copy_into(mha.out_proj_bias, tensor_f(f, "out_proj.bias"));
      const auto query = tensor_f(f, "query"), key = tensor_f(f, "key"), value = tensor_f(f, "value");
      MhaInputs in{B, T, S, query.data(), key.data(), value.data()};
      std::vector<float> kpm, attn;
      if (f.tensors.count("key_padding_mask")) {
        kpm = additive_mask(f.tensors.at("key_padding_mask"));
        in.key_padding_mask = kpm.data();
      }
      if (f.tensors.count("attn_mask")) {
        const SafeTensor& t = f.tensors.at("attn_mask");
        attn = additive_mask(t);
        in.attn_mask = attn.data();
        in.attn_mask_per_head = t.shape.size() == 3;
      }
      mha.forward(in, backend);
      const std::string tag = std::string(name) + " " + backend_name(backend) + " ";
      expect_close(tag + "out", mha.output().data(), tensor_f(f, "out"));
      expect_close(tag + "weights", mha.weights().data(), tensor_f(f, "weights"));
      expect_close(tag + "weights_mean", mha.weights_mean().data(), tensor_f(f, "weights_mean"));
      const auto grad_out = tensor_f(f, "grad_out"), grad_weights = tensor_f(f, "grad_weights");
      mha.backward(grad_out.data(), grad_weights.data(), backend);
      expect_close(tag + "d_query", mha.d_query().data(), tensor_f(f, "d_query"));
      expect_close(tag + "d_key", mha.d_key().data(), tensor_f(f, "d_key"));
      expect_close(tag + "d_value", mha.d_value().data(), tensor_f(f, "d_value"));
      expect_close(tag + "d_in_proj_weight", mha.in_proj_weight.grad.data(), tensor_f(f, "d_in_proj_weight"));
      expect_close(tag + "d_in_proj_bias", mha.in_proj_bias.grad.data(), tensor_f(f, "d_in_proj_bias"));
      expect_close(tag + "d_out_proj.weight", mha.out_proj_weight.grad.data(), tensor_f(f, "d_out_proj.weight"));
      expect_close(tag + "d_out_proj.bias", mha.out_proj_bias.grad.data(), tensor_f(f, "d_out_proj.bias"));
    }
}

TEST_CASE("Adam matches torch.optim.Adam over two steps, defaults and lr=3e-3") {
  const auto f = load_fixture("adam.safetensors");
  Parameter p("p", 3, 4);
  copy_into(p, tensor_f(f, "p0"));
  Adam adam({&p});
  const auto g1 = tensor_f(f, "g1"), g2 = tensor_f(f, "g2");
  std::copy(g1.begin(), g1.end(), p.grad.data());
  adam.step();
  expect_close("after step 1", p.value.data(), tensor_f(f, "p1"));
  std::copy(g2.begin(), g2.end(), p.grad.data());
  adam.step();
  expect_close("after step 2", p.value.data(), tensor_f(f, "p2"));

  Parameter q("q", 3, 4);
  copy_into(q, tensor_f(f, "p0"));
  AdamOptions options;
  options.lr = 3e-3;
  Adam adam3({&q}, options);
  std::copy(g1.begin(), g1.end(), q.grad.data());
  adam3.step();
  expect_close("lr=3e-3 step 1", q.value.data(), tensor_f(f, "p1_lr3e-3"));
}

TEST_CASE("losses match PyTorch: cross-entropy, binary cross-entropy, MSE") {
  const auto f = load_fixture("losses.safetensors");
  RowMatrix grad;
  const auto logits = tensor_f(f, "ce_logits");
  const auto targets = f.tensors.at("ce_targets").to_int32();
  const float ce = cross_entropy(ConstMatrixMap(logits.data(), 7, 5), targets.data(), &grad);
  CHECK(ce == doctest::Approx(tensor_f(f, "ce_loss")[0]).epsilon(1e-6));
  expect_close("ce grad", grad.data(), tensor_f(f, "ce_grad"));
  const auto p = tensor_f(f, "bce_p"), y = tensor_f(f, "bce_y");
  const float bce = binary_cross_entropy(ConstMatrixMap(p.data(), 1, 6), ConstMatrixMap(y.data(), 1, 6), &grad);
  CHECK(bce == doctest::Approx(tensor_f(f, "bce_loss")[0]).epsilon(1e-6));
  expect_close("bce grad", grad.data(), tensor_f(f, "bce_grad"));
  const auto pred = tensor_f(f, "mse_pred"), target = tensor_f(f, "mse_target");
  const float m = mse(ConstMatrixMap(pred.data(), 4, 3), ConstMatrixMap(target.data(), 4, 3), &grad);
  CHECK(m == doctest::Approx(tensor_f(f, "mse_loss")[0]).epsilon(1e-6));
  expect_close("mse grad", grad.data(), tensor_f(f, "mse_grad"));
}
