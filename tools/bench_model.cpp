// kiln bench MODEL.onnx: one ONNX model on .npy inputs. Import time, the first call (trace,
// compile, run), steady latency over N calls (median, p90), kernels and graphs, GFLOP/s when
// the FLOPs per call are given, per-kernel GPU times from timestamp queries (the runtime's
// `perf` log, captured for a few extra calls so the timed calls run without timestamps), and
// optionally a comparison of the outputs with reference .npy files.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/io.h"
#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "tools/bench.h"
#include "tools/commands.h"

namespace kiln::tools {
namespace {

using bench::Clock;
using bench::kNaN;
using bench::ms_since;
using nlohmann::json;

/// NAME=FILE specs as a map; an error names the bad spec.
Expected<std::map<std::string, std::string>> parse_specs(const std::vector<std::string>& specs,
                                                         const char* flag) {
  std::map<std::string, std::string> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return invalid_argument(std::string(flag) + " expects NAME=FILE.npy, got '" + spec + "'");
    if (!out.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second)
      return invalid_argument(std::string(flag) + " names '" + spec.substr(0, eq) + "' twice");
  }
  return out;
}

double percentile(std::vector<double> v, double p) {  // nearest rank
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

/// One dispatch of a profiled call: its graph segment, position in that segment's recording,
/// kernel name and mean GPU time over the profiled calls.
struct KernelTime {
  size_t segment = 0;
  size_t index = 0;
  std::string name;
  double ms = 0;
};

/// The replay messages of the `perf` log: "'fn' replay: N dispatch(es), W ms wall, arena B
/// bytes" followed by one "  label: T ms" line per dispatch. Returns false when `message` is
/// not a replay message.
bool parse_replay(const std::string& message, std::vector<KernelTime>& dispatches) {
  std::istringstream in(message);
  std::string line;
  if (!std::getline(in, line) || line.find("' replay: ") == std::string::npos) return false;
  while (std::getline(in, line)) {
    const size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(' ');
    KernelTime k{.index = dispatches.size(), .name = line.substr(start, colon - start)};
    k.ms = std::strtod(line.c_str() + colon + 2, nullptr);
    dispatches.push_back(std::move(k));
  }
  return true;
}

/// Runs `calls` calls with the `perf` log on and returns each dispatch's mean GPU time (empty
/// when the device reports no timestamps). Other log topics still reach stderr.
std::vector<KernelTime> profile_kernels(const std::function<void()>& call, int calls) {
  const char* env = std::getenv("KILN_LOGS");
  const std::string user = env ? env : "";
  std::mutex mu;
  std::vector<std::vector<KernelTime>> segments;  // of the current call
  set_log_sink([&](LogTopic topic, std::string_view message) {
    std::vector<KernelTime> d;
    if (topic == LogTopic::kPerf && parse_replay(std::string(message), d)) {
      std::lock_guard lock(mu);
      segments.push_back(std::move(d));
      return;
    }
    if (topic != LogTopic::kPerf || user.find("perf") != std::string::npos || user == "all")
      fmt::print(stderr, "[kiln:{}] {}\n", log_topic_name(topic), message);
  });
  set_logs(user.empty() ? "perf" : user + ",perf");
  std::vector<KernelTime> total;
  int counted = 0;
  try {
    for (int c = 0; c < calls; ++c) {
      segments.clear();
      call();
      std::vector<KernelTime> flat;
      for (size_t s = 0; s < segments.size(); ++s)
        for (KernelTime& k : segments[s]) {
          k.segment = s;
          flat.push_back(std::move(k));
        }
      if (flat.empty()) continue;
      if (total.empty()) {
        total = std::move(flat);
      } else if (flat.size() == total.size()) {
        for (size_t i = 0; i < flat.size(); ++i) total[i].ms += flat[i].ms;
      } else {
        continue;  // a different recording (should not happen at one size): not averaged in
      }
      ++counted;
    }
  } catch (...) {
    set_logs(user);
    set_log_sink({});
    throw;
  }
  set_logs(user);
  set_log_sink({});
  for (KernelTime& k : total) k.ms /= std::max(counted, 1);
  return total;
}

/// |actual - expected| <= tol * (1 + |expected|) elementwise, in f32.
json compare(const std::string& name, const Tensor& actual, const std::string& path, double tol) {
  json j = {{"name", name}, {"file", path}};
  auto expected = load_npy(path);
  if (!expected.ok()) {
    j["error"] = expected.status().to_string();
    j["match"] = false;
    return j;
  }
  const Tensor a = actual.to(Device::cpu());
  if (a.meta().shape != expected->meta().shape) {
    j["error"] = "shape " + a.meta().str() + ", expected " + expected->meta().str();
    j["match"] = false;
    return j;
  }
  const std::vector<float> x = cast(a, DType::kF32).to_vector<float>();
  const std::vector<float> y = cast(*expected, DType::kF32).to_vector<float>();
  double max_abs = 0, worst = 0;
  bool finite = true;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) continue;  // also equal infinities
    const double d = std::fabs(double(x[i]) - double(y[i]));
    if (std::isnan(d)) {  // NaN on one side only, or infinities that differ
      if (!(std::isnan(x[i]) && std::isnan(y[i]))) finite = false;
      continue;
    }
    max_abs = std::max(max_abs, d);
    worst = std::max(worst, d / (1 + std::fabs(double(y[i]))));
  }
  j["max_abs_diff"] = max_abs;
  j["max_scaled_diff"] = worst;
  j["match"] = finite && worst <= tol;
  return j;
}

