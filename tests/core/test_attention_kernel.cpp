// The attention kernel: scalar reference against a double-precision computation, the softmax edge
// rows a teacher would try, finite-difference gradients, and SIMD128 against scalar over a sweep of
// shapes around the vector width.
#include <limits>

#include "attention.h"
#include "shard_runner.h"
#include "test_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

struct Problem {
  AttentionShape shape;
  std::vector<float> q, k, v, mask, weights, out;
  bool has_mask = false;

  Problem(AttentionShape s, std::uint64_t seed, float scale_inputs = 1.0f, bool with_mask = false)
      : shape(s), has_mask(with_mask) {
    Rng rng(seed);
    q = random_vector(s.q_size(), rng, scale_inputs);
    k = random_vector(s.kv_size(), rng, scale_inputs);
    v = random_vector(s.kv_size(), rng, scale_inputs);
    if (with_mask) {  // per-(b,h) mask with about a quarter of the entries masked
      mask.resize(s.weights_size());
      for (float& m : mask) m = rng.uniform() < 0.25f ? -std::numeric_limits<float>::infinity() : 0.0f;
    }
    weights.assign(s.weights_size(), -7.0f);
    out.assign(s.q_size(), -7.0f);
  }

  AttentionForward forward_args() {
    AttentionForward a;
    a.shape = shape;
    a.scale = 1.0f / std::sqrt(float(shape.D));
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    if (has_mask) a.mask = {mask.data(), std::size_t(shape.H) * shape.T * shape.S, std::size_t(shape.T) * shape.S};
    a.weights = weights.data();
    a.out = out.data();
    return a;
  }
};

// softmax(q k^T * scale) v in double, one row.
void reference_row(const Problem& p, std::size_t bh, int t, std::vector<double>& w, std::vector<double>& o) {
  const auto [B, H, T, S, D] = p.shape;
  const double scale = 1.0 / std::sqrt(double(D));
  w.assign(S, 0.0);
  o.assign(D, 0.0);
  double mx = -std::numeric_limits<double>::infinity();
  for (int s = 0; s < S; ++s) {
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += double(p.q[(bh * T + t) * D + d]) * p.k[(bh * S + s) * D + d];
    w[s] = dot * scale + (p.has_mask ? p.mask[(bh * T + t) * S + s] : 0.0f);
    mx = std::max(mx, w[s]);
  }
  if (mx == -std::numeric_limits<double>::infinity()) return;
  double sum = 0;
  for (int s = 0; s < S; ++s) sum += (w[s] = std::exp(w[s] - mx));
  for (int s = 0; s < S; ++s) {
    w[s] /= sum;
    for (int d = 0; d < D; ++d) o[d] += w[s] * p.v[(bh * S + s) * D + d];
  }
}

std::string name_of(const AttentionShape& s, bool masked) {
  return "[B=" + std::to_string(s.B) + ",H=" + std::to_string(s.H) + ",T=" + std::to_string(s.T) +
         ",S=" + std::to_string(s.S) + ",D=" + std::to_string(s.D) + (masked ? ",masked]" : "]");
}

}  // namespace

TEST_CASE("attention scalar forward matches a double-precision reference") {
  for (const AttentionShape s : {AttentionShape{1, 1, 1, 1, 1}, AttentionShape{2, 3, 5, 7, 4},
                                 AttentionShape{1, 2, 16, 16, 8}, AttentionShape{3, 1, 4, 9, 17}}) {
    for (bool masked : {false, true}) {
      Problem p(s, 11, 1.0f, masked);
      attention_forward_scalar(p.forward_args());
      std::vector<double> w, o;
      double worst = 0;
      for (std::size_t bh = 0; bh < s.problems(); ++bh)
        for (int t = 0; t < s.T; ++t) {
          reference_row(p, bh, t, w, o);
          for (int j = 0; j < s.S; ++j) worst = std::max(worst, std::fabs(w[j] - p.weights[(bh * s.T + t) * s.S + j]));
          for (int d = 0; d < s.D; ++d) worst = std::max(worst, std::fabs(o[d] - p.out[(bh * s.T + t) * s.D + d]));
        }
      INFO(name_of(s, masked));
      CHECK(worst <= 1e-5);
    }
  }
}

