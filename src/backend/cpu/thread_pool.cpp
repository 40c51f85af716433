// thread_pool.cpp — a fixed pool of workers that split each parallel_for into chunks taken
// from a shared atomic counter (so uneven chunks balance themselves).
#include "cupric/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "cupric/errors.hpp"

namespace cupric::cpu {

namespace {
int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int default_threads() {
  if (const char* env = std::getenv("CUPRIC_NUM_THREADS")) {
    const long n = std::atol(env);
    if (n > 0) return static_cast<int>(std::min<long>(n, max_threads()));  // clamped: an environment cannot raise
  }
  return cores();
}

class Pool {
 public:
  Pool() : nthreads_(default_threads()) {}
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int threads() const { return nthreads_.load(std::memory_order_relaxed); }
  void set_threads(int n) {
    std::lock_guard<std::mutex> run(run_mutex_);  // no job runs while the pool changes
    nthreads_ = n < 1 ? default_threads() : n;
    retire_workers(nthreads_ - 1);
  }

  void run(std::int64_t nchunks, const std::function<void(std::int64_t)>& chunk) {
    std::lock_guard<std::mutex> run(run_mutex_);  // one parallel region at a time
    const int nthreads = threads();
    ensure_workers(nthreads - 1);
    const int helpers = static_cast<int>(std::min<std::int64_t>(nthreads - 1, nchunks - 1));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &chunk;
      nchunks_ = nchunks;
      next_.store(0);
      participants_ = helpers;  // fixed for this job: workers 0..helpers-1 take part
      remaining_ = helpers;     // counts down as they finish
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return remaining_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void ensure_workers(int n) {
    std::uint64_t now;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      now = generation_;
    }
    while (static_cast<int>(workers_.size()) < n) {
      int id = static_cast<int>(workers_.size());
      // a new worker has seen every job so far: it must not take part in (and count itself out
      // of) the last one, whose participants it was never among; that extra count let a later
      // job return before its chunks were done, or wait for ever (set_num_threads(1) then (3))
      workers_.emplace_back([this, id, now] { loop(id, now); });
    }
  }

  /// Ends and joins the workers from `keep` on (a pool asked for fewer threads gives them back).
  void retire_workers(int keep) {
    if (static_cast<int>(workers_.size()) <= keep) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      keep_ = keep;
    }
    wake_.notify_all();
    for (std::size_t i = static_cast<std::size_t>(keep); i < workers_.size(); ++i) workers_[i].join();
    workers_.resize(static_cast<std::size_t>(keep));
    std::lock_guard<std::mutex> lock(mutex_);
    keep_ = INT32_MAX;
  }

  void work() {
    for (;;) {
      std::int64_t i = next_.fetch_add(1);
      if (i >= nchunks_) return;
      try {
        (*job_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }

  void loop(int id, std::uint64_t seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // `participants_` (not the count still running) decides who takes part, so a worker
        // that wakes late still joins the job it was counted in
        wake_.wait(lock, [&] { return stop_ || id >= keep_ || (generation_ != seen && id < participants_); });
        if (stop_ || id >= keep_) return;
        seen = generation_;
      }
      work();
      bool last;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        last = --remaining_ == 0;
      }
      if (last) done_.notify_all();
    }
  }

  std::atomic<int> nthreads_;
  std::vector<std::thread> workers_;
  int keep_ = INT32_MAX;  // workers with an id from here on exit (retire_workers)
  std::mutex run_mutex_, mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::int64_t)>* job_ = nullptr;
  std::int64_t nchunks_ = 0;
  std::atomic<std::int64_t> next_{0};
  int participants_ = 0;
  int remaining_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers may outlive static destruction order
  return *p;
}

thread_local bool in_parallel_region = false;
}  // namespace

int max_threads() { return std::max(kThreadsPerCore * cores(), kMinMaxThreads); }
int num_threads() { return pool().threads(); }
void set_num_threads(std::int64_t n) {
  if (n > max_threads())
    throw ValueError(cat("set_num_threads(", n, "): at most ", max_threads(), " threads on this machine (", cores(),
                         " cores; the bound is ", kThreadsPerCore, " per core, at least ", kMinMaxThreads, ")"));
  pool().set_threads(static_cast<int>(std::max<std::int64_t>(n, 0)));
}

void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const int threads = num_threads();
  if (threads <= 1 || n <= grain || in_parallel_region) {
    body(0, n);
    return;
  }
  // a few chunks per thread for balance, none smaller than grain
  std::int64_t nchunks = std::min<std::int64_t>((n + grain - 1) / grain, std::int64_t{threads} * 4);
  const std::int64_t step = (n + nchunks - 1) / nchunks;
  nchunks = (n + step - 1) / step;
  pool().run(nchunks, [&](std::int64_t c) {
    struct Region {
      Region() { in_parallel_region = true; }
      ~Region() { in_parallel_region = false; }
    } region;
    const std::int64_t b = c * step;
    body(b, std::min(n, b + step));
  });
}

}  // namespace cupric::cpu
