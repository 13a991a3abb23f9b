// What this machine's memory streams, natively, on one core and on two: the bound a decoding step's
// weights are read against (docs/benchmarks.md compares the threads build's GB/s a token with it).
// Each thread sums its half of a 1 GB float array with four SSE sums in flight; best of 7 passes.
//
//   gcc -O2 -msse2 -pthread benchmarks/memory_bandwidth.c -o /tmp/memory_bandwidth && /tmp/memory_bandwidth
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kFloats = 256u << 20, kPasses = 7 };  // 1 GB: far past any cache
static float* data;
static int threads;
static volatile float sink;  // keeps the sums from being optimised away

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* sum_share(void* arg) {
  const size_t share = kFloats / threads, first = (size_t)(long)arg * share;
  __m128 s0 = _mm_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = first; i < first + share; i += 16) {
    s0 = _mm_add_ps(s0, _mm_load_ps(data + i));
    s1 = _mm_add_ps(s1, _mm_load_ps(data + i + 4));
    s2 = _mm_add_ps(s2, _mm_load_ps(data + i + 8));
    s3 = _mm_add_ps(s3, _mm_load_ps(data + i + 12));
  }
  sink = _mm_cvtss_f32(_mm_add_ps(_mm_add_ps(s0, s1), _mm_add_ps(s2, s3)));
  return NULL;
}

int main(void) {
  data = aligned_alloc(64, (size_t)kFloats * sizeof(float));
  if (!data) return 1;
  for (size_t i = 0; i < kFloats; ++i) data[i] = 1e-9f * (float)(i & 1023);  // touched: no zero pages
  for (threads = 1; threads <= 2; ++threads) {
    double best = 1e30;
    for (int pass = 0; pass < kPasses; ++pass) {
      pthread_t t[2];
      const double t0 = seconds();
      for (long i = 0; i < threads; ++i) pthread_create(&t[i], NULL, sum_share, (void*)i);
      for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
      const double dt = seconds() - t0;
      if (dt < best) best = dt;
    }
    printf("%d thread%s: %.1f GB/s (1 GB summed, best of %d)\n", threads, threads > 1 ? "s" : "", kFloats * 4.0 / best / 1e9, kPasses);
  }
  free(data);
  return 0;
}
