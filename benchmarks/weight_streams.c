// How fast one core streams a decoding step's weights in WebAssembly, and what the loop shapes of
// core/layers/packed_linear.cpp and core/models/gpt2.cpp's unembedding reach (docs/benchmarks.md).
// GPT-2 small's shapes: twelve 3,072 -> 768 products (the MLP's c_proj) on PackedLinear's 8-column
// panels, with the whole of k in one panel or in blocks of 768 (the sums carried between blocks, as
// PackedLinear does); the 50,257 x 768 unembedding as one dot product per row, with one or four sums
// in flight; and, for comparison, a plain sum over 480 MB. Medians of 9 timings, in ms and GB/s.
//
//   NODE_PATH=/usr/share/nodejs emcc -O3 -msimd128 -sINITIAL_MEMORY=800MB benchmarks/weight_streams.c -o /tmp/weight_streams.js
//   node benchmarks/weight_streams_run.cjs /tmp/weight_streams
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <wasm_simd128.h>

typedef v128_t f32x4;
enum { kPanel = 8, kBlock = 768, kIn = 3072, kOut = 768, kLayers = 12, kVocab = 50257, kEmbd = 768 };

static f32x4 madd(f32x4 acc, f32x4 a, f32x4 b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }

// y [out] = x [in] W^T, W packed as [blocks of k][panel][k in the block][8]; block = in: one block.
__attribute__((noinline)) void panels(const float* x, const float* packed, int in, int out, int block, float* y) {
  const int count = out / kPanel;
  for (int k0 = 0; k0 < in; k0 += block) {
    const float* w = packed + (size_t)k0 * out;
    for (int p = 0; p < count; ++p, w += (size_t)block * kPanel) {
      f32x4 a = k0 ? wasm_v128_load(y + p * kPanel) : wasm_f32x4_splat(0);
      f32x4 b = k0 ? wasm_v128_load(y + p * kPanel + 4) : wasm_f32x4_splat(0);
      for (int k = 0; k < block; ++k) {
        const f32x4 s = wasm_v128_load32_splat(x + k0 + k);
        a = madd(a, s, wasm_v128_load(w + k * kPanel));
        b = madd(b, s, wasm_v128_load(w + k * kPanel + 4));
      }
      wasm_v128_store(y + p * kPanel, a);
      wasm_v128_store(y + p * kPanel + 4, b);
    }
  }
}

// logits[v] = wte[v] . x, with one vector sum per row (each add waits for the one before) ...
static float lanes(f32x4 t) {
  return (wasm_f32x4_extract_lane(t, 0) + wasm_f32x4_extract_lane(t, 1)) + (wasm_f32x4_extract_lane(t, 2) + wasm_f32x4_extract_lane(t, 3));
}
__attribute__((noinline)) void row_dots_1(const float* x, const float* wte, int embd, float* logits) {
  for (int v = 0; v < kVocab; ++v) {
    const float* r = wte + (size_t)v * embd;
    f32x4 s = wasm_f32x4_splat(0);
    for (int e = 0; e < embd; e += 4) s = madd(s, wasm_v128_load(r + e), wasm_v128_load(x + e));
    logits[v] = lanes(s);
  }
}

// ... or four in flight (gpt2.cpp's unembed_rows).
__attribute__((noinline)) void row_dots_4(const float* x, const float* wte, int embd, float* logits) {
  for (int v = 0; v < kVocab; ++v) {
    const float* r = wte + (size_t)v * embd;
    f32x4 s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0;
    for (int e = 0; e < embd; e += 16) {
      s0 = madd(s0, wasm_v128_load(r + e), wasm_v128_load(x + e));
      s1 = madd(s1, wasm_v128_load(r + e + 4), wasm_v128_load(x + e + 4));
      s2 = madd(s2, wasm_v128_load(r + e + 8), wasm_v128_load(x + e + 8));
      s3 = madd(s3, wasm_v128_load(r + e + 12), wasm_v128_load(x + e + 12));
    }
    logits[v] = lanes(wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)));
  }
}

__attribute__((noinline)) float plain_sum(const float* w, size_t n) {
  f32x4 s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 16) {
    s0 = wasm_f32x4_add(s0, wasm_v128_load(w + i)), s1 = wasm_f32x4_add(s1, wasm_v128_load(w + i + 4));
    s2 = wasm_f32x4_add(s2, wasm_v128_load(w + i + 8)), s3 = wasm_f32x4_add(s3, wasm_v128_load(w + i + 12));
  }
  return lanes(wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)));
}

// Called through pointers, as the model's code is reached through calls clang cannot see into.
typedef void (*RowDots)(const float*, const float*, int, float*);
static RowDots volatile row_dots[2] = {row_dots_1, row_dots_4};

static int by_value(const void* a, const void* b) { return *(const double*)a < *(const double*)b ? -1 : *(const double*)a > *(const double*)b; }
static float* filled(size_t n) {
  float* p = aligned_alloc(16, n * sizeof(float));
  for (size_t i = 0; i < n; ++i) p[i] = (float)(i % 13) * 0.01f;
  return p;
}

int main(void) {
  float* mlp[kLayers];
  for (int l = 0; l < kLayers; ++l) mlp[l] = filled((size_t)kIn * kOut);
  float* wte = filled((size_t)kVocab * kEmbd);
  float* big = filled((size_t)120 << 20);  // 480 MB
  static float x[kIn], y[kVocab];
  for (int i = 0; i < kIn; ++i) x[i] = (float)i * 1e-4f;
  const double mlp_bytes = 4.0 * kLayers * kIn * kOut, wte_bytes = 4.0 * kVocab * kEmbd, big_bytes = 4.0 * (120 << 20);
  volatile float sink = 0;
  volatile int embd_at_run_time = kEmbd;  // as wte.cols() is in the model: a constant would let clang keep
  const int embd = embd_at_run_time;      // all 768 floats of x in (spilled) registers across rows
  for (int repeat = 0; repeat < 3; ++repeat) {
    double t[5][9];
    for (int r = 0; r < 9; ++r) {
      double s = emscripten_get_now();
      for (int l = 0; l < kLayers; ++l) panels(x, mlp[l], kIn, kOut, kIn, y);
      t[0][r] = emscripten_get_now() - s, s = emscripten_get_now();
      for (int l = 0; l < kLayers; ++l) panels(x, mlp[l], kIn, kOut, kBlock, y);
      t[1][r] = emscripten_get_now() - s, s = emscripten_get_now();
      row_dots[0](x, wte, embd, y);
      t[2][r] = emscripten_get_now() - s, s = emscripten_get_now();
      row_dots[1](x, wte, embd, y);
      t[3][r] = emscripten_get_now() - s, s = emscripten_get_now();
      sink += plain_sum(big, (size_t)120 << 20);
      t[4][r] = emscripten_get_now() - s;
    }
    for (int i = 0; i < 5; ++i) qsort(t[i], 9, sizeof(double), by_value);
    printf("repeat %d: 12 x 3072->768 whole k %.2f ms (%.1f GB/s), in blocks of 768 %.2f ms (%.1f GB/s) | unembedding 1 sum %.2f ms (%.1f GB/s), 4 sums %.2f ms (%.1f GB/s) | plain sum %.1f GB/s\n",
           repeat, t[0][4], mlp_bytes / t[0][4] / 1e6, t[1][4], mlp_bytes / t[1][4] / 1e6, t[2][4], wte_bytes / t[2][4] / 1e6,
           t[3][4], wte_bytes / t[3][4] / 1e6, big_bytes / t[4][4] / 1e6);
  }
  return sink == 12345.0f;
}
