/// \file bench.h
/// `kiln bench`: the benchmark suite's pieces (tools/bench*.cpp). Each benchmark measures its
/// variants side by side in one process and returns a Result: the measured values and one
/// headline figure (usually a ratio) with its goal. Timings are never asserted.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tools::bench {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One measured value. NaN means "not available" (printed as n/a, null in JSON).
struct Metric {
  std::string key;    // JSON name, e.g. "fused_ms"
  std::string label;  // table text, e.g. "fused (1 kernel)"
  double value = kNaN;
  std::string unit;  // "ms", "GB/s", "us", "MiB", "" (a count)
};

/// The headline figure of a benchmark and its goal.
struct Figure {
  std::string key;    // JSON name, e.g. "unfused_over_fused"
  std::string label;  // table text
  double value = kNaN;
  std::string unit;  // "x" for ratios
  std::string op;    // ">=" or "<=": the figure meets the goal when `value op goal`
  double goal = kNaN;
  std::optional<bool> met() const {
    if (std::isnan(value) || std::isnan(goal)) return std::nullopt;
    return op == ">=" ? value >= goal : value <= goal;
  }
};

struct Result {
  std::string name;   // "chain", "copy", "gemm", "overhead", "start", "memory"
  std::string title;  // one line: what was measured, at which size
  std::vector<Metric> metrics;
  Figure figure;
  std::string error;  // set when the benchmark could not run; metrics may be partial
  void add(std::string key, std::string label, double value, std::string unit) {
    metrics.push_back({std::move(key), std::move(label), value, std::move(unit)});
  }
};

/// One line on stderr saying what runs now: rewritten in place on a terminal, one line per
/// step otherwise (CI logs).
class Progress {
 public:
  Progress();
  ~Progress();
  void show(const std::string& text);
  void clear();

 private:
  bool tty_;
  size_t width_ = 0;
};

struct Context {
  bool quick = false;
  int repeat = 0;  // timed repetitions per variant; 0: the benchmark's default
  Progress* progress = nullptr;
  int reps(int full, int quick_reps) const {
    return repeat > 0 ? repeat : quick ? quick_reps : full;
  }
  void show(const std::string& text) const {
    if (progress) progress->show(text);
  }
};

/// The machine: CPU model, cores, date, and the Vulkan device and driver when there is one.
nlohmann::json machine();
/// A value for tables: 3 significant digits, "n/a" for NaN; with_unit appends the unit.
std::string fmt_value(double v);
std::string with_unit(double v, const std::string& unit);
/// NaN as null, else the number.
nlohmann::json number(double v);

/// Every benchmark's name, in run order.
const std::vector<std::string>& benchmark_names();

// tools/bench_kernels.cpp: "chain" (fused vs unfused 6-op chain) and "copy" (the chain's
// bandwidth against a copy of the same bytes) share inputs and run interleaved; "gemm" (with
// the host's FMA peak where the device is a CPU implementation); "conv" (a dense 3x3 conv on
// the device and on the interpreter).
std::vector<Result> bench_chain_and_copy(const Context& ctx, bool chain, bool copy);
Result bench_gemm(const Context& ctx);
Result bench_conv(const Context& ctx);

// tools/bench_peak.cpp: the host CPU's FP32 FMA peak, all `threads` running FMA chains at once
// (GFLOP/s; NaN where the CPU or the build has no such vectors).
struct FmaPeak {
  int threads = 0;
  double gflops_256 = kNaN;     // 256-bit vectors (AVX2 + FMA): lavapipe's default width
  double gflops_widest = kNaN;  // the widest vectors the CPU has
  int widest_bits = 0;
};
FmaPeak measure_fma_peak(int threads, bool quick);

// tools/bench_runtime.cpp: "overhead" (guards + lookup and a whole cached call) and "memory"
// (peak device bytes of the seed encoder against weights + largest live set).
Result bench_overhead(const Context& ctx);
Result bench_memory(const Context& ctx);

// tools/bench_start.cpp: "start" (cold vs warm process start: the seed encoder's first call in
// child processes with empty, then populated, Kiln and Mesa disk caches).
Result bench_start(const Context& ctx, const std::string& self_exe);
/// The child side: `kiln bench --child first-call --child-config full|small` prints one JSON
/// line with the first call's latency.
int child_main(const std::string& mode, const std::string& config);

}  // namespace kiln::tools::bench
