// Eigen, for every file of the core. In the SIMD128 WASM build Eigen vectorises through its SSE2 path:
// Emscripten compiles SSE intrinsics (-msse2) to WASM SIMD128 (Eigen 3.4 has no WASM SIMD of its own).
// Two things stand in the way, both handled here and only there:
//  - Eigen includes <mmintrin.h> (MMX), which Emscripten lacks: CMake gives the build an empty one;
//  - Eigen takes clang for GCC 4.2 (__GNUC__ == 4) and picks inline-asm workarounds for old GCCs
//    ("+x" constraints) that only x86 assembles. Hiding __GNUC__ while Eigen's own headers are read
//    (after the standard headers, which need it) selects its plain-intrinsics code instead.
// Copy training in Node went from 137 to 171 steps/s with it (benchmarks/alignment.mjs; docs/benchmarks.md).
#pragma once

#if defined(__EMSCRIPTEN__) && defined(__SSE2__)
#include <algorithm>
#include <array>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <malloc.h>
#include <emmintrin.h>
#pragma push_macro("__GNUC__")
#pragma push_macro("__GNUC_MINOR__")
#pragma push_macro("__GNUC_PATCHLEVEL__")
#undef __GNUC__
#undef __GNUC_MINOR__
#undef __GNUC_PATCHLEVEL__
#include <Eigen/Core>
#pragma pop_macro("__GNUC__")
#pragma pop_macro("__GNUC_MINOR__")
#pragma pop_macro("__GNUC_PATCHLEVEL__")
#else
#include <Eigen/Core>
#endif
