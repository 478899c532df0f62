/// \file bench_util.h
/// Shared pieces of the Google Benchmark binaries.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace kiln::bench {

/// Console output plus each benchmark's real time, so that a binary can print ratios of
/// benchmarks measured side by side in one run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration) times_[r.benchmark_name()] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  /// Prints "label: slow / fast = R x (a ms vs b ms)" when both ran.
  void print_ratio(const std::string& label, const std::string& slow,
                   const std::string& fast) const {
    auto s = times_.find(slow), f = times_.find(fast);
    if (s == times_.end() || f == times_.end()) return;
    std::printf("\n%s: %.2fx (%.2f ms vs %.2f ms)\n", label.c_str(), s->second / f->second,
                s->second, f->second);
  }

 private:
  std::map<std::string, double> times_;
};

}  // namespace kiln::bench