TEST_CASE("softmax rows a teacher would try: [100,100], [-100,-100], [-1000,1000], one key, masked") {
  // One query (D=1, q=1) against keys whose scores are the given values (scale = 1 for D=1).
  auto weights_for = [](std::vector<float> scores, std::vector<float> mask, Backend backend) {
    AttentionShape s{1, 1, 1, int(scores.size()), 1};
    std::vector<float> q{1.0f}, v(scores.size(), 1.0f), w(scores.size()), o(1);
    AttentionForward a;
    a.shape = s;
    a.scale = 1.0f;
    a.q = q.data();
    a.k = scores.data();
    a.v = v.data();
    if (!mask.empty()) a.mask = {mask.data(), 0, 0};
    a.weights = w.data();
    a.out = o.data();
    attention_forward(backend, a);
    w.push_back(o[0]);  // last element: the output
    return w;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    INFO(backend_name(backend));
    auto r = weights_for({100, 100}, {}, backend);
    CHECK(r[0] == doctest::Approx(0.5));
    CHECK(r[1] == doctest::Approx(0.5));
    r = weights_for({-100, -100}, {}, backend);
    CHECK(r[0] == doctest::Approx(0.5));
    r = weights_for({-1000, 1000}, {}, backend);
    CHECK(r[0] == 0.0f);
    CHECK(r[1] == 1.0f);
    r = weights_for({3.5f}, {}, backend);
    CHECK(r[0] == 1.0f);
    // masked positions get exactly zero weight
    r = weights_for({5, 1, 2}, {-inf, 0, -inf}, backend);
    CHECK(r[0] == 0.0f);
    CHECK(r[1] == 1.0f);
    CHECK(r[2] == 0.0f);
    // a fully masked row: zero weights and zero output, never NaN (PyTorch gives NaN here)
    r = weights_for({5, 1}, {-inf, -inf}, backend);
    CHECK(r[0] == 0.0f);
    CHECK(r[1] == 0.0f);
    CHECK(r[2] == 0.0f);
    // |x| up to 1e4 stays finite
    r = weights_for({1e4f, -1e4f, 9999.0f}, {}, backend);
    for (float x : r) CHECK(std::isfinite(x));
    CHECK(r[0] == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))));
  }
}

TEST_CASE("attention backward matches finite differences (scalar and simd128)") {
  for (Backend backend : {Backend::scalar, Backend::simd128}) {
    for (bool masked : {false, true}) {
      AttentionShape s{2, 2, 3, 5, 3};
      Problem p(s, 5, 0.7f, masked);
      Rng rng(99);
      const std::vector<float> g_out = random_vector(s.q_size(), rng);
      const std::vector<float> g_w = random_vector(s.weights_size(), rng);
      // loss = sum(out * g_out) + sum(weights * g_w): exercises d_out and d_weights.
      auto loss = [&]() {
        attention_forward(backend, p.forward_args());
        double l = 0;
        for (std::size_t i = 0; i < p.out.size(); ++i) l += double(p.out[i]) * g_out[i];
        for (std::size_t i = 0; i < p.weights.size(); ++i) l += double(p.weights[i]) * g_w[i];
        return l;
      };
      loss();
      std::vector<float> d_q(s.q_size()), d_k(s.kv_size()), d_v(s.kv_size());
      AttentionBackward b;
      b.shape = s;
      b.scale = 1.0f / std::sqrt(float(s.D));
      b.q = p.q.data();
      b.k = p.k.data();
      b.v = p.v.data();
      b.weights = p.weights.data();
      b.d_out = g_out.data();
      b.d_weights = g_w.data();
      b.d_q = d_q.data();
      b.d_k = d_k.data();
      b.d_v = d_v.data();
      attention_backward(backend, b);
      const std::string tag = std::string(backend_name(backend)) + name_of(s, masked);
      check_gradient(tag + " dQ", p.q.data(), p.q.size(), d_q.data(), loss, 1e-2f, 1e-2, 200);
      check_gradient(tag + " dK", p.k.data(), p.k.size(), d_k.data(), loss, 1e-2f, 1e-2, 200);
      check_gradient(tag + " dV", p.v.data(), p.v.size(), d_v.data(), loss, 1e-2f, 1e-2, 200);
    }
  }
}

