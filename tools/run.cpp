// kiln run: runs an ONNX model on .npy inputs and writes one .npy per graph output.
#include <fmt/core.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "kiln/io.h"
#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "tools/commands.h"

namespace fs = std::filesystem;

namespace kiln::tools {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next - at));
    if (next == std::string::npos) return out;
    at = next + 1;
  }
}

int fail(const std::string& message) {
  fmt::print(stderr, "kiln run: {}\n", message);
  return 1;
}

}  // namespace

int run_main(const RunOptions& options) {
  if (!options.dump_dir.empty()) setenv("KILN_DUMP_DIR", options.dump_dir.c_str(), 1);
  Device device = options.device == "cpu" ? Device::cpu() : Device::vulkan();
  if (options.device == "auto") {
    std::string why;
    device = Device::best(&why);
    fmt::print(stderr, "kiln run: device {}: {}\n", device.is_cpu() ? "cpu" : device.name(), why);
  }
  if (!device.is_cpu() && !vulkan_available())
    return fail("no Vulkan device: " + vulkan_status().to_string() + " (use --device cpu)");
  auto model = onnx::Model::load(options.model, device);
  if (!model.ok()) return fail(model.status().to_string());

  // NAME=FILE[,FILE...]: the files of each input, one per run.
  std::map<std::string, std::vector<std::string>> files;
  for (const std::string& spec : options.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("-i expects NAME=FILE.npy, got '" + spec + "'");
    if (!files.emplace(spec.substr(0, eq), split(spec.substr(eq + 1), ',')).second)
      return fail("-i names input '" + spec.substr(0, eq) +
                  "' twice (several files for one input: NAME=A.npy,B.npy)");
  }
  size_t runs = 0;
  for (const onnx::ValueInfo& in : model->inputs()) {
    auto it = files.find(in.name);
    if (it == files.end())
      return fail("no file for graph input '" + in.str() + "' (-i " + in.name + "=FILE.npy)");
    if (runs != 0 && it->second.size() != runs)
      return fail("every input needs the same number of files (one per run)");
    runs = it->second.size();
  }
  for (const auto& [name, list] : files) {
    bool known = false;
    for (const onnx::ValueInfo& in : model->inputs()) known |= in.name == name;
    if (!known) return fail("the model has no input '" + name + "'");
  }
  if (runs == 0) runs = 1;

  // A graph with an op that has no Vulkan kernel runs on the CPU interpreter, with a warning:
  // counted for the stats line (interpreter_fallbacks), the warning still printed.
  std::atomic<uint64_t> fallbacks{0};
  set_log_sink([&fallbacks](LogTopic topic, std::string_view m) {
    if (topic == LogTopic::kWarning && m.find("no device lowering (") != std::string_view::npos)
      ++fallbacks;
    fmt::print(stderr, "[kiln:{}] {}\n", log_topic_name(topic), m);
  });
  struct SinkReset {
    ~SinkReset() { set_log_sink({}); }
  } sink_reset;

  CompileOptions copts{.name = fs::path(options.model).stem().string()};
  if (options.dynamic) copts.dynamic = Dynamic::kTrue;
  copts.check = options.check;
  onnx::CompiledModel compiled(*model, copts);
  for (size_t r = 0; r < runs; ++r) {
    std::vector<Tensor> args;
    for (const onnx::ValueInfo& in : model->inputs()) {
      const std::string& path = files.at(in.name).at(r);
      auto t = load_npy(path, device);
      if (!t.ok()) return fail(t.status().to_string());
      args.push_back(*t);
    }
    auto outputs = compiled.run(args);
    if (!outputs.ok()) return fail(outputs.status().to_string());
    std::string shapes;
    for (size_t o = 0; o < outputs->size(); ++o)
      shapes += fmt::format("{}{} {}", o ? ", " : "", model->outputs()[o].name,
                            (*outputs)[o].meta().str());
    fmt::print("run {}: {}\n", r, shapes);
    if (options.out_dir.empty()) continue;
    const fs::path dir =
        runs == 1 ? fs::path(options.out_dir) : fs::path(options.out_dir) / std::to_string(r);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return fail("cannot create " + dir.string() + ": " + ec.message());
    for (size_t o = 0; o < outputs->size(); ++o) {
      std::string name = model->outputs()[o].name;
      for (char& ch : name)
        if (ch == '/' || ch == '\\' || ch == ':') ch = '_';
      const Status s = save_npy((dir / (name + ".npy")).string(), (*outputs)[o].to(Device::cpu()));
      if (!s.ok()) return fail(s.to_string());
    }
  }
  const CompileStats st = compiled.stats();
  fmt::print(
      "stats: calls={} compiles={} recompiles={} cache_hits={} dynamic_compiles={} "
      "graph_breaks={} interpreter_fallbacks={}\n",
      st.calls, st.compiles, st.recompiles, st.cache_hits, st.dynamic_compiles, st.graph_breaks,
      fallbacks.load());
  if (options.explain) fmt::print("{}", compiled.explain().to_string());
  return 0;
}

}  // namespace kiln::tools
