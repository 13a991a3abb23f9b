// The key/value cache every decoder writes through (decoder.h, and Marian's decoder steps): per layer,
// keys and values [B, Hkv, C, D], B sequences (Marian's beams; 1 for a decoder writing one text), Hkv
// key/value heads, the first `length` of C rows in use. C, the capacity, has room to grow: a first pass
// (from empty) gets exactly what it needs (the contiguous layout a WebGPU call copies), a pass past C
// doubles it (at most max_length), so writing a token moves the cache only at those steps. The attention
// kernel reads it in place: problem (b, h)'s rows start stride() floats after (b, h - 1)'s
// (AttentionForward::kv_stride), and a group of query heads reads one key/value head (kv_heads).
#pragma once

#include <vector>

namespace attnlab {

class KvCache {
 public:
  // Empty, with its shape: layers x [batch, heads, <= max_length, head_dim].
  void reset(int layers, int batch, int heads, int head_dim, int max_length);
  int length() const { return length_; }
  int capacity() const { return capacity_; }
  int batch() const { return B_; }
  // n more positions (rows length .. length + n - 1 of every problem, to be written), growing the
  // capacity when they do not fit. The caller has checked length + n <= max_length.
  void extend(int n);
  // Forgets every row from `length` on (a writer going back; nothing moves).
  void truncate(int length);
  // Floats from one problem's rows to the next's: C D.
  std::size_t stride() const { return std::size_t(capacity_) * D_; }
  float* keys(int layer) { return k_[std::size_t(layer)].data(); }
  float* values(int layer) { return v_[std::size_t(layer)].data(); }
  const float* keys(int layer) const { return k_[std::size_t(layer)].data(); }
  const float* values(int layer) const { return v_[std::size_t(layer)].data(); }
  // Row `position` of problem (b, h): D floats.
  float* key(int layer, int b, int h, int position) { return keys(layer) + offset(b, h, position); }
  float* value(int layer, int b, int h, int position) { return values(layer) + offset(b, h, position); }
  // Beam search: sequence b takes the rows of sequence origin[b] (origin [B]). Only the sequences whose
  // origin is another move, and only their `length` rows.
  void reorder(const std::vector<int>& origin);

 private:
  std::size_t offset(int b, int h, int position) const {
    return (std::size_t(b) * Hkv_ + h) * stride() + std::size_t(position) * D_;
  }
  int L_ = 0, B_ = 0, Hkv_ = 0, D_ = 0, max_length_ = 0;
  int length_ = 0, capacity_ = 0;
  std::vector<std::vector<float>> k_, v_;  // per layer [B, Hkv, C, D]
};

}  // namespace attnlab
