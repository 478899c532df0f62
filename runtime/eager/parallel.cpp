// The interpreter's worker threads (parallel.h): a queue of ranges served by cpu_threads() - 1
// workers started on first use and kept for the life of the process.
#include "eager/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace kiln::eager {
namespace {

thread_local bool tl_in_parallel = false;  // a worker, or a caller inside parallel_for

class Workers {
 public:
  explicit Workers(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { serve(); });
    for (std::thread& t : threads_) t.detach();  // kept until the process ends
  }
  void submit(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  void serve() {
    tl_in_parallel = true;
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
};

Workers& workers() {
  // Never destroyed: detached workers may still wait on its queue while the process exits.
  static Workers* w = new Workers(cpu_threads() - 1);  // NOLINT(cppcoreguidelines-owning-memory)
  return *w;
}

}  // namespace

int cpu_threads() {
  static const int n = [] {
    if (const char* v = std::getenv("KILN_CPU_THREADS"); v != nullptr && *v != '\0') {
      const int k = std::atoi(v);
      if (k >= 1) return std::min(k, 256);
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(std::min(hw, 256u));
  }();
  return n;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t parts = std::min<int64_t>(cpu_threads(), n / grain);
  if (parts <= 1 || tl_in_parallel) {
    if (n > 0) fn(0, n);
    return;
  }
  std::mutex mu;
  std::condition_variable done;
  int64_t remaining = parts - 1;
  const auto bound = [&](int64_t p) { return n * p / parts; };
  for (int64_t p = 1; p < parts; ++p) {
    workers().submit([&, p] {
      fn(bound(p), bound(p + 1));
      std::lock_guard<std::mutex> lock(mu);
      if (--remaining == 0) done.notify_one();
    });
  }
  tl_in_parallel = true;
  fn(0, bound(1));
  tl_in_parallel = false;
  std::unique_lock<std::mutex> lock(mu);
  done.wait(lock, [&] { return remaining == 0; });
}

}  // namespace kiln::eager
