#include "exec/background.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/platform.h"
#include "kiln/logging.h"

namespace kiln {

BackgroundCompiler& BackgroundCompiler::instance() {
  static BackgroundCompiler pool([] {
    if (const char* v = std::getenv("KILN_COMPILE_THREADS"); v && *v) {
      const long n = std::strtol(v, nullptr, 10);
      if (n >= 1 && n <= 64) return static_cast<size_t>(n);
      log(LogTopic::kWarning, std::string("KILN_COMPILE_THREADS=") + v +
                                  " is not a number in [1, 64]; using the default");
    }
    const size_t hw = std::max(1U, std::thread::hardware_concurrency());
    return std::clamp<size_t>(hw / 2, 1, 4);
  }());
  return pool;
}

BackgroundCompiler::BackgroundCompiler(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
    threads_.emplace_back([this] { work(); });
}

BackgroundCompiler::~BackgroundCompiler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BackgroundCompiler::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

size_t BackgroundCompiler::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size() + running_;
}

void BackgroundCompiler::hold(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = on;
  }
  wake_.notify_all();
}

void BackgroundCompiler::work() {
  // Compiles yield to the threads that serve calls: this worker (and the threads it starts)
  // runs at a lower priority (nice +19, the lowest; Linux sets it per thread).
  if (const std::string why = platform::lower_thread_priority(); !why.empty())
    log(LogTopic::kCompile, "background compiler: setpriority failed: " + why);
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stop_ || (!held_ && !jobs_.empty()); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job();  // jobs catch their own errors (a failed compile leaves the interpreter serving)
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
  }
}

}  // namespace kiln
