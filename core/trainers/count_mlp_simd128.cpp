// count_mlp.h's head on four hidden units a vector (vec4.h: WASM SIMD128, GCC vector extensions
// natively, scalar code in the scalar build), with a scalar loop for the leftover units.
//
// Loop order: hidden units outside, rows inside. A step has ~100 rows and H = 200, so the per-row
// order (a pass over H for each row) loads and stores every gradient accumulator once a row; with the
// rows inside, each four-unit group's w1, b1, w2 and its three gradients stay in registers while the
// rows go by, and what a row carries across groups is its four-lane partial sum (`lanes`). The forward
// does not keep h: the backward recomputes it from a, the same operations on the same inputs.
#include <algorithm>

#include "../vec4.h"
#include "count_mlp.h"

namespace attnlab {

using namespace vec4;

void count_head_forward(const CountHead& nn, const float* a, int count, float* z, std::vector<float>& lanes) {
  const int H = nn.H;
  lanes.assign(std::size_t(count) * 4, 0.0f);
  const f32x4 zero = zero4();
  int j = 0;
  for (; j + 4 <= H; j += 4) {
    const f32x4 w1 = load4(nn.w1 + j), b1 = load4(nn.b1 + j), w2 = load4(nn.w2 + j);
    for (int b = 0; b < count; ++b) {
      const f32x4 h = max4(add4(mul4(load_splat4(a + b), w1), b1), zero);  // relu(a w1 + b1)
      float* sum = &lanes[std::size_t(b) * 4];
      store4(sum, add4(load4(sum), mul4(w2, h)));  // w2 . h, lane j mod 4
    }
  }
  for (int b = 0; b < count; ++b) z[b] = hsum(load4(&lanes[std::size_t(b) * 4]));
  for (; j < H; ++j)  // leftovers, after the lanes' sum as in a plain four-lane dot product
    for (int b = 0; b < count; ++b) z[b] += nn.w2[j] * std::max(a[b] * nn.w1[j] + nn.b1[j], 0.0f);
  for (int b = 0; b < count; ++b) z[b] += nn.b2;
}

void count_head_backward(const CountHead& nn, const float* a, const float* dz, int count, float* dw1, float* db1,
                         float* dw2, float* da, std::vector<float>& lanes) {
  const int H = nn.H;
  lanes.assign(std::size_t(count) * 4, 0.0f);
  const f32x4 zero = zero4();
  int j = 0;
  for (; j + 4 <= H; j += 4) {
    const f32x4 w1 = load4(nn.w1 + j), b1 = load4(nn.b1 + j), w2 = load4(nn.w2 + j);
    f32x4 g_w1 = load4(dw1 + j), g_b1 = load4(db1 + j), g_w2 = load4(dw2 + j);
    for (int b = 0; b < count; ++b) {
      const f32x4 a4 = load_splat4(a + b), dz4 = load_splat4(dz + b);
      const f32x4 h = max4(add4(mul4(a4, w1), b1), zero);  // the forward's relu(a w1 + b1)
      // z = w2 . h + b2
      g_w2 = add4(g_w2, mul4(dz4, h));
      // h = relu(a w1 + b1): the gradient passes where h > 0 (PyTorch takes 0 at 0)
      const f32x4 dh = keep_gt4(mul4(dz4, w2), h, zero);
      g_b1 = add4(g_b1, dh);
      g_w1 = add4(g_w1, mul4(dh, a4));
      float* sum = &lanes[std::size_t(b) * 4];
      store4(sum, add4(load4(sum), mul4(dh, w1)));  // da = dh . w1, lane j mod 4
    }
    store4(dw1 + j, g_w1), store4(db1 + j, g_b1), store4(dw2 + j, g_w2);
  }
  for (int b = 0; b < count; ++b) da[b] = hsum(load4(&lanes[std::size_t(b) * 4]));
  for (; j < H; ++j)  // leftovers, the same steps one unit at a time
    for (int b = 0; b < count; ++b) {
      const float h = std::max(a[b] * nn.w1[j] + nn.b1[j], 0.0f);
      dw2[j] += dz[b] * h;
      const float dh = h > 0.0f ? dz[b] * nn.w2[j] : 0.0f;
      db1[j] += dh;
      dw1[j] += dh * a[b];
      da[b] += dh * nn.w1[j];
    }
}

}  // namespace attnlab
