// The single-thread SIMD128 peak of the machine, for the benchmark's "how close are we" column
// (benchmarks/kernel.mjs, docs/benchmarks.md).
#pragma once

namespace attnlab {

// Runs a loop of independent f32x4 multiply-adds (a mul and an add: WASM SIMD128 has no fused
// multiply-add, and the project builds with -ffp-contract=off) for about `seconds` and returns the
// rate in GFLOP/s, 2 FLOPs per lane per multiply-add. In a module built without -msimd128 the same
// source runs on scalar code and measures that instead.
double simd128_peak_gflops(double seconds);

}  // namespace attnlab
