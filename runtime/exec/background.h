/// \file background.h
/// The worker threads that compile device code off the caller's thread
/// (CompileOptions::background). Jobs run in the order they were queued; each one compiles one
/// graph segment and swaps it in when ready (exec/executable.h).
///
/// The pool is created at the first background compile and stopped at process exit: a job
/// running then finishes, queued ones are dropped (their executables stay on the interpreter).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class BackgroundCompiler {
 public:
  /// The process-wide pool: KILN_COMPILE_THREADS workers, or half the hardware threads
  /// (at least 1, at most 4).
  static BackgroundCompiler& instance();

  explicit BackgroundCompiler(size_t threads);
  ~BackgroundCompiler();
  BackgroundCompiler(const BackgroundCompiler&) = delete;
  BackgroundCompiler& operator=(const BackgroundCompiler&) = delete;

  void enqueue(std::function<void()> job);
  /// Jobs queued or running.
  size_t pending() const;
  /// While held, queued jobs wait (a job already running finishes): lets tests observe the
  /// calls served before a swap deterministically.
  void hold(bool on);
  size_t threads() const { return threads_.size(); }

 private:
  void work();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  size_t running_ = 0;
  bool stop_ = false;
  bool held_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kiln
