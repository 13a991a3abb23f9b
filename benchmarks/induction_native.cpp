// The Induction lab's trainer natively: the timeline as it forms (losses on the repeat and the rest,
// the best previous-token and induction heads), the phase change, steps per second. Used to choose
// the lab's defaults (docs/induction.md). Not part of the default build:
//   cmake --build build/native --target induction_native -j1
//   ./build/native/induction_native [--steps 3000] [--every 250] [--seed 0] [--layers 2] [--heads 4]
//       [--d-model 64] [--d-head 16] [--vocab 64] [--context 33] [--batch 32] [--lr 3e-3] [--mlp 0|1]
//       [--layer-norm 0|1] [--backend simd128|scalar] [--threads 1|0] [--quiet 1]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shard_runner.h"
#include "trainers/induction_trainer.h"

using namespace attnlab;

namespace {

void report(const InductionTrainer& t, int layers, int heads) {
  const TimelinePoint& p = t.timeline().points().back();
  const int prev = best_head(p.scores.previous, heads, 0), ind = best_head(p.scores.induction, heads, 0);
  std::printf("step %6d  loss %.3f  repeat %.3f  rest %.3f  previous %d.%d %.2f  induction %d.%d %.2f\n", p.step, p.loss,
              p.repeat_loss, p.rest_loss, prev / heads, prev % heads, p.scores.previous[std::size_t(prev)], ind / heads,
              ind % heads, p.scores.induction[std::size_t(ind)]);
  (void)layers;
}

}  // namespace

int main(int argc, char** argv) {
  InductionConfig c;
  int steps = 3000, every = 250, threads = 1, quiet = 0;
  Backend backend = Backend::simd128;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--steps") steps = std::atoi(value.c_str());
    else if (key == "--every") every = std::atoi(value.c_str());
    else if (key == "--seed") c.seed = std::uint32_t(std::atoll(value.c_str()));
    else if (key == "--layers") c.layers = std::atoi(value.c_str());
    else if (key == "--heads") c.heads = std::atoi(value.c_str());
    else if (key == "--d-model") c.d_model = std::atoi(value.c_str());
    else if (key == "--d-head") c.d_head = std::atoi(value.c_str());
    else if (key == "--vocab") c.vocab = std::atoi(value.c_str());
    else if (key == "--context") c.context = std::atoi(value.c_str());
    else if (key == "--batch") c.batch = std::atoi(value.c_str());
    else if (key == "--lr") c.lr = std::atof(value.c_str());
    else if (key == "--mlp") c.mlp = std::atoi(value.c_str()) != 0;
    else if (key == "--layer-norm") c.layer_norm = std::atoi(value.c_str()) != 0;
    else if (key == "--threads") threads = std::atoi(value.c_str());
    else if (key == "--quiet") quiet = std::atoi(value.c_str());
    else if (key == "--backend") backend = parse_backend(value).value_or(Backend::simd128);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  const std::string error = validate_induction_config(c);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  shard_runner().set_active_workers(threads);
  InductionTrainer t(c);
  if (!quiet)
    std::printf("induction: L %d, H %d, E %d, D %d, V %d, T %d, B %d, lr %g, mlp %d, ln %d, seed %u, %s, %s\n", c.layers,
                c.heads, c.d_model, c.d_head, c.vocab, c.context, c.batch, c.lr, c.mlp, c.layer_norm, c.seed,
                backend_name(backend), threads ? "two threads" : "one thread");
  double seconds = 0.0;
  for (int done = 0; done < steps;) {
    const int chunk = std::min(every, steps - done);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < chunk; ++i) t.step(backend);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done += chunk;
    if (!quiet) report(t, c.layers, c.heads);
  }
  const InductionEvaluation e = t.evaluate(512, nullptr, backend);
  const int L = c.layers, H = c.heads;
  const int ind = best_head(e.scores.induction, H, 0), prev0 = best_head(std::vector<float>(e.scores.previous.begin(), e.scores.previous.begin() + H), H, 0);
  HeadAblation off;
  off.set({{ind / H, ind % H}}, L, H);
  const InductionEvaluation ablated = t.evaluate(512, &off, backend);
  std::printf("seed %u: phase %d formed-point-step %d | repeat %.3f rest %.3f | induction %d.%d %.2f | layer-0 previous 0.%d %.2f | "
              "ablated repeat %.3f (x%.2f) | icl %.3f | %.1f steps/s\n",
              c.seed, t.timeline().phase_step(),
              t.timeline().formed_index() >= 0 ? t.timeline().points()[std::size_t(t.timeline().formed_index())].step : -1,
              e.repeat_loss, e.rest_loss, ind / H, ind % H, e.scores.induction[std::size_t(ind)], prev0,
              e.scores.previous[std::size_t(prev0)], ablated.repeat_loss, ablated.repeat_loss / e.repeat_loss, e.icl_score,
              steps / seconds);
  std::printf("  induction scores by layer:");
  for (int i = 0; i < L * H; ++i) std::printf("%s%.2f", i % H == 0 ? (i ? " | " : " ") : " ", e.scores.induction[std::size_t(i)]);
  std::printf("\n  previous scores by layer: ");
  for (int i = 0; i < L * H; ++i) std::printf("%s%.2f", i % H == 0 ? (i ? " | " : " ") : " ", e.scores.previous[std::size_t(i)]);
  std::printf("\n");
  return 0;
}
