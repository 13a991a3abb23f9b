#include "activation_cache.h"

#include <algorithm>

namespace attnlab {

void ActivationCache::put(const std::string& name, std::vector<int> shape, const float* values) {
  std::size_t n = 1;
  for (int d : shape) n *= std::size_t(d);
  CachedActivation entry{name, std::move(shape), std::vector<float>(values, values + n)};
  auto at = std::find_if(entries_.begin(), entries_.end(), [&](const CachedActivation& e) { return e.name == name; });
  if (at != entries_.end()) *at = std::move(entry);
  else entries_.push_back(std::move(entry));
}

const CachedActivation* ActivationCache::find(const std::string& name) const {
  for (const CachedActivation& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::size_t ActivationCache::float_count() const {
  std::size_t n = 0;
  for (const CachedActivation& e : entries_) n += e.values.size();
  return n;
}

std::string block_hook(int layer, const char* hook) { return "blocks." + std::to_string(layer) + "." + hook; }

}  // namespace attnlab
