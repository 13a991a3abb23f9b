#include <limits>

#include "backend.h"
#include "test_support.h"
#include "validate.h"

using namespace attnlab;

TEST_CASE("validation messages name the argument and the expected value") {
  CHECK(check_positive("embed_dim", 0) == "embed_dim must be a positive integer, got 0");
  CHECK(check_divisible("embed_dim", 30, "num_heads", 4) ==
        "embed_dim (30) must be divisible by num_heads (4)");
  CHECK(check_length("query", 5, 6, shape_text({{"B", 1}, {"T", 2}, {"E", 3}})) ==
        "query must have 6 elements [B=1, T=2, E=3], got 5");
  const float bad[] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  CHECK(check_finite("key", bad, 2) == "key contains NaN at index 1");
  const float inf[] = {-std::numeric_limits<float>::infinity()};
  CHECK(check_finite("value", inf, 1) == "value contains -Infinity at index 0");
  const float huge[] = {0.0f, 3e7f};
  CHECK(check_finite("query", huge, 2) == "query[1] = 3e+07 is too large: values must lie in [-1e6, 1e6]");
  const std::int32_t ids[] = {3, 40};
  CHECK(check_token_ids("ids", ids, 2, 32) == "ids[1] = 40 is out of range: token ids must be in [0, 32)");
  CHECK(first_error({"", "second", "third"}) == "second");
  CHECK(first_error({"", ""}).empty());
}

TEST_CASE("select_backend: auto, forced, and every fallback says why") {
  const AttentionShape small{1, 4, 16, 16, 8}, large{512, 1, 1024, 1024, 64};
  BackendEnvironment none;  // no SIMD, no GPU
  BackendEnvironment simd{true, false, "no adapter"};
  BackendEnvironment all{true, true, ""};
  CHECK(select_backend("auto", none, small).backend == Backend::scalar);
  CHECK(select_backend("auto", simd, large).reason == "auto: WebGPU: no adapter -> SIMD128");
  CHECK(select_backend("auto", all, small).backend == Backend::simd128);
  CHECK(select_backend("auto", all, small).reason == "auto: WebGPU: problem too small to pay off -> SIMD128");
  CHECK(select_backend("auto", all, large).backend == Backend::webgpu);
  CHECK(select_backend("scalar", all, large).backend == Backend::scalar);
  CHECK(select_backend("webgpu", simd, small).reason == "forced: WebGPU: no adapter -> SIMD128");
  CHECK(select_backend("webgpu", all, small).backend == Backend::webgpu);
  CHECK(select_backend("simd", none, small).reason == "forced: SIMD128: not supported by this engine -> scalar");
  CHECK(parse_backend("simd128") == Backend::simd128);
  CHECK_FALSE(parse_backend("cuda").has_value());
}
