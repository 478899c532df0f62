// kiln bench: the benchmark suite. Runs the selected benchmarks one after another in this
// process (the cold/warm start benchmark in child processes), each measuring its variants side
// by side, and prints per benchmark the measured values and a headline figure against its goal;
// `--json` prints one document instead. Goals are reported, never enforced: the exit status is
// non-zero only when a benchmark could not run. docs/perf.md explains every figure.
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "kiln/kiln.h"
#include "tools/bench.h"
#include "tools/commands.h"
#include "vk/device.h"

namespace kiln::tools {
namespace bench {

Progress::Progress() : tty_(isatty(fileno(stderr)) != 0) {}
Progress::~Progress() {
  clear();
}
void Progress::show(const std::string& text) {
  if (tty_) {
    fmt::print(stderr, "\r{:<{}}", text, width_);
    width_ = std::max(width_, text.size());
  } else {
    fmt::print(stderr, "kiln bench: {}\n", text);
  }
  std::fflush(stderr);
}
void Progress::clear() {
  if (!tty_ || width_ == 0) return;
  fmt::print(stderr, "\r{:<{}}\r", "", width_);
  std::fflush(stderr);
  width_ = 0;
}

const std::vector<std::string>& benchmark_names() {
  static const std::vector<std::string> names = {"chain",    "copy",  "gemm",  "conv",
                                                 "overhead", "start", "memory"};
  return names;
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string today() {
  std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

nlohmann::json machine() {
  nlohmann::json m = {
      {"cpu", cpu_model()}, {"cores", std::thread::hardware_concurrency()}, {"date", today()}};
  auto d = vk::VulkanDevice::default_device();
  if (d.ok()) {
    m["device"] = (*d)->info().name;
    m["driver"] = (*d)->info().driver_name + " " + (*d)->info().driver_info;
  }
  return m;
}

std::string fmt_value(double v) {
  if (std::isnan(v)) return "n/a";
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string with_unit(double v, const std::string& unit) {
  if (unit.empty() && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  if (std::isnan(v) || unit.empty()) return fmt_value(v);
  return fmt_value(v) + (unit == "x" ? "x" : " " + unit);
}

nlohmann::json number(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

namespace {

std::string goal_text(const Figure& f) {
  if (std::isnan(f.goal)) return "-";
  return f.op + " " + with_unit(f.goal, f.unit);
}

std::string status_text(const Figure& f) {
  std::optional<bool> met = f.met();
  if (!met) return std::isnan(f.goal) ? "" : "n/a";
  if (*met) return "met";
  const double by = f.op == ">=" ? f.goal / f.value : f.value / f.goal;
  return fmt::format("missed ({:.2f}x short)", by);
}

void print_table(const std::vector<Result>& results, const nlohmann::json& m, bool quick) {
  fmt::print("kiln bench{}: {} cores ({}), {} ({}), {}\n\n", quick ? " --quick" : "",
             m.value("cores", 0), m.value("cpu", ""), m.value("device", "no device"),
             m.value("driver", ""), m.value("date", ""));
  for (const Result& r : results) {
    fmt::print("{}: {}\n", r.name, r.title);
    for (const Metric& x : r.metrics)
      fmt::print("    {:<48} {:>14}\n", x.label, with_unit(x.value, x.unit));
    const Figure& f = r.figure;
    fmt::print("  > {:<48} {:>14}   goal {}  {}\n", f.label, with_unit(f.value, f.unit),
               goal_text(f), status_text(f));
    if (!r.error.empty()) fmt::print("  ! error: {}\n", r.error);
    fmt::print("\n");
  }
  fmt::print("{:<10} {:<38} {:>12} {:>12}  {}\n", "benchmark", "figure", "value", "goal", "status");
  for (const Result& r : results) {
    const Figure& f = r.figure;
    fmt::print("{:<10} {:<38} {:>12} {:>12}  {}\n", r.name, f.label, with_unit(f.value, f.unit),
               goal_text(f), r.error.empty() ? status_text(f) : "error");
  }
}

void print_json(const std::vector<Result>& results, const nlohmann::json& m, const BenchOptions& o,
                uint64_t validation_errors, bool ok) {
  using nlohmann::json;
  json benchmarks = json::object();
  for (const Result& r : results) {
    json metrics = json::object(), units = json::object();
    for (const Metric& x : r.metrics) {
      metrics[x.key] = number(x.value);
      units[x.key] = x.unit;
    }
    const Figure& f = r.figure;
    std::optional<bool> met = f.met();
    json figure = {{"key", f.key},
                   {"label", f.label},
                   {"value", number(f.value)},
                   {"unit", f.unit},
                   {"goal_op", f.op},
                   {"goal", number(f.goal)},
                   {"met", met ? json(*met) : json(nullptr)}};
    json j = {{"title", r.title}, {"metrics", metrics}, {"units", units}, {"figure", figure}};
    if (!r.error.empty()) j["error"] = r.error;
    benchmarks[r.name] = std::move(j);
  }
  json doc = {{"machine", m},
              {"quick", o.quick},
              {"repeat", o.repeat},
              {"benchmarks", benchmarks},
              {"validation_errors", validation_errors},
              {"ok", ok}};
  fmt::print("{}\n", doc.dump(2));
}

}  // namespace
}  // namespace bench

int bench_main(const BenchOptions& o) {
  using namespace bench;
  if (!o.child.empty()) return child_main(o.child, o.child_config);
  try {
    if (!vulkan_available()) {
      fmt::print(stderr, "kiln bench: no Vulkan device: {}\n", vulkan_status().to_string());
      return 1;
    }
    std::vector<std::string> selected;
    for (const std::string& name : benchmark_names())
      if (o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end())
        selected.push_back(name);
    auto wants = [&](const char* name) {
      return std::find(selected.begin(), selected.end(), name) != selected.end();
    };
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();

    Progress progress;
    Context ctx{.quick = o.quick, .repeat = o.repeat, .progress = &progress};
    std::vector<Result> results;
    if (wants("chain") || wants("copy"))
      for (Result& r : bench_chain_and_copy(ctx, wants("chain"), wants("copy")))
        results.push_back(std::move(r));
    if (wants("gemm")) results.push_back(bench_gemm(ctx));
    if (wants("conv")) results.push_back(bench_conv(ctx));
    if (wants("overhead")) results.push_back(bench_overhead(ctx));
    if (wants("start")) {
      if (self.empty()) {
        Result r{.name = "start", .title = "cold vs warm start"};
        r.error = "cannot find this executable (/proc/self/exe)";
        results.push_back(std::move(r));
      } else {
        results.push_back(bench_start(ctx, self));
      }
    }
    if (wants("memory")) results.push_back(bench_memory(ctx));
    progress.clear();

    bool ok = true;
    for (const Result& r : results) {
      ok &= r.error.empty();
      if (!r.error.empty() && o.json) fmt::print(stderr, "kiln bench: {}: {}\n", r.name, r.error);
    }
    const uint64_t validation_errors = runtime_counters().validation_errors;
    const nlohmann::json m = machine();
    if (o.json) {
      print_json(results, m, o, validation_errors, ok);
    } else {
      print_table(results, m, o.quick);
      if (validation_errors)
        fmt::print("validation errors: {} (KILN_VALIDATE)\n", validation_errors);
    }
    return ok ? 0 : 1;
  } catch (const Error& e) {
    fmt::print(stderr, "\nkiln bench: {}\n", e.what());
    return 1;
  }
}

}  // namespace kiln::tools
