#include "kv_cache.h"

#include <algorithm>

namespace attnlab {

void KvCache::reset(int layers, int batch, int heads, int head_dim, int max_length) {
  L_ = layers, B_ = batch, Hkv_ = heads, D_ = head_dim, max_length_ = max_length;
  length_ = 0, capacity_ = 0;
  k_.assign(std::size_t(L_), {});
  v_.assign(std::size_t(L_), {});
}

void KvCache::extend(int n) {
  const int S = length_ + n;
  if (S > capacity_) {
    // From empty exactly S; else double (at least S, at most max_length). Each problem's rows move to
    // their new place once.
    const int grown = length_ == 0 ? S : std::min(max_length_, std::max(S, 2 * capacity_));
    const std::size_t problems = std::size_t(B_) * Hkv_;
    for (auto* layers : {&k_, &v_})
      for (std::vector<float>& cache : *layers) {
        std::vector<float> moved(problems * grown * D_, 0.0f);
        for (std::size_t p = 0; p < problems && length_ > 0; ++p)
          std::copy_n(cache.data() + p * capacity_ * D_, std::size_t(length_) * D_, moved.data() + p * grown * D_);
        cache = std::move(moved);
      }
    capacity_ = grown;
  }
  length_ = S;
}

void KvCache::truncate(int length) { length_ = std::min(length_, std::max(0, length)); }

void KvCache::reorder(const std::vector<int>& origin) {
  // The rows of every sequence some other one copies, put aside first: a sequence may be both a source
  // and overwritten.
  const std::size_t per_b = std::size_t(Hkv_) * stride(), used = std::size_t(length_) * D_;
  std::vector<int> sources;
  for (int b = 0; b < B_; ++b)
    if (origin[std::size_t(b)] != b && std::find(sources.begin(), sources.end(), origin[std::size_t(b)]) == sources.end())
      sources.push_back(origin[std::size_t(b)]);
  if (sources.empty()) return;
  std::vector<float> aside(sources.size() * Hkv_ * used);
  for (auto* layers : {&k_, &v_})
    for (std::vector<float>& cache : *layers) {
      for (std::size_t i = 0; i < sources.size(); ++i)
        for (int h = 0; h < Hkv_; ++h)
          std::copy_n(cache.data() + std::size_t(sources[i]) * per_b + std::size_t(h) * stride(), used, aside.data() + (i * Hkv_ + h) * used);
      for (int b = 0; b < B_; ++b) {
        if (origin[std::size_t(b)] == b) continue;
        const std::size_t i = std::size_t(std::find(sources.begin(), sources.end(), origin[std::size_t(b)]) - sources.begin());
        for (int h = 0; h < Hkv_; ++h)
          std::copy_n(aside.data() + (i * Hkv_ + h) * used, used, cache.data() + std::size_t(b) * per_b + std::size_t(h) * stride());
      }
    }
}

}  // namespace attnlab
