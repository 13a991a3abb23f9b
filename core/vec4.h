// Four-float vectors for the SIMD128 code: WASM SIMD128 intrinsics in the WASM build, GCC vector
// extensions natively (so the native suite runs and tests the same algorithms), plain scalar code in
// the scalar WASM build (clang lowers the vector extensions without SIMD).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attnlab {
namespace vec4 {

#if defined(__wasm_simd128__)
using f32x4 = v128_t;
using i32x4 = v128_t;
inline f32x4 load4(const float* p) { return wasm_v128_load(p); }
inline void store4(float* p, f32x4 x) { wasm_v128_store(p, x); }
inline f32x4 splat4(float x) { return wasm_f32x4_splat(x); }
// *p in every lane, in one instruction (v128.load32_splat).
inline f32x4 load_splat4(const float* p) { return wasm_v128_load32_splat(p); }
inline f32x4 add4(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
inline f32x4 sub4(f32x4 a, f32x4 b) { return wasm_f32x4_sub(a, b); }
inline f32x4 mul4(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
inline f32x4 div4(f32x4 a, f32x4 b) { return wasm_f32x4_div(a, b); }
inline f32x4 max4(f32x4 a, f32x4 b) { return wasm_f32x4_pmax(a, b); }
inline f32x4 zero4() { return wasm_f32x4_splat(0.0f); }
inline f32x4 nearest4(f32x4 x) { return wasm_f32x4_nearest(x); }
// Lanes where a >= b keep x, the others become +0.0.
inline f32x4 keep_ge4(f32x4 x, f32x4 a, f32x4 b) { return wasm_v128_and(x, wasm_f32x4_ge(a, b)); }
// Lanes where a > b keep x, the others become +0.0.
inline f32x4 keep_gt4(f32x4 x, f32x4 a, f32x4 b) { return wasm_v128_and(x, wasm_f32x4_gt(a, b)); }
// 2^n for integral n in [-126, 127], built in the exponent bits.
inline f32x4 pow2_4(f32x4 n) {
  const i32x4 bits = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
  return bits;
}
inline float lane(f32x4 x, int i) {
  switch (i) {
    case 0: return wasm_f32x4_extract_lane(x, 0);
    case 1: return wasm_f32x4_extract_lane(x, 1);
    case 2: return wasm_f32x4_extract_lane(x, 2);
    default: return wasm_f32x4_extract_lane(x, 3);
  }
}
#else
typedef float f32x4 __attribute__((vector_size(16)));
typedef std::int32_t i32x4 __attribute__((vector_size(16)));
inline f32x4 load4(const float* p) {
  f32x4 x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
inline void store4(float* p, f32x4 x) { std::memcpy(p, &x, sizeof x); }
inline f32x4 splat4(float x) { return f32x4{x, x, x, x}; }
inline f32x4 load_splat4(const float* p) { return splat4(*p); }
inline f32x4 add4(f32x4 a, f32x4 b) { return a + b; }
inline f32x4 sub4(f32x4 a, f32x4 b) { return a - b; }
inline f32x4 mul4(f32x4 a, f32x4 b) { return a * b; }
inline f32x4 div4(f32x4 a, f32x4 b) { return a / b; }
inline f32x4 max4(f32x4 a, f32x4 b) { return a < b ? b : a; }
inline f32x4 zero4() { return f32x4{0, 0, 0, 0}; }
inline f32x4 nearest4(f32x4 x) {
  return f32x4{std::nearbyint(x[0]), std::nearbyint(x[1]), std::nearbyint(x[2]), std::nearbyint(x[3])};
}
inline f32x4 keep_ge4(f32x4 x, f32x4 a, f32x4 b) {
  const i32x4 keep = a >= b;
  return (f32x4)((i32x4)x & keep);
}
inline f32x4 keep_gt4(f32x4 x, f32x4 a, f32x4 b) {
  const i32x4 keep = a > b;
  return (f32x4)((i32x4)x & keep);
}
inline f32x4 pow2_4(f32x4 n) {
  const i32x4 bits = (__builtin_convertvector(n, i32x4) + 127) << 23;
  return (f32x4)bits;
}
inline float lane(f32x4 x, int i) { return x[i]; }
#endif

// Eight 16-bit floats (bfloat16 or IEEE half, as a checkpoint stores them) widened to float32, lanes 0-3
// and 4-7: exact, so a product over widened weights is the product PyTorch computes on the same values
// as float32. bfloat16 is a float32's top half. A finite half's magnitude bits, shifted into a float32's
// place, read as 2^-112 times its value (subnormals included), so one multiply by 2^112 restores it; an
// infinity or NaN would not survive, and the loader refuses those (checkpoint_loader.h).
#if defined(__wasm_simd128__)
// bfloat16: each value interleaved after a zero 16-bit half, one shuffle for four (x64: punpcklwd /
// punpckhwd), where extend + shift took two instructions.
inline void widen_bf16_8(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  const v128_t v = wasm_v128_load(p), zero = wasm_i32x4_splat(0);
  lo = wasm_i16x8_shuffle(zero, v, 0, 8, 1, 9, 2, 10, 3, 11);
  hi = wasm_i16x8_shuffle(zero, v, 4, 12, 5, 13, 6, 14, 7, 15);
}
inline f32x4 half_bits_to_float4(v128_t u) {
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x8000)), 16);
  const v128_t magnitude = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x7FFF)), 13);
  return wasm_v128_or(wasm_f32x4_mul(magnitude, wasm_f32x4_splat(0x1p112f)), sign);
}
inline void widen_f16_8(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  const v128_t v = wasm_v128_load(p);
  lo = half_bits_to_float4(wasm_u32x4_extend_low_u16x8(v));
  hi = half_bits_to_float4(wasm_u32x4_extend_high_u16x8(v));
}
#else
typedef std::uint16_t u16x4 __attribute__((vector_size(8)));
inline void widen_bf16_8(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  u16x4 a, b;
  std::memcpy(&a, p, sizeof a);
  std::memcpy(&b, p + 4, sizeof b);
  lo = (f32x4)(__builtin_convertvector(a, i32x4) << 16);
  hi = (f32x4)(__builtin_convertvector(b, i32x4) << 16);
}
inline f32x4 half_bits_to_float4(i32x4 u) {
  const i32x4 sign = (u & 0x8000) << 16, magnitude = (u & 0x7FFF) << 13;
  return (f32x4)((i32x4)((f32x4)magnitude * 0x1p112f) | sign);
}
inline void widen_f16_8(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  u16x4 a, b;
  std::memcpy(&a, p, sizeof a);
  std::memcpy(&b, p + 4, sizeof b);
  lo = half_bits_to_float4(__builtin_convertvector(a, i32x4));
  hi = half_bits_to_float4(__builtin_convertvector(b, i32x4));
}
#endif

