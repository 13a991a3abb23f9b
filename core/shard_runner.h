// Runs the shards of a data-parallel step: shard 0 on the calling thread, the others on worker threads
// where the build has threads (native builds, and the Node WASM build compiled with -pthread), else
// one after another on the calling thread. Each shard writes only its own outputs, so the results
// are the same bits whichever way the shards ran.
//
// One runner serves the whole process (shard_runner()): its worker threads are started once, because
// an Emscripten pthread started later could not begin until the JS event loop runs, and the caller
// would wait for it forever.
#pragma once

#include <functional>
#include <memory>
#include <vector>

namespace attnlab {

class ShardRunner {
 public:
  explicit ShardRunner(int workers);
  ~ShardRunner();
  ShardRunner(const ShardRunner&) = delete;
  ShardRunner& operator=(const ShardRunner&) = delete;

  // Calls job(0) .. job(shards - 1) and returns when all have finished. Called from inside a job, it
  // runs every shard on the calling thread.
  void run(int shards, const std::function<void(int)>& job);
  // True on a thread that is running one of run()'s jobs.
  static bool inside_job();

  int workers() const { return int(workers_.size()); }
  // Shards beyond this many are run inline by the caller; 0 runs everything inline. Never more
  // than the threads started at construction.
  void set_active_workers(int n);
  int active_workers() const { return active_; }

 private:
  class Worker;
  std::vector<std::unique_ptr<Worker>> workers_;
  int active_ = 0;
};

// True when this build can start threads.
bool threads_available();
// Worker threads at most: the packed Linear products of the checkpoint models (BERT, Marian, GPT-2)
// split their columns over every active worker, the same bits for any count; the trainers' steps use
// two shards whatever the count (their sum order, so every seed's run, stays as it was).
constexpr int kMaxWorkerThreads = 7;
// The workers this machine gets: its cores less the caller's, at most kMaxWorkerThreads (0 without threads).
int default_worker_threads();
// The process-wide runner: default_worker_threads() workers (at least one) where the build has
// threads, active when the machine has more than one core.
ShardRunner& shard_runner();

}  // namespace attnlab
