// The Lookup lab's trainer natively on the real digits: steps per second and the held-out figures
// along the way. Not part of the default build:
//   cmake --build build/native --target lookup_native -j1
//   ./build/native/lookup_native [--steps 1230] [--every 246] [--heads 1] [--seed 0] [--lr 1e-4]
//                                [--batch 64] [--backend simd128|scalar] [--threads 1|0]
// Reads public/assets/mnist10k.bin.gz through zlib (the page inflates it with DecompressionStream).
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shard_runner.h"
#include "trainers/lookup_trainer.h"

using namespace attnlab;

namespace {

std::string read_asset(const std::string& path, MnistAsset& out) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return "cannot open " + path;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> buffer(1 << 16);
  int n = 0;
  while ((n = gzread(file, buffer.data(), unsigned(buffer.size()))) > 0) bytes.insert(bytes.end(), buffer.begin(), buffer.begin() + n);
  gzclose(file);
  if (n < 0) return "cannot inflate " + path;
  return parse_mnist_asset(bytes.data(), bytes.size(), out);
}

void report(int step, const LookupEvaluation& e) {
  std::printf("step %5d  held-out mse %.4f  top1 %.3f  top10 %.3f   (chance %.3f; mean image mse %.4f; "
              "nearest neighbour top1 %.3f mse %.4f)\n",
              step, e.mse, e.top1, e.top10, e.chance, e.mean_image_mse, e.nearest_neighbour_top1, e.nearest_neighbour_mse);
}

}  // namespace

int main(int argc, char** argv) {
  LookupConfig c;
  int steps = 1230, every = 246, threads = 1;
  Backend backend = Backend::simd128;
  std::string asset_path = std::string(ATTNLAB_ASSETS_DIR) + "/mnist10k.bin.gz";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--steps") steps = std::atoi(value.c_str());
    else if (key == "--every") every = std::atoi(value.c_str());
    else if (key == "--heads") c.heads = std::atoi(value.c_str());
    else if (key == "--seed") c.seed = std::uint32_t(std::atoll(value.c_str()));
    else if (key == "--lr") c.lr = std::atof(value.c_str());
    else if (key == "--batch") c.batch = std::atoi(value.c_str());
    else if (key == "--threads") threads = std::atoi(value.c_str());
    else if (key == "--backend") backend = parse_backend(value).value_or(Backend::simd128);
    else if (key == "--asset") asset_path = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  MnistAsset asset;
  std::string error = read_asset(asset_path, asset);
  LookupData data;
  if (error.empty()) error = make_lookup_data(asset, c.seed, data);
  if (error.empty()) error = validate_lookup_config(c, data.training.count());
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  shard_runner().set_active_workers(threads);
  LookupTrainer trainer(c, data);
  std::printf("lookup: heads %d, E %d, batch %d, lr %g, seed %u, backend %s, %s; %d steps an epoch\n", c.heads,
              c.embed_dim, c.batch, c.lr, c.seed, backend_name(backend), threads ? "two threads" : "one thread",
              trainer.steps_per_epoch());
  report(0, trainer.evaluate(backend));
  double train_seconds = 0.0;
  for (int done = 0; done < steps;) {
    const int chunk = std::min(every, steps - done);
    const auto start = std::chrono::steady_clock::now();
    float loss = 0.0f;
    for (int i = 0; i < chunk; ++i) loss = trainer.step(backend).loss;
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done += chunk;
    std::printf("epoch %d, batch loss %.4f | ", trainer.epoch(), loss);
    report(done, trainer.evaluate(backend));
  }
  std::printf("%.1f steps/s over %d steps (training only)\n", steps / train_seconds, steps);
  return 0;
}
