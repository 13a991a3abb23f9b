#include "multihead_attention.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "../gemm.h"
#include "heads.h"
#include "init.h"

namespace attnlab {

MultiheadAttention::MultiheadAttention(int embed_dim, int num_heads, Rng& rng, int head_dim)
    : in_proj_weight("in_proj_weight", 3 * num_heads * (head_dim ? head_dim : embed_dim / num_heads), embed_dim),
      in_proj_bias("in_proj_bias", 1, 3 * num_heads * (head_dim ? head_dim : embed_dim / num_heads)),
      out_proj_weight("out_proj.weight", embed_dim, num_heads * (head_dim ? head_dim : embed_dim / num_heads)),
      out_proj_bias("out_proj.bias", 1, embed_dim),
      E_(embed_dim),
      H_(num_heads),
      D_(head_dim ? head_dim : embed_dim / num_heads) {
  // MultiheadAttention._reset_parameters: xavier_uniform_ in_proj_weight, zero biases; out_proj is
  // an nn.Linear, so its weight keeps Linear's kaiming-uniform init.
  const int HD = H_ * D_;
  init_uniform(in_proj_weight.value, xavier_bound(embed_dim, 3 * HD), rng);
  init_uniform(out_proj_weight.value, linear_init_bound(HD), rng);
}

ParameterList MultiheadAttention::parameters() {
  return {&in_proj_weight, &in_proj_bias, &out_proj_weight, &out_proj_bias};
}

void MultiheadAttention::build_mask(const MhaInputs& in) {
  const int B = in.B, H = H_, T = in.T, S = in.S;
  mask_view_ = AttentionMask{};
  if (!in.key_padding_mask && !in.attn_mask) return;
  const bool per_head = in.attn_mask && in.attn_mask_per_head;
  const std::size_t TS = std::size_t(T) * S;
  if (!in.key_padding_mask) {  // attn_mask alone: use it as it is, broadcast if shared
    mask_.assign(in.attn_mask, in.attn_mask + (per_head ? std::size_t(B) * H * TS : TS));
    mask_view_ = {mask_.data(), per_head ? std::size_t(H) * TS : 0, per_head ? TS : 0};
    return;
  }
  // key_padding_mask [B, S] is broadcast over t (and h), plus attn_mask where given.
  const int mask_heads = per_head ? H : 1;
  mask_.assign(std::size_t(B) * mask_heads * TS, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < mask_heads; ++h)
      for (int t = 0; t < T; ++t)
        for (int s = 0; s < S; ++s) {
          float m = in.key_padding_mask[std::size_t(b) * S + s];
          if (in.attn_mask)
            m += per_head ? in.attn_mask[((std::size_t(b) * H + h) * T + t) * S + s]
                          : in.attn_mask[std::size_t(t) * S + s];
          mask_[((std::size_t(b) * mask_heads + h) * T + t) * S + s] = m;
        }
  mask_view_ = {mask_.data(), std::size_t(mask_heads) * TS, per_head ? TS : 0};
}

void MultiheadAttention::prepare(const MhaInputs& in) {
  const int E = E_, D = D_, HD = H_ * D_;
  assert(!in.kv_shared || (!in.query_shared && !in.key_padding_mask && !in.attn_mask));
  B_ = in.B;
  T_ = in.T;
  kv_shared_ = in.kv_shared;
  // kv_shared folds the batch into the query length: one problem of B*T queries per head.
  shape_ = kv_shared_ ? AttentionShape{1, H_, in.B * in.T, in.S, D} : AttentionShape{in.B, H_, in.T, in.S, D};
  query_shared_ = in.query_shared;
  x_query_ = ConstMatrixMap(in.query, std::size_t(query_shared_ ? 1 : in.B) * in.T, E);
  x_key_ = ConstMatrixMap(in.key, std::size_t(shape_.B) * in.S, E);
  x_value_ = ConstMatrixMap(in.value, std::size_t(shape_.B) * in.S, E);
  // Projections: x W_i^T + b_i with W_i the i-th block of E rows of in_proj_weight.
  const auto& W = in_proj_weight.value;
  const auto& bias = in_proj_bias.value;
  RowMatrix projected(x_query_.rows(), HD);
  gemm_abt(x_query_, W.topRows(HD), projected);
  projected.rowwise() += bias.leftCols(HD).row(0);
  if (query_shared_) projected = projected.replicate(in.B, 1).eval();
  split_heads(projected, shape_.B, shape_.T, H_, D, q_);
  projected.resize(x_key_.rows(), HD);
  gemm_abt(x_key_, W.middleRows(HD, HD), projected);
  projected.rowwise() += bias.middleCols(HD, HD).row(0);
  split_heads(projected, shape_.B, in.S, H_, D, k_);
  projected.resize(x_value_.rows(), HD);
  gemm_abt(x_value_, W.bottomRows(HD), projected);
  projected.rowwise() += bias.rightCols(HD).row(0);
  split_heads(projected, shape_.B, in.S, H_, D, v_);
  build_mask(in);
  heads_out_.resize(shape_.q_size());
  weights_.resize(shape_.weights_size());
  if (kv_shared_) kernel_weights_.resize(shape_.weights_size());
}

AttentionForward MultiheadAttention::kernel_forward_args() {
  AttentionForward a;
  a.shape = shape_;
  a.scale = 1.0f / std::sqrt(float(head_dim()));
  a.q = q_.data();
  a.k = k_.data();
  a.v = v_.data();
  a.mask = mask_view_;
  a.weights = kv_shared_ ? kernel_weights_.data() : weights_.data();
  a.out = heads_out_.data();
  return a;
}

void MultiheadAttention::finish_forward() {
  const int B = B_, H = H_, T = T_, S = shape_.S, D = shape_.D;
  merge_heads(heads_out_.data(), shape_.B, shape_.T, H, D, merged_);
  out_.resize(merged_.rows(), E_);
  gemm_abt(merged_, out_proj_weight.value, out_);
  out_.rowwise() += out_proj_bias.value.row(0);
  if (kv_shared_)  // the kernel's [H, B*T, S] -> [B, H, T, S]
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        std::copy_n(&kernel_weights_[(std::size_t(h) * B + b) * T * S], std::size_t(T) * S,
                    &weights_[(std::size_t(b) * H + h) * T * S]);
  // average_attn_weights=True: the mean over heads, [B, T, S]
  weights_mean_.assign(std::size_t(B) * T * S, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const float* w = &weights_[(std::size_t(b) * H + h) * T * S];
      float* m = &weights_mean_[std::size_t(b) * T * S];
      for (std::size_t i = 0; i < std::size_t(T) * S; ++i) m[i] += w[i];
    }
  for (float& m : weights_mean_) m /= float(H);
}

void MultiheadAttention::forward(const MhaInputs& in, Backend backend) {
  prepare(in);
  attention_forward(backend, kernel_forward_args());
  finish_forward();
}

void MultiheadAttention::begin_backward(const float* d_out, const float* d_weights) {
  const int B = B_, H = H_, T = T_, S = shape_.S, D = shape_.D;
  if (d_out) {
    const ConstMatrixMap g(d_out, std::size_t(B) * T, E_);
    // from out = merged Wo^T + bo
    gemm_atb_add(g, merged_, out_proj_weight.grad);
    out_proj_bias.grad.row(0) += g.colwise().sum();
    d_merged_.resize(g.rows(), H * D);
    gemm_ab(g, out_proj_weight.value, d_merged_);
    split_heads(d_merged_, shape_.B, shape_.T, H, D, d_heads_out_);
  } else {  // the loss ignores the output: out_proj gets no gradient, the kernel a zero d_out
    d_heads_out_.assign(shape_.q_size(), 0.0f);
  }
  has_d_weights_ = d_weights != nullptr;
  if (has_d_weights_ && !kv_shared_) d_weights_.assign(d_weights, d_weights + shape_.weights_size());
  if (has_d_weights_ && kv_shared_) {  // [B, H, T, S] -> the kernel's [H, B*T, S]
    d_weights_.resize(shape_.weights_size());
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        std::copy_n(&d_weights[(std::size_t(b) * H + h) * T * S], std::size_t(T) * S,
                    &d_weights_[(std::size_t(h) * B + b) * T * S]);
  }
  d_q_.resize(shape_.q_size());
  d_k_.resize(shape_.kv_size());
  d_v_.resize(shape_.kv_size());
}

AttentionBackward MultiheadAttention::kernel_backward_args() {
  AttentionBackward a;
  a.shape = shape_;
  a.scale = 1.0f / std::sqrt(float(head_dim()));
  a.q = q_.data();
  a.k = k_.data();
  a.v = v_.data();
  a.weights = kv_shared_ ? kernel_weights_.data() : weights_.data();
  a.d_out = d_heads_out_.data();
  a.d_weights = has_d_weights_ ? d_weights_.data() : nullptr;
  a.d_q = d_q_.data();
  a.d_k = d_k_.data();
  a.d_v = d_v_.data();
  return a;
}

void MultiheadAttention::finish_backward() {
  // The kernel's shape: with kv_shared, B = 1 and T = the caller's B*T, so d_k and d_v come out
  // [S, E], already summed over the batch.
  const auto [B, H, T, S, D] = shape_;
  const int E = E_, HD = H * D;
  const auto& W = in_proj_weight.value;
  RowMatrix d_projected;
  // from projected_i = x_i W_i^T + b_i, for i = query, key, value
  merge_heads(d_q_.data(), B, T, H, D, d_projected);
  if (query_shared_) {  // every batch element used the same projected rows: their gradients add up
    RowMatrix summed = d_projected.topRows(T);
    for (int b = 1; b < B; ++b) summed += d_projected.middleRows(std::size_t(b) * T, T);
    d_projected = std::move(summed);
  }
  gemm_atb_add(d_projected, x_query_, in_proj_weight.grad.topRows(HD));
  in_proj_bias.grad.leftCols(HD).row(0) += d_projected.colwise().sum();
  d_query_.resize(d_projected.rows(), E);
  gemm_ab(d_projected, W.topRows(HD), d_query_);
  merge_heads(d_k_.data(), B, S, H, D, d_projected);
  gemm_atb_add(d_projected, x_key_, in_proj_weight.grad.middleRows(HD, HD));
  in_proj_bias.grad.middleCols(HD, HD).row(0) += d_projected.colwise().sum();
  d_key_.resize(d_projected.rows(), E);
  gemm_ab(d_projected, W.middleRows(HD, HD), d_key_);
  merge_heads(d_v_.data(), B, S, H, D, d_projected);
  gemm_atb_add(d_projected, x_value_, in_proj_weight.grad.bottomRows(HD));
  in_proj_bias.grad.rightCols(HD).row(0) += d_projected.colwise().sum();
  d_value_.resize(d_projected.rows(), E);
  gemm_ab(d_projected, W.bottomRows(HD), d_value_);
}

void MultiheadAttention::backward(const float* d_out, const float* d_weights, Backend backend) {
  begin_backward(d_out, d_weights);
  attention_backward(backend, kernel_backward_args());
  finish_backward();
}

}  // namespace attnlab
