#include "simd_peak.h"

#include <chrono>
#include <cstring>

namespace attnlab {

namespace {

typedef float f32x4 __attribute__((vector_size(16)));

// 8 accumulators: enough independent chains to cover the add latency (3-4 cycles) on two ports.
constexpr int kChains = 8;
constexpr int kInner = 1024;

// One block of kInner multiply-adds per chain. `noinline` and the volatile sink keep the compiler from
// folding the loop away; the multipliers sit near 1 so the values stay normal floats.
__attribute__((noinline)) void madd_block(f32x4* acc, f32x4 x, f32x4 y) {
  f32x4 a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  f32x4 a4 = acc[4], a5 = acc[5], a6 = acc[6], a7 = acc[7];
  for (int i = 0; i < kInner; ++i) {
    a0 = a0 * x + y;
    a1 = a1 * x + y;
    a2 = a2 * x + y;
    a3 = a3 * x + y;
    a4 = a4 * x + y;
    a5 = a5 * x + y;
    a6 = a6 * x + y;
    a7 = a7 * x + y;
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
  acc[4] = a4, acc[5] = a5, acc[6] = a6, acc[7] = a7;
}

}  // namespace

double simd128_peak_gflops(double seconds) {
  using clock = std::chrono::steady_clock;
  f32x4 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = f32x4{0.5f, 0.25f, 0.125f, 1.0f};
  const f32x4 x = {0.999f, 0.999f, 0.999f, 0.999f};
  const f32x4 y = {0.001f, 0.001f, 0.001f, 0.001f};
  madd_block(acc, x, y);  // warm-up (and, in WASM, tier-up)
  long blocks = 0;
  const auto start = clock::now();
  double elapsed = 0.0;
  do {
    for (int r = 0; r < 64; ++r) madd_block(acc, x, y);
    blocks += 64;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < seconds);
  volatile float sink = acc[0][0] + acc[kChains - 1][3];
  (void)sink;
  const double flops = double(blocks) * kInner * kChains * 4 /* lanes */ * 2 /* mul + add */;
  return flops / elapsed * 1e-9;
}

}  // namespace attnlab
