// The compile cache of one compiled function: guarded programs, trace on miss, replay on hit,
// the recompile policy, and explain.
//
// Threads: any number of calls may run at once. Entries are immutable once published and
// shared (a call replays from a snapshot of the list, without a lock); `mu` guards the list,
// the counters and the recompile reasons. Misses trace one at a time (`trace_mu_`, recursive
// for a host function that calls this function again while it is being traced), and a miss
// first re-checks the entries added while it waited, so that a shape met by several threads at
// once compiles once.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "capture/guards.h"
#include "capture/host_memo.h"
#include "capture/trace.h"
#include "exec/dump.h"
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
    /// False while a segment compiles in the background.
    bool ready() const {
      for (const ProgramStep& s : program.steps)
        if (s.kind == ProgramStep::Kind::kSegment &&
            s.exe->state() == Executable::State::kCompiling)
          return false;
      return true;
    }
  };
  using Entries = std::vector<std::shared_ptr<const Entry>>;

  explicit CompiledCore(CompileOptions o)
      : options(std::move(o)), dump_name(unique_dump_name(options.name)) {}

  std::vector<Tensor> call(const CallArgs& args, const ErasedFn& fn);
  /// Undefined, traced or mixed-device arguments, and calls from inside a trace: clear errors.
  void check_args(const CallArgs& args) const;
  Entries snapshot() const {
    std::lock_guard<std::mutex> lock(mu);
    return entries;
  }

  const CompileOptions options;
  const std::string dump_name;  // KILN_DUMP_DIR folder prefix, unique in the process
  mutable std::mutex mu;        // guards the three below
  CompileStats stats;
  Entries entries;
  std::vector<std::string> recompile_reasons;

 private:
  /// Replays the first of entries[from...] whose guards pass; failed value guards are added
  /// to `value_failures`, hits to the counters.
  std::optional<std::vector<Tensor>> replay_cached(const Entries& all, size_t from,
                                                   const CallArgs& args,
                                                   const std::vector<Tensor>& slot_args,
                                                   HostCallMemo& memo,
                                                   std::vector<std::string>& value_failures);
  std::vector<Tensor> trace(const CallArgs& args, const std::vector<Tensor>& slot_args,
                            const ErasedFn& fn, bool all_changed_dynamic);
  /// True when the recompile past the limit would make some dim symbolic.
  bool symbolic_recompile_helps(const CallArgs& args) const;
  /// Notes which argument dims differ from the first call's (automatic dynamic).
  void observe(const CallArgs& args);
  DynamicSpec dynamic_spec(const CallArgs& args, bool all_changed_dynamic) const;
  bool any_changed() const;
  std::string miss_reason(const CallArgs& args, const Entries& all,
                          const std::vector<std::string>& value_failures) const;

  // Used with trace_mu_ held.
  std::recursive_mutex trace_mu_;
  SegmentCache segments_;
  bool eager_announced_ = false;  // the "now run EAGERLY" warning was logged
  std::vector<Shape> first_shapes_;
  std::vector<std::vector<bool>> changed_;  // per argument, per dim
  std::string pending_reason_;              // the recompile reason of the trace running
};

