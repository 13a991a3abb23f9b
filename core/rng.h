// Seeded pseudo-random numbers that are identical natively and in WASM.
//
// PCG32 (O'Neill, pcg-random.org, "pcg32_random_r") on 64-bit integer arithmetic, which both targets do
// exactly. Floats come from the top 24 bits, so they are exact too. Normals use the Marsaglia polar
// method with our own logarithm written in IEEE double arithmetic (+, *, /, sqrt are correctly rounded
// on every target, while libm's log differs between glibc and Emscripten's musl).
#pragma once

#include <cstdint>

namespace attnlab {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0, std::uint64_t stream = 54u);

  // Both inline: a trainer draws a batch's tokens with a constant n (randint(0, 10)), and inlined the
  // two divisions by n below become multiplications.
  std::uint32_t next_u32() {
    // pcg32_random_r
    const std::uint64_t old = state_;
    state_ = old * 6364136223846793005ULL + increment_;
    const auto xorshifted = std::uint32_t(((old >> 18u) ^ old) >> 27u);
    const auto rot = std::uint32_t(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((~rot + 1u) & 31u));
  }
  // Uniform integer in [0, n), unbiased (rejection of the short top range). n must be > 0.
  std::uint32_t below(std::uint32_t n) {
    // pcg32_boundedrand_r: reject the values below 2^32 mod n so every residue is equally likely.
    const std::uint32_t threshold = (~n + 1u) % n;
    for (;;) {
      const std::uint32_t r = next_u32();
      if (r >= threshold) return r % n;
    }
  }
  // Uniform integer in [lo, hi), like torch.randint(lo, hi).
  int randint(int lo, int hi) { return lo + int(below(std::uint32_t(hi - lo))); }
  // Uniform float in [0, 1) with 24 random bits.
  float uniform();
  // Uniform float in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal (mean 0, std 1).
  float normal();

 private:
  std::uint64_t state_ = 0;
  std::uint64_t increment_ = 0;
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// Natural logarithm in plain IEEE double arithmetic; x must be finite and > 0.
double portable_log(double x);

}  // namespace attnlab