void print_table(const json& doc, const std::vector<KernelTime>& top,
                 const std::vector<std::pair<std::string, std::pair<int, double>>>& by_name) {
  const json& m = doc["machine"];
  fmt::print("kiln bench {} on {}: {} cores ({}), {} ({}), {}\n", doc["model"].get<std::string>(),
             doc["device"].get<std::string>(), m.value("cores", 0), m.value("cpu", ""),
             m.value("device", "no device"), m.value("driver", ""), m.value("date", ""));
  if (doc.contains("device_reason") && doc["device_reason"].is_string())
    fmt::print("  device: {}\n", doc["device_reason"].get<std::string>());
  for (const auto& [name, in] : doc["inputs"].items())
    fmt::print("  input {}: {} ({})\n", name, in["meta"].get<std::string>(),
               in["file"].get<std::string>());
  auto num = [](const json& v) { return v.is_number() ? v.get<double>() : kNaN; };
  auto row = [&](const std::string& label, const json& v, const std::string& unit) {
    fmt::print("    {:<40} {:>14}\n", label, bench::with_unit(num(v), unit));
  };
  row("import (parse + upload weights)", doc["load_ms"], "ms");
  row("first call (trace + compile + run)", doc["first_call_ms"], "ms");
  row("  of which trace + compile", doc["compile_ms"], "ms");
  const json& st = doc["steady"];
  row(fmt::format("steady median ({} calls)", st["calls"].get<int>()), st["median_ms"], "ms");
  row("steady p90", st["p90_ms"], "ms");
  row("steady min", st["min_ms"], "ms");
  row("GFLOP per call", doc["gflop"], "");
  row("GFLOP/s (median)", doc["gflops"], "GFLOP/s");
  row("compiles", doc["compiles"], "");
  row("graphs", doc["graphs"], "");
  row("graph breaks", doc["graph_breaks"], "");
  row("kernels", doc["kernels"], "");
  const json& p = doc["profile"];
  if (!p.is_null()) {
    row(fmt::format("GPU time per call, summed ({} calls)", p["calls"].get<int>()), p["gpu_ms"],
        "ms");
    fmt::print("\n  top {} kernels by GPU time:\n", top.size());
    fmt::print("    {:<8} {:<36} {:>10} {:>7}\n", "kernel", "name", "ms", "share");
    const double total = num(p["gpu_ms"]);
    for (const KernelTime& k : top)
      fmt::print("    {:<8} {:<36} {:>10} {:>6.1f}%\n",
                 p["segments"].get<int>() > 1 ? fmt::format("g{}#{}", k.segment, k.index)
                                              : fmt::format("#{}", k.index),
                 k.name, bench::fmt_value(k.ms), 100 * k.ms / total);
    fmt::print("\n  by pipeline (a pipeline serves every dispatch of the same kernel):\n");
    fmt::print("    {:<45} {:>5} {:>10} {:>7}\n", "name", "count", "ms", "share");
    for (const auto& [name, cm] : by_name)
      fmt::print("    {:<45} {:>5} {:>10} {:>6.1f}%\n", name, cm.first, bench::fmt_value(cm.second),
                 100 * cm.second / total);
  }
  if (!doc["check"].is_null()) {
    fmt::print("\n  check against the expected outputs (|diff| <= {} * (1 + |expected|)):\n",
               doc["check"]["tol"].get<double>());
    for (const json& o : doc["check"]["outputs"])
      fmt::print(
          "    {:<30} {:<9} max |diff| {}{}\n", o["name"].get<std::string>(),
          o["match"].get<bool>() ? "match" : "MISMATCH",
          o.contains("max_abs_diff") ? bench::fmt_value(o["max_abs_diff"].get<double>()) : "-",
          o.contains("error") ? " (" + o["error"].get<std::string>() + ")" : "");
  }
  if (doc["validation_errors"].get<uint64_t>())
    fmt::print("validation errors: {} (KILN_VALIDATE)\n", doc["validation_errors"].get<uint64_t>());
}

