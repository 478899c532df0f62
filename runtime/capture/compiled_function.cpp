// The compile cache of one compiled function: guarded programs, trace on miss, replay on hit,
// the recompile policy, and explain.
#include <chrono>

#include "capture/dump.h"
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
    Program program;
    double compile_ms = 0;
  };

  explicit CompiledCore(CompileOptions o) : options(std::move(o)) {}

  std::vector<Tensor> call(const CallArgs& args, const ErasedFn& fn);

  CompileOptions options;
  CompileStats stats;
  std::vector<Entry> entries;
  SegmentCache segments;
  std::vector<std::string> recompile_reasons;

 private:
  std::vector<Tensor> trace(const CallArgs& args, const ErasedFn& fn);
  std::string miss_reason(const CallArgs& args, const std::vector<std::string>& value_failures);
};

namespace {

std::vector<Tensor> lock_constants(const std::vector<CapturedConstant>& constants) {
  std::vector<Tensor> out;
  for (const CapturedConstant& c : constants) {
    auto t = c.tensor.lock();
    if (!t) throw Error(internal_error("captured tensor vanished after its guard passed"));
    out.emplace_back(std::move(t));
  }
  return out;
}

}  // namespace

std::string CompiledCore::miss_reason(const CallArgs& args,
                                      const std::vector<std::string>& value_failures) {
  bool verbose = log_enabled(LogTopic::kRecompilesVerbose);
  std::string msg;
  size_t v = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    std::vector<int> failing = e.guards.all_failures(args, e.constants);
    if (failing.empty()) {  // input guards passed: a value guard inside the program failed
      msg += "\n  entry " + std::to_string(i) + ": " + value_failures.at(v++);
      continue;
    }
    if (!verbose) failing.resize(1);
    for (int f : failing)
      msg +=
          "\n  entry " + std::to_string(i) + ": " + e.guards.describe_failure(f, args, e.constants);
  }
  return msg;
}

std::vector<Tensor> CompiledCore::trace(const CallArgs& args, const ErasedFn& fn) {
  auto start = std::chrono::steady_clock::now();
  std::optional<Device> device;
  for (size_t i = 0; i < args.tensors.size(); ++i) {
    const Tensor& a = args.tensors[i];
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
  }
  TraceContext ctx(args.tensors, device.value_or(Device::cpu()), options, &segments);
  Program program;
  std::vector<Tensor> result;
  {
    TraceScope scope(&ctx);
    std::vector<Tensor> placeholders;
    for (size_t i = 0; i < args.tensors.size(); ++i) placeholders.push_back(ctx.argument(i));
    std::vector<Tensor> outs = fn(placeholders, args.scalars);
    program = ctx.finish(outs);
    for (int32_t s : program.outputs) result.push_back(ctx.slot_value(s));
  }
  Entry e;
  e.constants = ctx.constants;
  e.guards = GuardSet::build(args, e.constants, options.name);
  e.program = std::move(program);
  e.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  stats.graph_breaks += e.program.breaks().size();
  if (log_enabled(LogTopic::kGraph)) {
    for (const ProgramStep& s : e.program.steps)
      if (s.kind == ProgramStep::Kind::kSegment)
        log(LogTopic::kGraph, "'" + options.name + "' graph:\n" + s.exe->graph().to_string());
  }
  if (log_enabled(LogTopic::kGuards))
    log(LogTopic::kGuards, "'" + options.name + "' guards:\n" + e.guards.to_string(e.constants));
  if (log_enabled(LogTopic::kPerf))
    log(LogTopic::kPerf,
        "'" + options.name + "' traced and compiled in " + std::to_string(e.compile_ms) + " ms");
  int segment = 0;
  for (const ProgramStep& s : e.program.steps)
    if (s.kind == ProgramStep::Kind::kSegment)
      dump_compile(options.name + (segment++ ? "_g" + std::to_string(segment - 1) : ""),
                   stats.compiles, *s.exe, e.guards.to_string(e.constants));
  entries.push_back(std::move(e));
  return result;
}