TEST_CASE("simd128 matches scalar around every vector width, with guard values untouched") {
  const int dims[] = {1, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64};
  const int lengths[] = {1, 2, 3, 4, 5, 7, 13, 16, 17, 37};
  std::uint64_t seed = 1;
  for (int D : dims)
    for (int L : lengths)
      for (bool masked : {false, true}) {
        AttentionShape s{2, 2, L, (L * 3) % 41 + 1, D};
        Problem a(s, seed, 1.0f, masked), b(s, seed, 1.0f, masked);
        ++seed;
        // Guard values after each output buffer must survive the kernel.
        a.weights.resize(s.weights_size() + 4, 123.0f);
        a.out.resize(s.q_size() + 4, 123.0f);
        attention_forward_scalar(b.forward_args());
        attention_forward_simd128(a.forward_args());
        INFO("attention" << name_of(s, masked) << " simd128 vs scalar");
        CHECK(max_abs_diff(a.weights.data(), b.weights.data(), s.weights_size()) <= 1e-5);
        CHECK(max_abs_diff(a.out.data(), b.out.data(), s.q_size()) <= 1e-5);
        for (int i = 0; i < 4; ++i) {
          CHECK(a.weights[s.weights_size() + i] == 123.0f);
          CHECK(a.out[s.q_size() + i] == 123.0f);
        }
        // Backward, relative to the largest gradient.
        Rng rng(seed);
        const std::vector<float> g = random_vector(s.q_size(), rng);
        std::vector<float> grads[2][3];
        for (int which = 0; which < 2; ++which) {
          Problem& p = which ? a : b;
          for (auto& v : grads[which]) v.clear();
          grads[which][0].assign(s.q_size() + 4, 77.0f);
          grads[which][1].assign(s.kv_size() + 4, 77.0f);
          grads[which][2].assign(s.kv_size() + 4, 77.0f);
          AttentionBackward bw;
          bw.shape = s;
          bw.scale = 1.0f / std::sqrt(float(D));
          bw.q = p.q.data();
          bw.k = p.k.data();
          bw.v = p.v.data();
          bw.weights = b.weights.data();
          bw.d_out = g.data();
          bw.d_q = grads[which][0].data();
          bw.d_k = grads[which][1].data();
          bw.d_v = grads[which][2].data();
          attention_backward(which ? Backend::simd128 : Backend::scalar, bw);
        }
        const std::size_t sizes[3] = {s.q_size(), s.kv_size(), s.kv_size()};
        for (int j = 0; j < 3; ++j) {
          const double scale = std::max(1e-6, max_abs(grads[0][j].data(), sizes[j]));
          CHECK(max_abs_diff(grads[0][j].data(), grads[1][j].data(), sizes[j]) / scale <= 1e-4);
          CHECK(grads[1][j][sizes[j]] == 77.0f);
        }
      }
}

// attention_simd128.cpp runs one query (T = 1) on its own loops instead of the four-row tiles. Their
// sums are the tiles' in the tiles' order, so a one-query problem must give the bits of the first row
// of a two-query problem with the same first query (whose second row has a zero output gradient, so it
// adds exact zeros to dK and dV).
TEST_CASE("simd128 one query (T=1) gives the bits of the tiled path's first row") {
  std::uint64_t seed = 500;
  for (int D : {1, 3, 4, 5, 7, 8, 9, 17})
    for (int S : {1, 3, 4, 5, 8, 10, 13, 32, 35}) {  // a GPT-2 step's dozens of keys too
      const AttentionShape one{3, 2, 1, S, D}, two{3, 2, 2, S, D};
      Problem a(one, seed), b(two, seed + 1);
      ++seed;
      b.k = a.k;
      b.v = a.v;
      const std::size_t problems = one.problems();
      for (std::size_t p = 0; p < problems; ++p)  // row 0 of each problem: a's query
        std::copy(&a.q[p * D], &a.q[p * D] + D, &b.q[p * 2 * D]);
      attention_forward_simd128(a.forward_args());
      attention_forward_simd128(b.forward_args());
      Rng rng(seed);
      const std::vector<float> g = random_vector(one.q_size(), rng);
      std::vector<float> g2(two.q_size(), 0.0f);  // row 1's output gradient is 0
      for (std::size_t p = 0; p < problems; ++p) std::copy(&g[p * D], &g[p * D] + D, &g2[p * 2 * D]);
      std::vector<float> grads[2][3];
      for (int which = 0; which < 2; ++which) {
        Problem& p = which ? b : a;
        grads[which][0].assign(p.shape.q_size(), 77.0f);
        grads[which][1].assign(p.shape.kv_size(), 77.0f);
        grads[which][2].assign(p.shape.kv_size(), 77.0f);
        AttentionBackward bw;
        bw.shape = p.shape;
        bw.scale = 1.0f / std::sqrt(float(D));
        bw.q = p.q.data();
        bw.k = p.k.data();
        bw.v = p.v.data();
        bw.weights = p.weights.data();
        bw.d_out = which ? g2.data() : g.data();
        bw.d_q = grads[which][0].data();
        bw.d_k = grads[which][1].data();
        bw.d_v = grads[which][2].data();
        attention_backward_simd128(bw);
      }
      INFO("attention[T=1,S=" << S << ",D=" << D << "] simd128 one query vs tiled first row");
      int differ = 0;
      for (std::size_t p = 0; p < problems; ++p) {
        for (int s = 0; s < S; ++s) differ += a.weights[p * S + s] != b.weights[p * 2 * S + s];
        for (int d = 0; d < D; ++d) {
          differ += a.out[p * D + d] != b.out[p * 2 * D + d];
          differ += grads[0][0][p * D + d] != grads[1][0][p * 2 * D + d];
        }
      }
      for (int j = 1; j < 3; ++j)
        for (std::size_t i = 0; i < one.kv_size(); ++i) differ += grads[0][j][i] != grads[1][j][i];
      CHECK(differ == 0);
    }
}

