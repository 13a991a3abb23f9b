#include "shard_runner.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNLAB_HAS_THREADS 1
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace attnlab {

#if ATTNLAB_HAS_THREADS

// A persistent thread that runs one job at a time.
class ShardRunner::Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void start(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = std::move(job);
      busy_ = true;
    }
    wake_.notify_all();
  }

  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [this] { return !busy_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return busy_ || quit_; });
      if (quit_) return;
      lock.unlock();
      job_();
      lock.lock();
      busy_ = false;
      wake_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> job_;
  bool busy_ = false, quit_ = false;
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

void ShardRunner::run(int shards, const std::function<void(int)>& job) {
  const int threaded = shards - 1 < active_ ? shards - 1 : active_;
  for (int i = 0; i < threaded; ++i) workers_[i]->start([&job, i] { job(i + 1); });
  job(0);
  for (int s = threaded + 1; s < shards; ++s) job(s);
  for (int i = 0; i < threaded; ++i) workers_[i]->wait();
}

ShardRunner& shard_runner() {
  static ShardRunner& runner = [] () -> ShardRunner& {
    static ShardRunner r(1);  // no thread where the build has none
#if ATTNLAB_HAS_THREADS
    if (std::thread::hardware_concurrency() < 2) r.set_active_workers(0);  // one core: no gain
#endif
    return r;
  }();
  return runner;
}

}  // namespace attnlab
