// The interpreter's worker threads (parallel.h): a queue of ranges served by cpu_threads() - 1
// workers started on first use and kept for the life of the process.
#include "eager/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <sched.h>

namespace kiln::eager {
namespace {

/// Polls `ready` until it holds or `spin` has passed; returns whether it held. It yields the
/// core between polls: a loop of `pause` instructions instead made mobilenet_v3 at 1x64x64 on
/// the interpreter 1.6x slower on a 2-core VM (the hypervisor descheduling a vCPU that spins).
template <typename Ready>
bool poll_until(std::chrono::microseconds spin, Ready ready) {
  if (spin.count() == 0) return ready();
  const auto until = std::chrono::steady_clock::now() + spin;
  for (;;) {
    if (ready()) return true;
    std::this_thread::yield();
    if (std::chrono::steady_clock::now() >= until) return ready();
  }
}

thread_local bool tl_in_parallel = false;  // a worker, or a caller inside parallel_for

/// How long an idle worker polls for the next job before it sleeps: KILN_CPU_SPIN_US, default
/// 100 microseconds. The interpreter submits one node's ranges after another, microseconds
/// apart; a sleeping worker takes 20-60 microseconds to wake (measured on a 2-core VM), longer
/// than many of those nodes run, so without the poll the caller ran most of their ranges alone.
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds t = [] {
    if (const char* v = std::getenv("KILN_CPU_SPIN_US"); v != nullptr && *v != '\0')
      return std::chrono::microseconds(std::clamp(std::atoi(v), 0, 100000));
    // Not where the threads outnumber the CPUs this process may run on (an affinity mask or
    // cpuset smaller than the machine): polling workers would take turns with the caller.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < cpu_threads())
      return std::chrono::microseconds(0);
    return std::chrono::microseconds(100);
  }();
  return t;
}

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
      queued_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_one();
  }

 private:
  void serve() {
    tl_in_parallel = true;
    const auto spin = spin_time();
    for (;;) {
      // Poll the queue for a while before sleeping on it (spin_time()).
      poll_until(spin, [this] { return queued_.load(std::memory_order_acquire) != 0; });
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      job();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::atomic<int64_t> queued_{0};  // jobs_.size(), readable without the lock
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
  const int threads = cpu_threads();
  const int64_t parts = std::min<int64_t>(threads, n / grain);
  if (parts <= 1 || tl_in_parallel) {
    if (n > 0) fn(0, n);
    return;
  }
  // Ranges are claimed from a counter, by the caller as well as by the workers, so a worker that
  // is slow to wake (its core busy elsewhere) leaves its ranges to the caller instead of holding
  // the call up. Up to 4 ranges per thread (each of at least `grain` iterations) even out the
  // split. A worker that wakes after every range is claimed touches only the shared state; the
  // caller returns once every claimed range is done.
  struct State {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};  // ranges finished
    int64_t chunks = 0, n = 0;
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    std::mutex mu;
    std::condition_variable all_done;
    /// Runs claimed ranges until none is left; returns how many it ran.
    int64_t drain() {
      int64_t ran = 0;
      for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks; ++ran)
        (*fn)(n * c / chunks, n * (c + 1) / chunks);
      return ran;
    }
    void finished(int64_t ran) {
      if (ran == 0) return;
      if (done.fetch_add(ran, std::memory_order_acq_rel) + ran != chunks) return;
      // The last range: wake the caller if it sleeps (under mu, so that a caller between its
      // check and its wait cannot miss it).
      std::lock_guard<std::mutex> lock(mu);
      all_done.notify_one();
    }
    bool all_finished() const { return done.load(std::memory_order_acquire) == chunks; }
  };
  auto state = std::make_shared<State>();
  state->chunks = std::min<int64_t>(parts * 4, n / grain);
  state->n = n;
  state->fn = &fn;
  for (int64_t p = 1; p < parts; ++p) {
    workers().submit([state] { state->finished(state->drain()); });
  }
  tl_in_parallel = true;
  const int64_t ran = state->drain();
  tl_in_parallel = false;
  state->done.fetch_add(ran, std::memory_order_acq_rel);
  // The workers' last ranges usually end within microseconds of the caller's: poll for them
  // before sleeping (a woken thread takes 20-60 microseconds on a VM).
  if (poll_until(spin_time(), [&] { return state->all_finished(); })) return;
  std::unique_lock<std::mutex> lock(state->mu);
  state->all_done.wait(lock, [&] { return state->all_finished(); });
}

}  // namespace kiln::eager