inline float hsum(f32x4 x) { return (lane(x, 0) + lane(x, 1)) + (lane(x, 2) + lane(x, 3)); }
inline float hmax(f32x4 x) { return std::max(std::max(lane(x, 0), lane(x, 1)), std::max(lane(x, 2), lane(x, 3))); }

// Two doubles, for sums that float would round too coarsely (the Lookup lab's loss, lookup_model.cpp).
// The vector extension in every build: natively SSE2, in WASM clang lowers it to f64x2 under -msimd128
// and to scalar code without.
typedef double f64x2 __attribute__((vector_size(16)));
inline f64x2 load2d(const double* p) {
  f64x2 x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
inline void store2d(double* p, f64x2 x) { std::memcpy(p, &x, sizeof x); }
// Lanes 0, 1 (low2) and 2, 3 (high2) of four floats as two doubles (exact: every float is a double).
#if defined(__wasm_simd128__)
inline f64x2 low2d(f32x4 x) { return (f64x2)wasm_f64x2_promote_low_f32x4(x); }
inline f64x2 high2d(f32x4 x) { return (f64x2)wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(x, x, 2, 3, 2, 3)); }
#else
inline f64x2 low2d(f32x4 x) { return f64x2{double(x[0]), double(x[1])}; }
inline f64x2 high2d(f32x4 x) { return f64x2{double(x[2]), double(x[3])}; }
#endif

// exp(x) for x <= 0, four at a time: Cephes' expf (range reduction by ln 2 in two parts, a degree-6
// polynomial, 2^n in the exponent bits), about 2 ulp from std::exp. Below -87.33 (where 2^n would leave
// the normal range) and for -inf the result is exactly 0, which keeps masked weights exactly zero.
inline f32x4 exp4_nonpositive(f32x4 x) {
  const f32x4 lowest = splat4(-87.33654f);
  const f32x4 xc = max4(x, lowest);  // also turns -inf into a finite value for the arithmetic
  const f32x4 n = nearest4(mul4(xc, splat4(1.44269504088896341f)));
  f32x4 r = sub4(xc, mul4(n, splat4(0.693359375f)));
  r = sub4(r, mul4(n, splat4(-2.12194440e-4f)));
  f32x4 y = splat4(1.9875691500e-4f);
  y = add4(mul4(y, r), splat4(1.3981999507e-3f));
  y = add4(mul4(y, r), splat4(8.3334519073e-3f));
  y = add4(mul4(y, r), splat4(4.1665795894e-2f));
  y = add4(mul4(y, r), splat4(1.6666665459e-1f));
  y = add4(mul4(y, r), splat4(5.0000001201e-1f));
  y = add4(add4(mul4(mul4(y, r), r), r), splat4(1.0f));
  return keep_ge4(mul4(y, pow2_4(n)), x, lowest);
}

}  // namespace vec4
}  // namespace attnlab
