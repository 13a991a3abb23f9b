// count_model_simd128.h's head on four hidden units a vector (vec4.h: WASM SIMD128, GCC vector extensions
// natively, scalar code in the scalar build), with a scalar loop for the leftover units.
//
// Loop order: hidden units outside, rows inside. A step has ~100 rows and H = 200, so the per-row
// order (a pass over H for each row) loads and stores every gradient accumulator once a row; with the
// rows inside, each four-unit group's w1, b1, w2 and its three gradients stay in registers while the
// rows go by, and what a row carries across groups is its four-lane partial sum (`lanes`). The forward
// does not keep h: the backward recomputes it from a, the same operations on the same inputs.
#include <algorithm>

#include "../vec4.h"
#include "count_model_simd128.h"

namespace attnlab {

using namespace vec4;

namespace {

// Four hidden units j..j+3: their parameters and, in the backward, their gradients.
struct HeadGroup {
  f32x4 w1, b1, w2, g_w1, g_b1, g_w2;

  HeadGroup(const CountHead& nn, int j) : w1(load4(nn.w1 + j)), b1(load4(nn.b1 + j)), w2(load4(nn.w2 + j)) {}

  // One row's w2_j h_j, for its lanes of w2 . h.
  f32x4 forward(f32x4 a) const {
    const f32x4 h = max4(add4(mul4(a, w1), b1), zero4());  // relu(a w1 + b1)
    return mul4(w2, h);
  }
  // One row's gradients added to g_*; returns its dh_j w1_j, for its lanes of da = dh . w1.
  f32x4 backward(f32x4 a, f32x4 dz) {
    const f32x4 h = max4(add4(mul4(a, w1), b1), zero4());  // the forward's relu(a w1 + b1)
    // z = w2 . h + b2
    g_w2 = add4(g_w2, mul4(dz, h));
    // h = relu(a w1 + b1): the gradient passes where h > 0 (PyTorch takes 0 at 0)
    const f32x4 dh = keep_gt4(mul4(dz, w2), h, zero4());
    g_b1 = add4(g_b1, dh);
    g_w1 = add4(g_w1, mul4(dh, a));
    return mul4(dh, w1);
  }
  void load_grads(const float* dw1, const float* db1, const float* dw2, int j) {
    g_w1 = load4(dw1 + j), g_b1 = load4(db1 + j), g_w2 = load4(dw2 + j);
  }
  void store_grads(float* dw1, float* db1, float* dw2, int j) const {
    store4(dw1 + j, g_w1), store4(db1 + j, g_b1), store4(dw2 + j, g_w2);
  }
};

}  // namespace

// Eight units (two groups) a pass over the rows, then four, then one at a time: a row's a, dz and
// partial sums are loaded once per eight units. A row's lanes add group j..j+3 before j+4..j+7, the
// order of a plain four-lane loop over j.
void count_head_forward(const CountHead& nn, const float* a, int count, float* z, std::vector<float>& lanes) {
  const int H = nn.H;
  lanes.assign(std::size_t(count) * 4, 0.0f);
  int j = 0;
  for (; j + 8 <= H; j += 8) {
    const HeadGroup g0(nn, j), g1(nn, j + 4);
    for (int b = 0; b < count; ++b) {
      const f32x4 a4 = load_splat4(a + b);
      float* sum = &lanes[std::size_t(b) * 4];
      store4(sum, add4(add4(load4(sum), g0.forward(a4)), g1.forward(a4)));  // w2 . h, lane j mod 4
    }
  }
  for (; j + 4 <= H; j += 4) {
    const HeadGroup g0(nn, j);
    for (int b = 0; b < count; ++b) {
      float* sum = &lanes[std::size_t(b) * 4];
      store4(sum, add4(load4(sum), g0.forward(load_splat4(a + b))));
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
  int j = 0;
  for (; j + 8 <= H; j += 8) {
    HeadGroup g0(nn, j), g1(nn, j + 4);
    g0.load_grads(dw1, db1, dw2, j), g1.load_grads(dw1, db1, dw2, j + 4);
    for (int b = 0; b < count; ++b) {
      const f32x4 a4 = load_splat4(a + b), dz4 = load_splat4(dz + b);
      float* sum = &lanes[std::size_t(b) * 4];
      const f32x4 first = g0.backward(a4, dz4);
      store4(sum, add4(add4(load4(sum), first), g1.backward(a4, dz4)));  // da = dh . w1, lane j mod 4
    }
    g0.store_grads(dw1, db1, dw2, j), g1.store_grads(dw1, db1, dw2, j + 4);
  }
  for (; j + 4 <= H; j += 4) {
    HeadGroup g0(nn, j);
    g0.load_grads(dw1, db1, dw2, j);
    for (int b = 0; b < count; ++b) {
      float* sum = &lanes[std::size_t(b) * 4];
      store4(sum, add4(load4(sum), g0.backward(load_splat4(a + b), load_splat4(dz + b))));
    }
    g0.store_grads(dw1, db1, dw2, j);
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

void scatter_add_rows(const std::int32_t* index, int positions, const float* rows, int stride, int width,
                      float* table) {
  for (int i = 0; i < positions; ++i) {
    float* to = table + std::size_t(index[i]) * width;
    const float* from = rows + std::size_t(i) * stride;
    int d = 0;
    for (; d + 4 <= width; d += 4) store4(to + d, add4(load4(to + d), load4(from + d)));
    for (; d < width; ++d) to[d] += from[d];  // leftovers
  }
}

}  // namespace attnlab