namespace {

/// A replayed host step runs as the trace ran it: paused tracing, memoised per call.
std::vector<Tensor> run_host_step(const ProgramStep& s, const std::vector<Tensor>& in,
                                  Device device) {
  return run_host_function(s.fn, s.label, in, device, s.where.loc);
}

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

std::string CompiledCore::miss_reason(const CallArgs& args, const Entries& all,
                                      const std::vector<std::string>& value_failures) const {
  bool verbose = log_enabled(LogTopic::kRecompilesVerbose);
  std::string msg;
  size_t v = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Entry& e = *all[i];
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

void CompiledCore::observe(const CallArgs& args) {
  if (first_shapes_.empty()) {
    for (const Tensor& t : args.tensors) {
      first_shapes_.push_back(t.defined() ? t.impl()->meta.shape : Shape{});
      changed_.emplace_back(first_shapes_.back().size(), false);
    }
    return;
  }
  for (size_t a = 0; a < args.tensors.size() && a < first_shapes_.size(); ++a) {
    if (!args.tensors[a].defined()) continue;
    const Shape& now = args.tensors[a].impl()->meta.shape;
    if (now.size() != first_shapes_[a].size()) continue;  // a rank change stays a static fact
    for (size_t d = 0; d < now.size(); ++d)
      if (now[d] != first_shapes_[a][d]) changed_[a][d] = true;
  }
}

bool CompiledCore::any_changed() const {
  for (const auto& dims : changed_)
    for (bool c : dims)
      if (c) return true;
  return false;
}

DynamicSpec CompiledCore::dynamic_spec(const CallArgs& args, bool all_changed_dynamic) const {
  DynamicSpec spec(args.tensors.size());
  for (size_t a = 0; a < args.tensors.size(); ++a) {
    const TensorImpl* t = args.tensors[a].impl();
    if (!t) continue;
    spec[a].resize(t->meta.shape.size());
    for (size_t d = 0; d < spec[a].size(); ++d) {
      const bool changed = a < changed_.size() && d < changed_[a].size() && changed_[a][d];
      bool dyn = options.dynamic == Dynamic::kTrue ||
                 (changed && (options.dynamic == Dynamic::kAuto || all_changed_dynamic));
      // Sizes 0 and 1 are specialised anyway; a changing dim seen at 0/1 stays static.
      if (t->meta.shape[d] < 2 && options.dynamic != Dynamic::kTrue) dyn = false;
      spec[a][d].kind = dyn ? DimPolicy::Kind::kDynamic : DimPolicy::Kind::kStatic;
    }
    for (const TensorImpl::DynamicMark& m : t->dynamic_marks) {
      if (m.dim < 0 || static_cast<size_t>(m.dim) >= spec[a].size()) continue;
      if (m.soft && t->meta.shape[static_cast<size_t>(m.dim)] < 2) continue;  // stays exact
      spec[a][static_cast<size_t>(m.dim)] = {DimPolicy::Kind::kMarked, m.min, m.max, m.soft};
    }
    for (int d : t->static_marks)
      if (d >= 0 && static_cast<size_t>(d) < spec[a].size())
        spec[a][static_cast<size_t>(d)].kind = DimPolicy::Kind::kStatic;
  }
  return spec;
}

std::vector<Tensor> CompiledCore::trace(const CallArgs& args, const std::vector<Tensor>& slot_args,
                                        const ErasedFn& fn, bool all_changed_dynamic) {
  auto start = std::chrono::steady_clock::now();
  std::optional<Device> device;
  for (const Tensor& a : args.tensors) device = a.impl()->literal ? Device::cpu() : a.device();
  TraceContext ctx(slot_args, device.value_or(Device::cpu()), options, &segments_,
                   dynamic_spec(args, all_changed_dynamic), args.scalars.size());
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
  auto made = std::make_shared<Entry>();
  Entry& e = *made;
  e.constants = ctx.constants;
  e.guards = GuardSet::build(args, e.constants, options.name, ctx.take_shape_env(),
                             ctx.symbol_sources(), ctx.specialized_scalars());
  e.program = std::move(program);
  // Symbols specialised to 0/1 leave static graphs: count the compile as dynamic only when a
  // compiled graph still has a size symbol.
  bool symbolic = false;
  for (const ProgramStep& s : e.program.steps)
    symbolic |= s.kind == ProgramStep::Kind::kSegment && s.exe->graph().is_symbolic();
  e.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
  // The dump needs the kernels: a segment compiling in the background is dumped by its worker
  // once ready (if the entry still exists then).
  int segment = 0;
  const std::weak_ptr<const Entry> weak = made;
  for (const ProgramStep& s : e.program.steps)
    if (s.kind == ProgramStep::Kind::kSegment)
      s.exe->when_ready(
          [weak, request = DumpRequest{options.name, dump_name, stats.compiles, segment++,
                                       pending_reason_, e.guards.to_string(e.constants), nullptr,
                                       static_cast<size_t>(&s - e.program.steps.data())}](
              const Executable& exe) mutable {
            const std::shared_ptr<const Entry> entry = weak.lock();
            if (!entry) return;
            request.program = &entry->program;
            dump_compile(request, exe);
          });
  std::lock_guard<std::mutex> lock(mu);
  stats.calls_while_compiling += !e.ready();
  stats.dynamic_compiles += symbolic;
  stats.graph_breaks += e.program.breaks().size();
  entries.push_back(std::move(made));
  return result;
}

void CompiledCore::check_args(const CallArgs& args) const {
  if (current_trace())
    throw Error(invalid_argument("'" + options.name +
                                 "' called while another compiled function is being traced "
                                 "(compiled functions cannot nest)"));
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
}

bool CompiledCore::symbolic_recompile_helps(const CallArgs& args) const {
  if (options.dynamic == Dynamic::kTrue || !any_changed()) return false;
  const DynamicSpec now = dynamic_spec(args, false), after = dynamic_spec(args, true);
  for (size_t a = 0; a < now.size(); ++a)
    for (size_t d = 0; d < now[a].size(); ++d)
      if (now[a][d].kind == DimPolicy::Kind::kStatic &&
          after[a][d].kind != DimPolicy::Kind::kStatic)
        return true;
  return false;
}

std::optional<std::vector<Tensor>> CompiledCore::replay_cached(
    const Entries& all, size_t from, const CallArgs& args, const std::vector<Tensor>& slot_args,
    HostCallMemo& memo, std::vector<std::string>& value_failures) {
  // Entries in creation order; with background compilation, ready ones before those still
  // compiling, so that a ready entry whose guards pass (a symbolic one covering this size)
  // serves rather than the interpreter.
  std::vector<size_t> order;
  bool compiling = false;
  for (size_t i = from; i < all.size(); ++i) compiling |= !all[i]->ready();
  for (int pass = 0; pass < (compiling ? 2 : 1); ++pass)
    for (size_t i = from; i < all.size(); ++i)
      if (!compiling || all[i]->ready() == (pass == 0)) order.push_back(i);
  for (size_t i : order) {
    const Entry& e = *all[i];
    if (e.guards.first_failure(args, e.constants) >= 0) continue;
    const bool ready = e.ready();
    ValueGuardFailure failure;
    std::vector<int64_t> symbols;
    if (e.guards.shape_env()) e.guards.bind(args.tensors, symbols);
    memo.begin_attempt();
    auto out =
        e.program.replay(slot_args, lock_constants(e.constants), &failure, run_host_step, symbols);
    if (out) {
      // Covered: a ready entry served while one still compiling would have matched too.
      bool covered = false;
      for (size_t j = from; ready && compiling && !covered && j < all.size(); ++j)
        covered = !all[j]->ready() && all[j]->guards.first_failure(args, all[j]->constants) < 0;
      std::lock_guard<std::mutex> lock(mu);
      ++stats.cache_hits;
      stats.calls_while_compiling += !ready;
      stats.calls_covered += covered;
      return out;
    }
    value_failures.push_back(failure.description);
  }
  return std::nullopt;
}

std::vector<Tensor> CompiledCore::call(const CallArgs& args, const ErasedFn& fn) {
  check_args(args);
  {
    std::lock_guard<std::mutex> lock(mu);
    ++stats.calls;
  }
  HostCallMemo memo;  // host functions run once per call, whichever attempts reach them
  HostMemoScope memo_scope(&memo);
  // Scalar arguments live in the slots after the tensors, as rank-0 literals: a kiln::Scalar
  // parameter reads its value from there at every call.
  std::vector<Tensor> with_scalars;
  if (!args.scalars.empty()) {
    with_scalars = args.tensors;
    for (const Scalar& s : args.scalars)
      with_scalars.push_back(scalar(s, s.is_integral() ? DType::kI64 : DType::kF32));
  }
  const std::vector<Tensor>& slot_args = args.scalars.empty() ? args.tensors : with_scalars;
  std::vector<std::string> value_failures;
  Entries seen = snapshot();
  if (auto out = replay_cached(seen, 0, args, slot_args, memo, value_failures))
    return std::move(*out);
  // A miss: one trace at a time. Entries other threads added meanwhile may serve this call.
  std::unique_lock<std::recursive_mutex> tracing(trace_mu_);
  const size_t checked = seen.size();
  seen = snapshot();
  if (auto out = replay_cached(seen, checked, args, slot_args, memo, value_failures))
    return std::move(*out);
  // Everything below changes the cache only once the new trace succeeded: a call that throws
  // (a shape error in fn, say) leaves entries, counters and the automatic-dynamic record as
  // they were.
  const auto saved_shapes = first_shapes_;
  const auto saved_changed = changed_;
  observe(args);
  bool all_changed_dynamic = false;
  std::string reason;
  const bool recompile = !seen.empty();
  if (recompile) {
    reason = miss_reason(args, seen, value_failures);
    if (options.error_on_recompile)
      throw Error(invalid_argument("'" + options.name +
                                   "' would recompile (error_on_recompile is set):" + reason));
    CompileStats now;
    {
      std::lock_guard<std::mutex> lock(mu);
      now = stats;
    }
    if (static_cast<int>(now.recompiles) >= options.recompile_limit) {
      const std::string limit = "'" + options.name + "' hit its recompile limit (" +
                                std::to_string(options.recompile_limit) + ")";
      if (options.on_recompile_limit == RecompileLimitPolicy::kError)
        throw Error(resource_exhausted(limit + ":" + reason));
      if (!now.dynamic_after_limit && symbolic_recompile_helps(args)) {
        // Policy step 1: one more compile with every dim seen to change symbolic.
        all_changed_dynamic = true;
        if (!now.recompile_limit_hit)
          log(LogTopic::kWarning,
              limit +
                  "; recompiling ONCE with every input dim that changed made dynamic. "
                  "Further misses will run eagerly. Last miss:" +
                  reason);
      } else {
        if (options.fullgraph)
          throw Error(resource_exhausted(
              limit + " and fullgraph=true forbids running it eagerly:" + reason));
        if (!eager_announced_)
          log(LogTopic::kWarning,
              limit + "; calls that miss its " + std::to_string(seen.size()) +
                  " cached entries now run EAGERLY (op by op, no fusion). Last miss:" + reason);
        eager_announced_ = true;
        {
          std::lock_guard<std::mutex> lock(mu);
          stats.recompile_limit_hit = true;
        }
        tracing.unlock();  // eager calls run side by side
        memo.begin_attempt();
        std::vector<Tensor> out = fn(args.tensors, args.scalars);
        std::lock_guard<std::mutex> lock(mu);
        ++stats.eager_calls;
        return out;
      }
    }
    log(log_enabled(LogTopic::kRecompilesVerbose) ? LogTopic::kRecompilesVerbose
                                                  : LogTopic::kRecompiles,
        "recompiling '" + options.name + "' (compile #" + std::to_string(now.compiles + 1) +
            "), triggered by:" + reason);
  }
  std::vector<Tensor> out;
  try {
    memo.begin_attempt();
    pending_reason_ = reason;
    out = trace(args, slot_args, fn, all_changed_dynamic);
  } catch (...) {
    first_shapes_ = saved_shapes;
    changed_ = saved_changed;
    throw;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (recompile) {
    recompile_reasons.push_back(reason);
    ++stats.recompiles;
  }
  if (all_changed_dynamic) {
    stats.dynamic_after_limit = true;
    stats.recompile_limit_hit = true;
  }
  ++stats.compiles;
  return out;
}

namespace {
/// The tensor behind a mark_dynamic / mark_static call and its normalised dim, or an error.
std::pair<TensorImpl*, int> marked_dim(const Tensor& t, int dim, const char* what) {
  TensorImpl* impl = t.impl();
  if (!impl) throw Error(invalid_argument(std::string(what) + ": undefined tensor"));
  if (impl->trace)
    throw Error(invalid_argument(std::string(what) +
                                 ": call it on an argument before the call, not inside a trace"));
  const int rank = impl->meta.rank();
  const int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    throw Error(invalid_argument(std::string(what) + ": dim " + std::to_string(dim) +
                                 " of a rank-" + std::to_string(rank) + " tensor"));
  std::erase_if(impl->dynamic_marks, [d](const TensorImpl::DynamicMark& m) { return m.dim == d; });
  std::erase(impl->static_marks, d);
  return {impl, d};
}
}  // namespace

void mark_dynamic(const Tensor& t, int dim, int64_t min, int64_t max) {
  if (min > max)
    throw Error(invalid_argument("mark_dynamic: min " + std::to_string(min) + " > max " +
                                 std::to_string(max)));
  auto [impl, d] = marked_dim(t, dim, "mark_dynamic");
  impl->dynamic_marks.push_back({d, min, max});
}

void maybe_mark_dynamic(const Tensor& t, int dim) {
  auto [impl, d] = marked_dim(t, dim, "maybe_mark_dynamic");
  impl->dynamic_marks.push_back({d, 2, SymRange::kPosInf, true});
}

void mark_static(const Tensor& t, int dim) {
  auto [impl, d] = marked_dim(t, dim, "mark_static");
  impl->static_marks.push_back(d);
}

namespace detail {

std::shared_ptr<CompiledCore> make_core(CompileOptions options) {
  if (const char* v = std::getenv("KILN_BACKGROUND"); v && *v)
    options.background = std::string(v) != "0";
  return std::make_shared<CompiledCore>(std::move(options));
}

void wait_ready(const CompiledCore& core) {
  for (const auto& entry : core.snapshot())
    for (const ProgramStep& s : entry->program.steps)
      if (s.kind == ProgramStep::Kind::kSegment) s.exe->wait_ready();
}

std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& tensors,
                         const std::vector<Scalar>& scalars, const ErasedFn& fn) {
  return core.call(CallArgs{tensors, scalars}, fn);
}

bool cached(const CompiledCore& core, const std::vector<Tensor>& tensors,
            const std::vector<Scalar>& scalars) {
  const CallArgs args{tensors, scalars};
  core.check_args(args);
  for (const auto& entry : core.snapshot())
    if (entry->guards.first_failure(args, entry->constants) < 0) return true;
  return false;
}

CompileStats stats(const CompiledCore& core) {
  std::lock_guard<std::mutex> lock(core.mu);
  return core.stats;
}

std::vector<EntryInfo> entries(const CompiledCore& core) {
  std::vector<EntryInfo> out;
  for (const auto& entry : core.snapshot()) {
    const CompiledCore::Entry& e = *entry;
    EntryInfo info;
    info.guards = e.guards.to_string(e.constants);
    info.compile_ms = e.compile_ms;
    if (const ShapeEnv* env = e.guards.shape_env()) {
      for (int sym = 0; sym < env->num_symbols(); ++sym) {
        const SymbolInfo& si = env->info(sym);
        SymInt canon = env->simplify(SymInt(env->symbol(sym)));
        info.symbols.push_back("s" + std::to_string(sym) + " = " + si.source + " (traced at " +
                               std::to_string(si.hint) + ")" +
                               (canon == SymInt(env->symbol(sym)) ? "" : ", is " + canon.str()));
      }
    }
    for (const ProgramStep& s : e.program.steps) {
      if (s.kind != ProgramStep::Kind::kSegment) {
        if (!s.is_break) continue;
        info.breaks.push_back(s.where.reason + (s.where.loc.empty() ? "" : " at " + s.where.loc));
        continue;
      }
      ++info.graph_count;
      info.graph += s.exe->graph().to_string();
      info.ops_per_graph.push_back(s.exe->graph().op_count());
      info.on_device |= s.exe->on_device();
      if (const KernelPlan* plan = s.exe->plan())
        for (const Kernel& k : plan->kernels) info.kernels.push_back(k.name);
      info.ready &= s.exe->state() != Executable::State::kCompiling;
      info.background_ms += s.exe->background_ms();
      if (info.background_error.empty()) info.background_error = s.exe->background_error();
      const ReplayReport replay = s.exe->replay_report();
      info.arena_bytes += replay.arena_bytes;
      info.largest_live_bytes = std::max(info.largest_live_bytes, replay.largest_live_bytes);
      info.recordings += replay.recordings;
      info.replays += replay.replays;
    }
    out.push_back(std::move(info));
  }
  return out;
}

ExplainReport explain(const CompiledCore& core) {
  ExplainReport r;
  r.name = core.options.name;
  r.entries = entries(core);
  {
    std::lock_guard<std::mutex> lock(core.mu);
    r.stats = core.stats;
    r.recompile_reasons = core.recompile_reasons;
  }
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
       ", cache hits " + std::to_string(stats.cache_hits) + ", symbolic compiles " +
       std::to_string(stats.dynamic_compiles) + ", recompiles " + std::to_string(stats.recompiles) +
       ", eager calls " + std::to_string(stats.eager_calls) + ", trace+compile time " +
       std::to_string(compile_ms) + " ms\n";
  if (stats.calls_while_compiling + stats.calls_covered > 0) {
    double background_ms = 0;
    for (const EntryInfo& e : entries) background_ms += e.background_ms;
    s += "background compilation: " + std::to_string(stats.calls_while_compiling) +
         " call(s) served by the interpreter while their entry compiled, " +
         std::to_string(stats.calls_covered) + " by an older ready entry; worker time " +
         std::to_string(background_ms) + " ms\n";
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].ready) s += "entry " + std::to_string(i) + ": still compiling\n";
    if (!entries[i].background_error.empty())
      s += "entry " + std::to_string(i) + ": background compile failed (" +
           entries[i].background_error + "); it runs on the interpreter\n";
  }
  for (size_t i = 0; i < recompile_reasons.size(); ++i)
    s += "recompile " + std::to_string(i + 1) + ":" + recompile_reasons[i] + "\n";
  if (!entries.empty() && !entries.back().symbols.empty()) {
    s += "size symbols of the latest entry:\n";
    for (const std::string& sym : entries.back().symbols) s += "  " + sym + "\n";
  }
  if (!entries.empty() && entries.back().on_device) {
    const EntryInfo& e = entries.back();
    s += "device memory of the latest entry: arena " + std::to_string(e.arena_bytes) +
         " bytes, largest live set " + std::to_string(e.largest_live_bytes) + " bytes; " +
         std::to_string(e.recordings) + " recording(s), " + std::to_string(e.replays) +
         " replay(s)\n";
  }
  s += "guards of the latest entry:\n" + guards;
  return s;
}

}  // namespace kiln
