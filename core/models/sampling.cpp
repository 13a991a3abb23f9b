#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

std::string check_sampling(const Sampling& s) {
  if (!(s.temperature >= 0 && s.temperature <= 100)) return "temperature must be in [0, 100], got " + std::to_string(s.temperature);
  if (s.top_k < 0) return "top-k must be 0 (no limit) or more, got " + std::to_string(s.top_k);
  if (!(s.top_p > 0 && s.top_p <= 1)) return "top-p must be in (0, 1], got " + std::to_string(s.top_p);
  return {};
}

namespace {

// The `count` largest logits' ids, largest first, ties to the lower id (a strict order, so either sort
// gives what a stable sort's first `count` would). A partial sort for a few (top-k: the other 50,000 of
// GPT-2's ids stay unsorted); a plain sort for all of them, where partial_sort's heap sort is about 40%
// slower.
std::vector<int> by_logit(const float* logits, int V, int count) {
  std::vector<int> order(std::size_t(V), 0);
  std::iota(order.begin(), order.end(), 0);
  const auto larger = [logits](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  if (count < V) std::partial_sort(order.begin(), order.begin() + count, order.end(), larger);
  else std::sort(order.begin(), order.end(), larger);
  order.resize(std::size_t(count));
  return order;
}

int argmax(const float* logits, int V) {
  int best = 0;
  for (int v = 1; v < V; ++v)
    if (logits[v] > logits[best]) best = v;  // strictly greater: the first maximum wins
  return best;
}

}  // namespace

std::vector<double> next_token_distribution(const float* logits, int V, const Sampling& s) {
  std::vector<double> p(std::size_t(V), 0.0);
  if (V < 1) return p;
  if (s.temperature == 0) {
    p[std::size_t(argmax(logits, V))] = 1.0;
    return p;
  }
  const int kept = s.top_k > 0 ? std::min(s.top_k, V) : V;
  // The kept ids, in descending order where top-p needs the order; with neither limit, every id in id
  // order (the common case, a temperature alone: no sort of the vocabulary per token).
  std::vector<int> ids;
  int largest = 0;
  if (kept < V || s.top_p < 1) {
    ids = by_logit(logits, V, kept);
    largest = ids.front();
  } else {
    ids.resize(std::size_t(V));
    std::iota(ids.begin(), ids.end(), 0);
    largest = argmax(logits, V);
  }
  // Softmax over the kept ids at this temperature, the largest logit subtracted first.
  const double top = double(logits[largest]) / s.temperature;
  double sum = 0.0;
  for (const int v : ids) {
    p[std::size_t(v)] = std::exp(double(logits[v]) / s.temperature - top);
    sum += p[std::size_t(v)];
  }
  for (const int v : ids) p[std::size_t(v)] /= sum;
  if (s.top_p < 1) {
    // The nucleus: keep ids while the mass before them is below top_p, then renormalise.
    double before = 0.0, nucleus = 0.0;
    int i = 0;
    for (; i < kept && before < s.top_p; ++i) {
      before += p[std::size_t(ids[std::size_t(i)])];
      nucleus = before;
    }
    for (int j = i; j < kept; ++j) p[std::size_t(ids[std::size_t(j)])] = 0.0;
    for (int j = 0; j < i; ++j) p[std::size_t(ids[std::size_t(j)])] /= nucleus;
  }
  return p;
}

int draw_token(const std::vector<double>& p, const float* logits, const Sampling& s, Rng& rng) {
  const int V = int(p.size());
  if (s.temperature == 0) return argmax(logits, V);
  const double u = double(rng.uniform());
  double cumulative = 0.0;
  int last = 0;
  for (int v = 0; v < V; ++v) {
    if (p[std::size_t(v)] <= 0) continue;
    cumulative += p[std::size_t(v)];
    last = v;
    if (cumulative > u) return v;
  }
  return last;  // u within rounding of 1: the last id with mass
}

std::vector<TokenChance> top_tokens(const std::vector<double>& p, const float* logits, int k) {
  const int V = int(p.size()), n = std::max(0, std::min(k, V));
  auto before = [&](int a, int b) {  // a ranks before b: more likely, then the larger logit, then the lower id
    if (p[std::size_t(a)] != p[std::size_t(b)]) return p[std::size_t(a)] > p[std::size_t(b)];
    if (logits[a] != logits[b]) return logits[a] > logits[b];
    return a < b;
  };
  // One pass, keeping the best n so far in order: most ids lose to the n-th at once (a page step shows
  // the top 10 of GPT-2's 50,257 at every token and every move of the temperature slider).
  std::vector<int> best;
  best.reserve(std::size_t(n) + 1);
  for (int v = 0; v < V && n > 0; ++v) {
    if (int(best.size()) == n && !before(v, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), v, before), v);
    if (int(best.size()) > n) best.pop_back();
  }
  std::vector<TokenChance> out;
  for (const int v : best) out.push_back({v, float(p[std::size_t(v)]), logits[v]});
  return out;
}

}  // namespace attnlab
