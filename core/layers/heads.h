// Head split and merge, the one place where the heads' columns become blocks of their own and back.
// A projection gives x [N, H D] (head h in columns h D .. h D + D - 1); the attention kernel takes each
// head as its own [N, D] block, heads [H, N, D] (core/shape.h). Both directions only move floats, so
// each is the other's inverse and also the other's backward: the gradient of a split is the merge of
// the heads' gradients, and the gradient of a merge is the split of the merged gradient
// (multihead_attention.cpp: begin_backward splits d_merged, finish_backward merges d_q, d_k, d_v).
// Users: the layers' MultiheadAttention, and the models that read checkpoints (bert.cpp, marian.cpp,
// decoder.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "../tensor.h"

namespace attnlab {

// One sequence with its strides stated: x is N rows of H D floats, x_stride floats apart (H D for a
// matrix of its own; wider for a column range of a fused q|k|v product); heads is H blocks [N, D],
// head_stride floats apart (N D when packed; a key/value cache's C D, kv_cache.h).
//   split: heads[h][n][d] = x[n][h D + d]
void split_heads(const float* x, std::size_t x_stride, int N, int H, int D, float* heads, std::size_t head_stride);
//   merge: x[n][h D + d] = heads[h][n][d]
void merge_heads(const float* heads, std::size_t head_stride, int N, int H, int D, float* x, std::size_t x_stride);

// B sequences of N rows, packed: x [B*N, H D] -> heads [B, H, N, D] (resized).
void split_heads(const RowMatrix& x, int B, int N, int H, int D, std::vector<float>& heads);
// heads [B, H, N, D] -> x [B*N, H D] (resized).
void merge_heads(const float* heads, int B, int N, int H, int D, RowMatrix& x);

}  // namespace attnlab