// A key/value cache with room to grow (gpt2.h) hands the kernel keys and values kv_stride floats apart
// per (b, h) problem, rows past S unused: both CPU kernels must read only the first S rows of each
// problem, and give the bits of the same problem packed contiguously.
TEST_CASE("attention forward reads keys and values kv_stride apart (a cache with room) with the packed bits") {
  for (Backend backend : {Backend::scalar, Backend::simd128})
    for (int T : {1, 3})
      for (int S : {5, 40}) {
        const int D = 6, room = 7;  // each problem has S + room rows of keys and values
        const AttentionShape shape{2, 3, T, S, D};
        Problem packed(shape, 900 + std::uint64_t(S) + std::uint64_t(T));
        std::vector<float> k_room(shape.problems() * (S + room) * D, std::nanf("")), v_room = k_room;
        for (std::size_t p = 0; p < shape.problems(); ++p) {
          std::copy_n(&packed.k[p * S * D], S * D, &k_room[p * (S + room) * D]);
          std::copy_n(&packed.v[p * S * D], S * D, &v_room[p * (S + room) * D]);
        }
        std::vector<float> weights(shape.weights_size(), -7.0f), out(shape.q_size(), -7.0f);
        AttentionForward roomy = packed.forward_args();
        roomy.k = k_room.data(), roomy.v = v_room.data();
        roomy.kv_stride = std::size_t(S + room) * D;
        roomy.weights = weights.data(), roomy.out = out.data();
        attention_forward(backend, packed.forward_args());
        attention_forward(backend, roomy);
        INFO("backend " << int(backend) << " T=" << T << " S=" << S);
        CHECK(weights == packed.weights);  // the unused rows are NaN: any read of them would show
        CHECK(out == packed.out);
      }
}

