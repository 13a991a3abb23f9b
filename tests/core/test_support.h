// Helpers shared by the doctest files: random tensors, finite-difference gradient checks, fixtures.
#pragma once

#include <doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "rng.h"

namespace attnlab::testing {

inline std::vector<float> random_vector(std::size_t n, Rng& rng, float scale = 1.0f) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * rng.normal();
  return v;
}

inline double max_abs_diff(const float* a, const float* b, std::size_t n) {
  double m = 0.0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

inline double max_abs(const float* a, std::size_t n) {
  double m = 0.0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i])));
  return m;
}

// Central differences of a scalar loss with respect to x[i] for up to `samples` indices spread over x,
// compared with the analytic gradient. float32 forward passes limit the accuracy, hence h = 1e-2 and a
// tolerance relative to the gradient's scale.
inline void check_gradient(const std::string& what, float* x, std::size_t n, const float* analytic,
                           const std::function<double()>& loss, float h = 1e-2f,
                           double tolerance = 2e-2, std::size_t samples = 48) {
  const double scale = std::max(1.0, max_abs(analytic, n));
  const std::size_t stride = std::max<std::size_t>(1, n / samples);
  for (std::size_t i = 0; i < n; i += stride) {
    const float saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * h);
    INFO(what << "[" << i << "]: numeric " << numeric << " analytic " << analytic[i]);
    CHECK(std::fabs(numeric - analytic[i]) <= tolerance * scale);
  }
}

// A fixture file's bytes; a missing one names the script that writes it (generator: "" when none).
inline std::string read_fixture_bytes(const std::string& path, const std::string& generator = "") {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path << (generator.empty() ? "" : " (run tests/fixtures/" + generator + ")"));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline SafeTensorsFile load_fixture(const std::string& name) {
  const std::string path = std::string(ATTNLAB_FIXTURES_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path << " (run tests/fixtures/make_fixtures.py)");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SafeTensorsFile file;
  const std::string error = parse_safetensors(bytes.data(), bytes.size(), file);
  REQUIRE_MESSAGE(error.empty(), error);
  return file;
}

inline std::vector<float> tensor_f(const SafeTensorsFile& f, const std::string& name) {
  const auto it = f.tensors.find(name);
  REQUIRE_MESSAGE(it != f.tensors.end(), "fixture has no tensor " << name);
  return it->second.to_float();
}

inline std::vector<std::int32_t> tensor_i(const SafeTensorsFile& f, const std::string& name) {
  const auto it = f.tensors.find(name);
  REQUIRE_MESSAGE(it != f.tensors.end(), "fixture has no tensor " << name);
  return it->second.to_int32();
}

}  // namespace attnlab::testing
