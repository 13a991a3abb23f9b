#include <cstring>

#include "rng.h"
#include "test_support.h"

using namespace attnlab;

TEST_CASE("Rng is PCG32: the reference demo's first outputs for seed 42, stream 54") {
  // pcg32-demo.c from pcg-random.org prints these for pcg32_srandom_r(&rng, 42u, 54u).
  Rng rng(42u, 54u);
  const std::uint32_t expected[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};
  for (std::uint32_t e : expected) CHECK(rng.next_u32() == e);
}

TEST_CASE("Rng sequences match the independent Python implementation (fixture)") {
  // tests/fixtures/make_fixtures.py re-implements PCG32, below(), uniform() and the polar normals in
  // Python (IEEE doubles), so native and WASM can both be held to the same numbers.
  const auto fixture = testing::load_fixture("rng.safetensors");
  Rng rng(2024);
  const SafeTensor& u32 = fixture.tensors.at("u32_seed2024");  // F64 holds every u32 exactly
  REQUIRE(u32.dtype == "F64");
  for (std::int64_t i = 0; i < u32.numel(); ++i) {
    double expected;
    std::memcpy(&expected, &u32.bytes[8 * i], 8);
    CHECK(double(rng.next_u32()) == expected);
  }
  const auto below = fixture.tensors.at("below10_seed7").to_int32();
  Rng r7(7);
  for (std::int32_t expected : below) CHECK(int(r7.below(10)) == expected);
  const auto uniform = fixture.tensors.at("uniform_seed3").to_float();
  Rng r3(3);
  for (float expected : uniform) CHECK(r3.uniform() == expected);
  const auto normal = fixture.tensors.at("normal_seed5").to_float();
  Rng r5(5);
  for (float expected : normal) CHECK(r5.normal() == expected);
}

TEST_CASE("portable_log agrees with std::log") {
  for (double x : {1e-30, 1e-5, 0.1, 0.5, 0.70710678, 0.9999, 1.0, 1.5, 2.0, 10.0, 12345.678})
    CHECK(portable_log(x) == doctest::Approx(std::log(x)).epsilon(1e-15));
}

TEST_CASE("Rng::normal has mean 0 and variance 1") {
  Rng rng(1);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    sum += x;
    sq += x * x;
  }
  CHECK(std::fabs(sum / n) < 0.01);
  CHECK(std::fabs(sq / n - 1.0) < 0.01);
}
