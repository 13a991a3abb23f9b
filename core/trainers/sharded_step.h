// The training loop that every trainer shares (ShardedTraining below): the seed's parameter stream, the
// data-parallel step, the gradient sum, Adam.
//
// The data-parallel step: a batch split into up to kShards row ranges, each
// run on its own copy of the model (on threads where the build has them, see shard_runner.h). Copy 0
// owns the parameters that the optimiser updates; before each pass the others take its values, and after
// it their gradients are added into copy 0 in shard order. The split does not depend on threads, so a
// seed gives the same bits with or without them.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../optim/adam.h"
#include "../rng.h"
#include "../shard_runner.h"

namespace attnlab {

// [first, first + count) of n rows for part i of `parts`: the first parts take the remainder.
inline std::pair<int, int> part_range(int n, int parts, int i) {
  return {i * (n / parts) + (i < n % parts ? i : n % parts), n / parts + (i < n % parts ? 1 : 0)};
}

template <class Model>
class ShardedModels {
 public:
  static constexpr int kShards = 2;

  // make() builds one copy; it is called once per shard, copy 0 first. A batch of one row has one shard.
  template <class Make>
  ShardedModels(int batch, Make make) {
    const int shards = batch >= kShards ? kShards : 1;
    for (int s = 0; s < shards; ++s) {
      models_.push_back(make());
      const auto [first, count] = part_range(batch, shards, s);
      first_.push_back(first);
      count_.push_back(count);
    }
  }

  int shards() const { return int(models_.size()); }
  Model& primary() { return *models_[0]; }
  const Model& primary() const { return *models_[0]; }
  Model& shard(int s) { return *models_[s]; }
  const Model& shard(int s) const { return *models_[s]; }
  int first(int s) const { return first_[s]; }  // the shard's rows of the batch
  int count(int s) const { return count_[s]; }

  // Copy 0's parameter values to the other copies.
  void share_values() {
    for (int s = 1; s < shards(); ++s) copy_values(models_[0]->parameters(), models_[s]->parameters());
  }
  // The other shards' gradients added into copy 0, in shard order (the same bits on any thread count).
  void sum_grads() {
    for (int s = 1; s < shards(); ++s) add_grads(models_[s]->parameters(), models_[0]->parameters());
  }
  // pass(s) for every shard, then sum_grads().
  template <class Pass>
  void run(const Pass& pass) {
    share_values();
    shard_runner().run(shards(), pass);
    sum_grads();
  }

 private:
  std::vector<std::unique_ptr<Model>> models_;
  std::vector<int> first_, count_;
};

// Stream 1 of every trainer's seed initialises its parameters; the trainer numbers its other streams
// (batches, shuffles, samples) from 2.
constexpr std::uint64_t kInitStream = 1;

// The loop around a lab's model: the shards' copies, each initialised from its own Rng on the seed's
// init stream (so every copy draws the same values; only copy 0's are trained, the others take them
// each step), Adam on copy 0's parameters, and the step count.
template <class Model>
class ShardedTraining {
 public:
  // make(Rng& init_rng) -> std::unique_ptr<Model>: one copy of the model.
  template <class Make>
  ShardedTraining(std::uint32_t seed, int batch, double lr, Make make)
      : models(batch, [&] {
          Rng init_rng(seed, kInitStream);
          return make(init_rng);
        }) {
    AdamOptions options;
    options.lr = lr;
    adam_ = std::make_unique<Adam>(models.primary().parameters(), options);
  }

  ShardedModels<Model> models;

  int steps_done() const { return steps_done_; }
  void set_lr(double lr) { adam_->options.lr = lr; }
  void zero_grad() { adam_->zero_grad(); }
  // After the gradients of a step are summed into copy 0: Adam's update; returns the steps done.
  int finish_step() {
    adam_->step();
    return ++steps_done_;
  }

 private:
  std::unique_ptr<Adam> adam_;
  int steps_done_ = 0;
};

}  // namespace attnlab