// A causal mask (query t sees keys 0 .. t) lets the SIMD128 kernel skip each row's masked tail of keys
// (attention_simd128.cpp, row extents). Skipping must not change a bit: the same problem with its blocked
// keys masked by the lowest float instead of -inf (whose weights are exactly 0 too, exp4_nonpositive's
// clamp, but which the kernel does not take for a mask and so computes in full) gives the same weights
// and output, bit for bit; the skipped weights are exactly 0; the backward, which skips the keys whose
// weight is 0, matches the scalar kernel as every backward does.
TEST_CASE("simd128 causal rows skip their masked keys with the bits of computing them") {
  const float neg_inf = -std::numeric_limits<float>::infinity(), lowest = std::numeric_limits<float>::lowest();
  std::uint64_t seed = 900;
  for (int D : {1, 4, 5, 16})
    for (int T : {2, 3, 5, 7, 8, 9, 17, 33}) {
      const AttentionShape s{2, 2, T, T, D};
      Problem skipped(s, seed, 1.0f, true), full(s, seed, 1.0f, true), scalar(s, seed, 1.0f, true);
      ++seed;
      for (std::size_t i = 0; i < s.weights_size(); ++i) {
        const int t = int(i / T % T), key = int(i % T);
        skipped.mask[i] = scalar.mask[i] = key > t ? neg_inf : 0.0f;
        full.mask[i] = key > t ? lowest : 0.0f;
      }
      attention_forward_simd128(skipped.forward_args());
      attention_forward_simd128(full.forward_args());
      attention_forward_scalar(scalar.forward_args());
      INFO("attention[B=2,H=2,T=S=" << T << ",D=" << D << ",causal] simd128 with skipped keys vs every key");
      int differ = 0, unmasked_tail = 0;
      for (std::size_t i = 0; i < s.weights_size(); ++i) {
        differ += skipped.weights[i] != full.weights[i];
        unmasked_tail += int(i % T) > int(i / T % T) && skipped.weights[i] != 0.0f;
      }
      for (std::size_t i = 0; i < s.q_size(); ++i) differ += skipped.out[i] != full.out[i];
      CHECK(differ == 0);
      CHECK(unmasked_tail == 0);
      Rng rng(seed++);
      const std::vector<float> g = random_vector(s.q_size(), rng);
      std::vector<float> grads[2][3];
      for (int which = 0; which < 2; ++which) {
        Problem& p = which ? skipped : scalar;
        grads[which][0].assign(s.q_size(), 77.0f);
        grads[which][1].assign(s.kv_size(), 77.0f);
        grads[which][2].assign(s.kv_size(), 77.0f);
        AttentionBackward bw;
        bw.shape = s;
        bw.scale = 1.0f / std::sqrt(float(D));
        bw.q = p.q.data(), bw.k = p.k.data(), bw.v = p.v.data(), bw.weights = scalar.weights.data();
        bw.d_out = g.data(), bw.d_q = grads[which][0].data(), bw.d_k = grads[which][1].data(), bw.d_v = grads[which][2].data();
        attention_backward(which ? Backend::simd128 : Backend::scalar, bw);
      }
      const std::size_t sizes[3] = {s.q_size(), s.kv_size(), s.kv_size()};
      for (int j = 0; j < 3; ++j) {
        const double scale = std::max(1e-6, max_abs(grads[0][j].data(), sizes[j]));
        CHECK(max_abs_diff(grads[0][j].data(), grads[1][j].data(), sizes[j]) / scale <= 1e-4);
      }
    }
}

// The threads builds split a call's problems between the shard runner's workers (a decoder's heads over
// its cache): one thread, two, and two called from inside a shard's job (which runs them all on that
// shard's thread) give the same bits, with grouped-query heads, a cache's stride and a causal mask.
TEST_CASE("simd128 forward: the same bits on one thread, on two and inside a shard's job") {
  ShardRunner& runner = shard_runner();
  const int active = runner.active_workers();
  for (const int T : {1, 6}) {
    CAPTURE(T);
    const AttentionShape s{2, 6, T, 96, 32};  // 2 x 6 x T x 96 x 32 multiply-adds: past the threshold at T = 1
    const int kv_heads = 2, capacity = 100;
    Rng rng(21);
    const std::vector<float> q = random_vector(s.q_size(), rng);
    const std::vector<float> kv = random_vector(std::size_t(s.B) * kv_heads * capacity * s.D, rng);
    std::vector<float> causal(std::size_t(T) * s.S, 0.0f);
    for (int t = 0; t < T; ++t)
      for (int j = s.S - T + t + 1; j < s.S; ++j) causal[std::size_t(t) * s.S + j] = -std::numeric_limits<float>::infinity();
    auto run = [&](int threads, bool nested) {
      std::vector<float> weights(s.weights_size(), -7.0f), out(s.q_size(), -7.0f);
      AttentionForward a;
      a.shape = s;
      a.scale = 0.25f;
      a.q = q.data(), a.k = kv.data(), a.v = kv.data() + 7;
      a.mask = {causal.data(), 0, 0};
      a.kv_heads = kv_heads;
      a.kv_stride = std::size_t(capacity) * s.D;
      a.weights = weights.data(), a.out = out.data();
      runner.set_active_workers(threads - 1);
      if (nested) runner.run(2, [&](int shard) { if (shard == 1) attention_forward_simd128(a); });
      else attention_forward_simd128(a);
      runner.set_active_workers(active);
      weights.insert(weights.end(), out.begin(), out.end());
      return weights;
    };
    const std::vector<float> one = run(1, false);
    CHECK(one == run(2, false));
    CHECK(one == run(2, true));
    for (float w : one) REQUIRE(std::isfinite(w));
  }
}
