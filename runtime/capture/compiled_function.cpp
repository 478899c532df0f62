// The compile cache of one compiled function: guarded entries, trace on miss, replay on hit.
#include <chrono>

#include "capture/dump.h"
#include "capture/executable.h"
#include "capture/guards.h"
#include "capture/trace.h"
#include "kiln/compile.h"
#include "kiln/logging.h"

namespace kiln {

class CompiledCore {
 public:
  struct Entry {
    GuardSet guards;
    std::vector<CapturedConstant> constants;
    std::shared_ptr<Executable> exe;
  };

  explicit CompiledCore(CompileOptions o) : options(std::move(o)) {}

  std::vector<Tensor> call(const std::vector<Tensor>& args, const ErasedFn& fn);

  CompileOptions options;
  CompileStats stats;
  std::vector<Entry> entries;

 private:
  std::vector<Tensor> replay(Entry& e, const std::vector<Tensor>& args);
  Entry trace(const std::vector<Tensor>& args, const ErasedFn& fn);
  void log_recompile(const std::vector<Tensor>& args);
};

std::vector<Tensor> CompiledCore::replay(Entry& e, const std::vector<Tensor>& args) {
  std::vector<Tensor> constants;
  for (const CapturedConstant& c : e.constants) {
    auto t = c.tensor.lock();
    if (!t) throw Error(internal_error("captured tensor vanished after its guard passed"));
    constants.emplace_back(std::move(t));
  }
  auto result = e.exe->run(args, constants);
  if (!result.ok()) throw Error(result.status().with_context("running '" + options.name + "'"));
  return std::move(result).value();
}

void CompiledCore::log_recompile(const std::vector<Tensor>& args) {
  bool verbose = log_enabled(LogTopic::kRecompilesVerbose);
  if (!log_enabled(LogTopic::kRecompiles) && !verbose) return;
  std::string msg = "recompiling '" + options.name + "' (compile #" +
                    std::to_string(stats.compiles + 1) + "), triggered by:";
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (verbose) {
      for (int f : e.guards.all_failures(args, e.constants))
        msg += "\n  entry " + std::to_string(i) + ": " +
               e.guards.describe_failure(f, args, e.constants);
    } else {
      int f = e.guards.first_failure(args, e.constants);
      msg +=
          "\n  entry " + std::to_string(i) + ": " + e.guards.describe_failure(f, args, e.constants);
    }
  }
  log(verbose ? LogTopic::kRecompilesVerbose : LogTopic::kRecompiles, msg);
}

CompiledCore::Entry CompiledCore::trace(const std::vector<Tensor>& args, const ErasedFn& fn) {
  auto start = std::chrono::steady_clock::now();
  auto ctx = std::make_shared<TraceContext>();
  std::optional<Device> device;
  std::vector<Tensor> placeholders;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& a = args[i];
    if (!a.defined())
      throw Error(invalid_argument("'" + options.name + "': argument " + std::to_string(i) +
                                   " is undefined"));
    if (a.is_traced())
      throw Error(invalid_argument("'" + options.name + "': argument " + std::to_string(i) +
                                   " is a traced tensor (compiled functions cannot nest)"));
    Device d = a.impl()->literal ? Device::cpu() : a.device();
    if (device && *device != d)
      throw Error(invalid_argument("'" + options.name + "': arguments on different devices (" +
                                   device->str() + " and " + d.str() + " for argument " +
                                   std::to_string(i) + ")"));
    device = d;
    placeholders.push_back(ctx->input(a.meta(), d));
  }
  Graph graph;
  {
    TraceScope scope(ctx);
    std::vector<Tensor> outs = fn(placeholders);
    std::vector<NodeId> out_ids;
    for (const Tensor& o : outs)
      out_ids.push_back(ctx->node_for(o, "output of '" + options.name + "'"));
    ctx->graph.set_outputs(std::move(out_ids));
  }
  if (!device) {
    for (const CapturedConstant& c : ctx->constants) device = c.device;
  }
  Entry e;
  e.constants = ctx->constants;
  e.guards = GuardSet::build(args, e.constants, options.name);
  auto exe = Executable::create(ctx->graph, device.value_or(Device::cpu()), options);
  if (!exe.ok()) throw Error(exe.status());
  e.exe = std::move(exe).value();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (log_enabled(LogTopic::kGraph))
    log(LogTopic::kGraph, "'" + options.name + "' graph:\n" + e.exe->graph().to_string());
  if (log_enabled(LogTopic::kGuards))
    log(LogTopic::kGuards, "'" + options.name + "' guards:\n" + e.guards.to_string(e.constants));
  if (log_enabled(LogTopic::kPerf))
    log(LogTopic::kPerf, "'" + options.name + "' compiled in " + std::to_string(ms) + " ms");
  dump_compile(options.name, stats.compiles, *e.exe, e.guards.to_string(e.constants));
  return e;
}

std::vector<Tensor> CompiledCore::call(const std::vector<Tensor>& args, const ErasedFn& fn) {
  ++stats.calls;
  for (Entry& e : entries) {
    if (e.guards.first_failure(args, e.constants) < 0) {
      ++stats.cache_hits;
      return replay(e, args);
    }
  }
  if (!entries.empty()) log_recompile(args);
  Entry e = trace(args, fn);
  if (!entries.empty()) ++stats.recompiles;
  ++stats.compiles;
  entries.push_back(std::move(e));
  return replay(entries.back(), args);
}

namespace detail {

std::shared_ptr<CompiledCore> make_core(CompileOptions options) {
  return std::make_shared<CompiledCore>(std::move(options));
}

std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& args, const ErasedFn& fn) {
  return core.call(args, fn);
}

CompileStats stats(const CompiledCore& core) {
  return core.stats;
}

std::vector<EntryInfo> entries(const CompiledCore& core) {
  std::vector<EntryInfo> out;
  for (const auto& e : core.entries) {
    EntryInfo info;
    info.graph = e.exe->graph().to_string();
    info.guards = e.guards.to_string(e.constants);
    info.on_device = e.exe->on_device();
    if (const KernelPlan* plan = e.exe->plan())
      for (const Kernel& k : plan->kernels) info.kernels.push_back(k.name);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace detail
}  // namespace kiln
