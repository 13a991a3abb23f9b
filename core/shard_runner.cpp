#include "shard_runner.h"

#include <algorithm>

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNLAB_HAS_THREADS 1
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace attnlab {

#if ATTNLAB_HAS_THREADS

// A persistent thread that runs one job at a time. Both sides spin briefly before they sleep: a
// training step hands over a job every few milliseconds, and a futex wake-up costs 50-75 us in the
// Node build (measured), about 2% of a step each way.
//
// A posted job is claimed by whichever side gets to it first: the worker when it wakes, or the caller
// once its own shard is done (wait()). On a machine whose cores are busy with other processes the
// worker may not be scheduled for milliseconds; the caller then runs the job itself instead of
// spinning for it (measured on 2 cores at load 5-6: 2 threads ran at 200 steps/s against 700 for one
// before, the Lookup lab). A job computes the same bits on either thread.
class ShardRunner::Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_.store(true);
    }
    wake_.notify_all();
    thread_.join();
  }

  void start(std::function<void()> job) {
    job_ = std::move(job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      posted_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
  }

  void wait() {
    const unsigned target = posted_.load(std::memory_order_relaxed);
    if (claim(target)) {  // the worker has not started it: run it here
      job_();
      finished_.store(target, std::memory_order_release);
      return;
    }
    const auto done = [&] { return finished_.load(std::memory_order_acquire) == target; };
    if (spin_until(done, kCallerSpin)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, done);
  }

 private:
  static constexpr std::chrono::microseconds kCallerSpin{20000}, kWorkerSpin{500};

  // Job number n (posted_ after its start()) is run by the side that moves claimed_ from n - 1 to n.
  bool claim(unsigned n) {
    unsigned expected = n - 1;
    return claimed_.compare_exchange_strong(expected, n, std::memory_order_acq_rel);
  }

  template <class Ready>
  static bool spin_until(const Ready& ready, std::chrono::microseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (int i = 0;; ++i) {
      if (ready()) return true;
      if ((i & 255) == 255 && std::chrono::steady_clock::now() > until) return false;
    }
  }

  void loop() {
    unsigned seen = 0;
    for (;;) {
      const auto posted = [&] { return posted_.load(std::memory_order_acquire) != seen || quit_.load(); };
      if (!spin_until(posted, kWorkerSpin)) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, posted);
      }
      if (quit_.load()) return;
      seen = posted_.load(std::memory_order_acquire);
      if (!claim(seen)) continue;  // the caller ran it (and marks it finished)
      job_();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_.store(seen, std::memory_order_release);
      }
      wake_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> job_;
  std::atomic<unsigned> posted_{0}, claimed_{0}, finished_{0};
  std::atomic<bool> quit_{false};
  std::thread thread_;  // last: started once the members it uses exist
};

bool threads_available() { return true; }

#else

class ShardRunner::Worker {
 public:
  void start(std::function<void()> job) { job(); }
  void wait() {}
};

bool threads_available() { return false; }

#endif

ShardRunner::ShardRunner(int workers) {
  if (!threads_available()) workers = 0;
  for (int i = 0; i < workers; ++i) workers_.push_back(std::make_unique<Worker>());
  active_ = workers;
}

ShardRunner::~ShardRunner() = default;

void ShardRunner::set_active_workers(int n) { active_ = n < 0 ? 0 : (n > workers() ? workers() : n); }

namespace {
// How many run() jobs this thread is inside. A job that itself calls run() (a kernel that shards its
// problems, called from a trainer's shard) runs its shards inline: the workers are busy with the outer
// call's jobs, and posting to one would overwrite the job it is running.
thread_local int jobs_entered = 0;
struct InsideJob {
  InsideJob() { ++jobs_entered; }
  ~InsideJob() { --jobs_entered; }
};
}  // namespace

void ShardRunner::run(int shards, const std::function<void(int)>& job) {
  const InsideJob inside;
  const int threaded = jobs_entered > 1 ? 0 : (shards - 1 < active_ ? shards - 1 : active_);
  for (int i = 0; i < threaded; ++i) workers_[i]->start([&job, i] { const InsideJob in_worker; job(i + 1); });
  job(0);
  for (int s = threaded + 1; s < shards; ++s) job(s);
  for (int i = 0; i < threaded; ++i) workers_[i]->wait();
}

bool ShardRunner::inside_job() { return jobs_entered > 0; }

int default_worker_threads() {
#if ATTNLAB_HAS_THREADS
  // One worker per core beyond the caller's, at most kMaxWorkerThreads. The WASM threads builds
  // pre-start the same number of pthreads (CMakeLists.txt: PTHREAD_POOL_SIZE is this formula in JS),
  // since a pthread started later could not begin before the caller returned to the event loop.
  const unsigned cores = std::thread::hardware_concurrency();
  const int beyond = cores < 2 ? 1 : int(cores) - 1;
  return beyond < kMaxWorkerThreads ? beyond : kMaxWorkerThreads;
#else
  return 0;
#endif
}

ShardRunner& shard_runner() {
  static ShardRunner& runner = [] () -> ShardRunner& {
    static ShardRunner r(std::max(1, default_worker_threads()));  // no thread where the build has none
#if ATTNLAB_HAS_THREADS
    if (std::thread::hardware_concurrency() < 2) r.set_active_workers(0);  // one core: no gain
#endif
    return r;
  }();
  return runner;
}

}  // namespace attnlab