int fail(const std::string& message) {
  fmt::print(stderr, "kiln bench: {}\n", message);
  return 1;
}

}  // namespace

int bench_model_main(const BenchModelOptions& o) {
  try {
    Device device = o.device == "cpu" ? Device::cpu() : Device::vulkan();
    std::string device_reason;  // --device auto: why Device::best() chose it
    if (o.device == "auto") device = Device::best(&device_reason);
    if (!device.is_cpu() && !vulkan_available())
      return fail("no Vulkan device: " + vulkan_status().to_string() + " (use --device cpu)");
    auto input_files = parse_specs(o.inputs, "-i");
    if (!input_files.ok()) return fail(input_files.status().to_string());
    auto expect_files = parse_specs(o.expects, "--expect");
    if (!expect_files.ok()) return fail(expect_files.status().to_string());

    auto t0 = Clock::now();
    auto model = onnx::Model::load(o.model, device);
    if (!model.ok()) return fail(model.status().to_string());
    const double load_ms = ms_since(t0);

    json inputs = json::object();
    std::vector<Tensor> args;
    for (const onnx::ValueInfo& in : model->inputs()) {
      auto it = input_files->find(in.name);
      if (it == input_files->end())
        return fail("no file for graph input '" + in.str() + "' (-i " + in.name + "=FILE.npy)");
      auto t = load_npy(it->second, device);
      if (!t.ok()) return fail(t.status().to_string());
      inputs[in.name] = {{"file", it->second}, {"meta", t->meta().str()}};
      args.push_back(*t);
    }
    for (const auto& [name, file] : *input_files)
      if (!inputs.contains(name)) return fail("the model has no input '" + name + "'");
    for (const auto& [name, file] : *expect_files) {
      bool known = false;
      for (const onnx::ValueInfo& out : model->outputs()) known |= out.name == name;
      if (!known) return fail("the model has no output '" + name + "'");
    }

    CompileOptions copts{.name = std::filesystem::path(o.model).stem().string()};
    if (o.dynamic) copts.dynamic = Dynamic::kTrue;
    onnx::CompiledModel compiled(*model, copts);
    std::vector<Tensor> outputs;
    auto call = [&] {
      auto r = compiled.run(args);
      if (!r.ok()) throw Error(r.status());
      outputs = std::move(*r);
    };
    t0 = Clock::now();
    call();
    const double first_ms = ms_since(t0);
    const ExplainReport first = compiled.explain();
    for (int i = 0; i < o.warmup; ++i) call();
    std::vector<double> times;
    for (int i = 0; i < o.repeat; ++i) {
      t0 = Clock::now();
      call();  // a compiled call returns after its submission's fence
      times.push_back(ms_since(t0));
    }
    std::vector<Tensor> steady_outputs = outputs;  // checked below: the replayed path's result
    std::vector<KernelTime> kernels;
    if (!device.is_cpu() && o.profile > 0) kernels = profile_kernels(call, o.profile);

    const ExplainReport ex = compiled.explain();
    const EntryInfo* entry = ex.entries.empty() ? nullptr : &ex.entries.back();
    const double med = bench::median(times);
    json doc = {{"machine", bench::machine()},
                {"model", o.model},
                {"device", device.is_cpu() ? "cpu" : "vulkan"},
                {"device_reason", device_reason.empty() ? json(nullptr) : json(device_reason)},
                {"inputs", inputs},
                {"load_ms", load_ms},
                {"first_call_ms", first_ms},
                {"compile_ms", first.compile_ms},
                {"steady",
                 {{"calls", o.repeat},
                  {"warmup", o.warmup},
                  {"median_ms", bench::number(med)},
                  {"p90_ms", bench::number(percentile(times, 0.9))},
                  {"min_ms", bench::number(percentile(times, 0))},
                  {"times_ms", times}}},
                {"flops", o.flops > 0 ? json(o.flops) : json(nullptr)},
                {"gflop", o.flops > 0 ? json(o.flops / 1e9) : json(nullptr)},
                {"gflops", o.flops > 0 && med > 0 ? json(o.flops / 1e9 / (med / 1e3)) : json()},
                {"compiles", ex.stats.compiles},
                {"graphs", entry ? entry->graph_count : 0},
                {"graph_breaks", ex.graph_break_count},
                {"kernels", entry ? entry->kernels.size() : 0}};
    json outs = json::array();
    for (size_t i = 0; i < steady_outputs.size(); ++i)
      outs.push_back(
          {{"name", model->outputs()[i].name}, {"meta", steady_outputs[i].meta().str()}});
    doc["outputs"] = outs;

    std::vector<KernelTime> top = kernels;
    std::vector<std::pair<std::string, std::pair<int, double>>> by_name;
    if (kernels.empty()) {
      doc["profile"] = nullptr;
    } else {
      double total = 0;
      std::map<std::string, std::pair<int, double>> names;
      for (const KernelTime& k : kernels) {
        total += k.ms;
        names[k.name].first += 1;
        names[k.name].second += k.ms;
      }
      by_name.assign(names.begin(), names.end());
      std::stable_sort(by_name.begin(), by_name.end(), [](const auto& a, const auto& b) {
        return a.second.second > b.second.second;
      });
      std::stable_sort(top.begin(), top.end(),
                       [](const KernelTime& a, const KernelTime& b) { return a.ms > b.ms; });
      if (top.size() > static_cast<size_t>(o.top)) top.resize(static_cast<size_t>(o.top));
      if (by_name.size() > static_cast<size_t>(o.top)) by_name.resize(static_cast<size_t>(o.top));
      json jt = json::array(), jn = json::array();
      for (const KernelTime& k : top)
        jt.push_back({{"segment", k.segment},
                      {"index", k.index},
                      {"name", k.name},
                      {"ms", k.ms},
                      {"share", total > 0 ? k.ms / total : 0}});
      for (const auto& [name, cm] : by_name)
        jn.push_back({{"name", name},
                      {"count", cm.first},
                      {"ms", cm.second},
                      {"share", total > 0 ? cm.second / total : 0}});
      size_t segments = 0;
      for (const KernelTime& k : kernels) segments = std::max(segments, k.segment + 1);
      doc["profile"] = {{"calls", o.profile},   {"dispatches", kernels.size()},
                        {"segments", segments}, {"gpu_ms", total},
                        {"top_kernels", jt},    {"by_name", jn}};
    }

    bool ok = true;
    if (expect_files->empty()) {
      doc["check"] = nullptr;
    } else {
      json checks = json::array();
      bool match = true;
      for (size_t i = 0; i < steady_outputs.size(); ++i) {
        const std::string& name = model->outputs()[i].name;
        auto it = expect_files->find(name);
        if (it == expect_files->end()) continue;
        checks.push_back(compare(name, steady_outputs[i], it->second, o.tol));
        match = match && checks.back()["match"].get<bool>();
      }
      doc["check"] = {{"tol", o.tol}, {"outputs", checks}, {"match", match}};
    }
    const uint64_t validation_errors = runtime_counters().validation_errors;
    doc["validation_errors"] = validation_errors;
    ok = ok && validation_errors == 0;
    doc["ok"] = ok;
    if (o.json)
      fmt::print("{}\n", doc.dump(2));
    else
      print_table(doc, top, by_name);
    return ok ? 0 : 1;
  } catch (const Error& e) {
    return fail(e.what());
  }
}

}  // namespace kiln::tools
