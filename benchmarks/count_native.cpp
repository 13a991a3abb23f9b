// The Count lab natively (docs/count.md): a scan of seeds for the one that gets stuck, and training speed.
//   count_native scan [--first 0] [--last 99] [--lr 1e-4] [--steps 5001]
//       per seed: accuracy on 10,000 fresh sequences, on ties, attention mass on 2s/4s, and the digits the
//       query prefers (a key depends on its digit alone, so the query's score of each digit ranks them for
//       every sequence): the two highest, with the weight one occurrence of each would get among nine
//       other, average digits
//   count_native speed [--runs 5] [--steps 2000] [--batch 100] [--threads 2]
//       training steps/s on the SIMD128 kernel (GCC vector extensions natively), median of the runs;
//       --threads 1 runs both shards on the calling thread, as the browsers' SIMD128 build does
//   count_native digest [--seed 2] [--steps 1000] [--lr 1e-4]
//       a hash of every parameter's bits after the steps, and the last step's loss: an optimisation
//       that keeps every sum's order must leave it unchanged
// Build: cmake --build build/native --target count_native
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shard_runner.h"
#include "trainers/count_trainer.h"

using namespace attnlab;

namespace {

double arg(int argc, char** argv, const char* name, double fallback) {
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atof(argv[i + 1]);
  return fallback;
}

// The query's score of each digit, q . WK(embed(d)) / sqrt(5).
std::vector<double> digit_scores(CountTrainer& t) {
  CountModel& m = t.model();
  std::vector<double> scores(10);
  for (int d = 0; d < 10; ++d) {
    double dot = 0.0;
    for (int i = 0; i < 5; ++i) {
      double k = m.wk().bias.value(0, i);
      for (int j = 0; j < 5; ++j) k += double(m.wk().weight.value(i, j)) * m.embed().weight.value(d, j);
      dot += double(m.query().value(0, i)) * k;
    }
    scores[d] = dot / std::sqrt(5.0);
  }
  return scores;
}

int scan(int argc, char** argv) {
  const int first = int(arg(argc, argv, "--first", 0)), last = int(arg(argc, argv, "--last", 99));
  const double lr = arg(argc, argv, "--lr", 1e-4);
  const int steps = int(arg(argc, argv, "--steps", 5001));
  std::printf("seed  accuracy  ties(acc)       massOn24  top digits (score, weight of one among average)\n");
  int below95 = 0, below80 = 0;
  for (int seed = first; seed <= last; ++seed) {
    CountConfig c;
    c.seed = std::uint32_t(seed);
    c.lr = lr;
    CountTrainer t(c);
    for (int i = 0; i < steps; ++i) t.step(Backend::simd128);
    const CountEvaluation e = t.evaluate(10000, Backend::simd128);
    const std::vector<double> scores = digit_scores(t);
    std::vector<int> order(10);
    for (int d = 0; d < 10; ++d) order[d] = d;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
    double mean_exp = 0.0;
    for (double s : scores) mean_exp += std::exp(s) / 10.0;
    auto share = [&](int d) { return std::exp(scores[d]) / (std::exp(scores[d]) + 9.0 * mean_exp); };
    below95 += e.accuracy < 0.95;
    below80 += e.accuracy < 0.8;
    std::printf("%4d  %.4f    %4d (%.4f)   %.3f     %d (%.2f, %.2f), %d (%.2f, %.2f)%s\n", seed, e.accuracy, e.ties,
                e.tie_accuracy, e.mass_on_24, order[0], scores[order[0]], share(order[0]), order[1], scores[order[1]],
                share(order[1]), e.accuracy < 0.8 ? "   <- stuck" : "");
    std::fflush(stdout);
  }
  std::printf("lr %g, %d steps: %d of %d seeds below 0.95, %d below 0.8\n", lr, steps, below95, last - first + 1,
              below80);
  return 0;
}

int speed(int argc, char** argv) {
  const int runs = int(arg(argc, argv, "--runs", 5)), steps = int(arg(argc, argv, "--steps", 2000));
  CountConfig c;
  c.batch = int(arg(argc, argv, "--batch", 100));
  const int threads = int(arg(argc, argv, "--threads", 2));
  shard_runner().set_active_workers(threads - 1);
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    CountTrainer t(c);
    for (int i = 0; i < 20; ++i) t.step(Backend::simd128);  // warm up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) t.step(Backend::simd128);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(steps / seconds);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("native, batch %d, %d thread%s: %.0f steps/s (median of %d runs of %d steps; min %.0f, max %.0f)\n",
              c.batch, shard_runner().active_workers() + 1, shard_runner().active_workers() ? "s" : "",
              rates[rates.size() / 2], runs, steps, rates.front(), rates.back());
  return 0;
}

int digest(int argc, char** argv) {
  CountConfig c;
  c.seed = std::uint32_t(arg(argc, argv, "--seed", 2));
  c.lr = arg(argc, argv, "--lr", 1e-4);
  const int steps = int(arg(argc, argv, "--steps", 1000));
  CountTrainer t(c);
  StepMetrics m{};
  for (int i = 0; i < steps; ++i) m = t.step(Backend::simd128);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a over the parameters' bytes, in state_dict order
  for (const Parameter* p : t.parameters()) {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(p->value.data());
    for (std::size_t i = 0; i < std::size_t(p->value.size()) * sizeof(float); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  std::printf("seed %u, lr %g, %d steps: loss %.9g, parameters' hash %016llx\n", c.seed, c.lr, steps, double(m.loss),
              (unsigned long long)hash);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "scan") return scan(argc, argv);
  if (mode == "speed") return speed(argc, argv);
  if (mode == "digest") return digest(argc, argv);
  std::fprintf(stderr, "usage: count_native scan [--first 0] [--last 99] [--lr 1e-4] [--steps 5001]\n"
                       "       count_native speed [--runs 5] [--steps 2000] [--batch 100] [--threads 2]\n"
                       "       count_native digest [--seed 2] [--steps 1000] [--lr 1e-4]\n");
  return 2;
}