std::vector<Tensor> CompiledCore::call(const CallArgs& args, const ErasedFn& fn) {
  ++stats.calls;
  std::vector<std::string> value_failures;
  for (Entry& e : entries) {
    if (e.guards.first_failure(args, e.constants) >= 0) continue;
    ValueGuardFailure failure;
    auto out = e.program.replay(args.tensors, lock_constants(e.constants), &failure);
    if (out) {
      ++stats.cache_hits;
      return std::move(*out);
    }
    value_failures.push_back(failure.description);
  }
  if (!entries.empty()) {
    std::string reason = miss_reason(args, value_failures);
    if (options.error_on_recompile)
      throw Error(invalid_argument("'" + options.name +
                                   "' would recompile (error_on_recompile is set):" + reason));
    if (static_cast<int>(stats.recompiles) >= options.recompile_limit) {
      if (options.on_recompile_limit == RecompileLimitPolicy::kError)
        throw Error(resource_exhausted("'" + options.name + "' hit its recompile limit (" +
                                       std::to_string(options.recompile_limit) + "):" + reason));
      if (!stats.recompile_limit_hit) {
        stats.recompile_limit_hit = true;
        log(LogTopic::kWarning,
            "'" + options.name + "' hit its recompile limit (" +
                std::to_string(options.recompile_limit) + "); calls that miss its " +
                std::to_string(entries.size()) +
                " cached entries now run EAGERLY (op by op, no fusion). Last miss:" + reason);
      }
      ++stats.eager_calls;
      return fn(args.tensors, args.scalars);
    }
    log(log_enabled(LogTopic::kRecompilesVerbose) ? LogTopic::kRecompilesVerbose
                                                  : LogTopic::kRecompiles,
        "recompiling '" + options.name + "' (compile #" + std::to_string(stats.compiles + 1) +
            "), triggered by:" + reason);
    recompile_reasons.push_back(reason);
    ++stats.recompiles;
  }
  std::vector<Tensor> out = trace(args, fn);
  ++stats.compiles;
  return out;
}

namespace detail {

std::shared_ptr<CompiledCore> make_core(CompileOptions options) {
  return std::make_shared<CompiledCore>(std::move(options));
}

std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& tensors,
                         const std::vector<double>& scalars, const ErasedFn& fn) {
  return core.call(CallArgs{tensors, scalars}, fn);
}

CompileStats stats(const CompiledCore& core) {
  return core.stats;
}

std::vector<EntryInfo> entries(const CompiledCore& core) {
  std::vector<EntryInfo> out;
  for (const auto& e : core.entries) {
    EntryInfo info;
    info.guards = e.guards.to_string(e.constants);
    info.compile_ms = e.compile_ms;
    for (const ProgramStep& s : e.program.steps) {
      if (s.kind != ProgramStep::Kind::kSegment) {
        info.breaks.push_back(s.where.reason + (s.where.loc.empty() ? "" : " at " + s.where.loc));
        continue;
      }
      ++info.graph_count;
      info.graph += s.exe->graph().to_string();
      info.ops_per_graph.push_back(s.exe->graph().op_count());
      info.on_device |= s.exe->on_device();
      if (const KernelPlan* plan = s.exe->plan())
        for (const Kernel& k : plan->kernels) info.kernels.push_back(k.name);
    }
    out.push_back(std::move(info));
  }
  return out;
}

ExplainReport explain(const CompiledCore& core) {
  ExplainReport r;
  r.name = core.options.name;
  r.stats = core.stats;
  r.entries = entries(core);
  r.recompile_reasons = core.recompile_reasons;
  for (const EntryInfo& e : r.entries) r.compile_ms += e.compile_ms;
  if (!r.entries.empty()) {
    const EntryInfo& last = r.entries.back();
    r.graph_count = static_cast<size_t>(last.graph_count);
    r.graph_break_count = last.breaks.size();
    r.break_reasons = last.breaks;
    r.ops_per_graph = last.ops_per_graph;
    r.guards = last.guards;
  }
  return r;
}

}  // namespace detail

std::string ExplainReport::to_string() const {
  std::string s = "explain '" + name + "': " + std::to_string(graph_count) + " graph(s), " +
                  std::to_string(graph_break_count) + " graph break(s)\n";
  for (size_t i = 0; i < break_reasons.size(); ++i)
    s += "  break " + std::to_string(i + 1) + ": " + break_reasons[i] + "\n";
  for (size_t i = 0; i < ops_per_graph.size(); ++i)
    s += "  graph " + std::to_string(i) + ": " + std::to_string(ops_per_graph[i]) + " op(s)\n";
  s += "calls " + std::to_string(stats.calls) + ", compiles " + std::to_string(stats.compiles) +
       ", cache hits " + std::to_string(stats.cache_hits) + ", recompiles " +
       std::to_string(stats.recompiles) + ", eager calls " + std::to_string(stats.eager_calls) +
       ", trace+compile time " + std::to_string(compile_ms) + " ms\n";
  for (size_t i = 0; i < recompile_reasons.size(); ++i)
    s += "recompile " + std::to_string(i + 1) + ":" + recompile_reasons[i] + "\n";
  s += "guards of the latest entry:\n" + guards;
  return s;
}

}  // namespace kiln
