/// \file compile.h
/// kiln::compile: trace a C++ tensor function once per input signature, guard it, fuse it into
/// Vulkan compute kernels (or run it on the CPU interpreter for CPU tensors) and replay it.
///
/// Contract (docs/capture.md): the first call with a new signature runs `fn` on placeholder
/// tensors and records a graph; the guards it depends on (dtype, device, rank of every input;
/// the exact size of each static dim and the symbolic size guards of each dynamic one; identity
/// of every captured tensor) are stored with it. Later calls check the
/// guards and, on a hit, replay the compiled plan WITHOUT running `fn`: C++ side effects in
/// `fn` happen at trace time only. A failing guard re-traces (a recompile, logged under
/// KILN_LOGS=recompiles with the first failing guard). A compiled function is not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

/// What happens when a function needs more than `recompile_limit` recompiles.
enum class RecompileLimitPolicy {
  kEager,  // announce it once (a warning), then run calls that miss the cache eagerly
  kError,  // throw kiln::Error naming the function and the failing guard
};

/// Which input dims are traced as size symbols (one graph for every size of a shape class).
enum class Dynamic {
  kFalse,  // every dim static (exact-size guards); only mark_dynamic dims are symbolic
  kTrue,   // every dim symbolic from the first compile (sizes 0 and 1 are still specialised)
  kAuto,   // first compile static; a dim seen to change becomes symbolic on the recompile
};

struct CompileOptions {
  std::string name = "fn";          // used in logs and dump folder names
  bool fuse = true;                 // false: one kernel per op (the unfused baseline)
  bool vectorize = true;            // vec4 kernels where legal
  bool fullgraph = false;           // any graph break is an error naming its reason and location
  bool error_on_recompile = false;  // any recompile is an error naming the failing guard
  int recompile_limit = 8;          // recompiles allowed per function
  /// Past the limit: kEager first recompiles once with every dim seen to change symbolic
  /// (announced with a warning), then runs misses eagerly; kError throws.
  RecompileLimitPolicy on_recompile_limit = RecompileLimitPolicy::kEager;
  Dynamic dynamic = Dynamic::kAuto;
};

struct CompileStats {
  uint64_t calls = 0;
  uint64_t compiles = 0;          // traces that produced a new cache entry
  uint64_t cache_hits = 0;        // calls served by replaying an entry
  uint64_t recompiles = 0;        // compiles caused by a guard failure of an existing entry
  uint64_t eager_calls = 0;       // calls run eagerly after the recompile limit
  uint64_t graph_breaks = 0;      // summed over all traces
  uint64_t dynamic_compiles = 0;  // compiles whose graphs have size symbols
  bool recompile_limit_hit = false;
  bool dynamic_after_limit = false;  // the one symbolic recompile past the limit happened
};

/// What one cache entry holds, for tests, logs and tools.
struct EntryInfo {
  std::string graph;                 // every segment's Graph::to_string(), in order
  std::string guards;                // one guard a line, with provenance
  std::vector<std::string> kernels;  // kernel names; empty when run by the interpreter
  bool on_device = false;
  int graph_count = 0;              // compiled segments
  std::vector<std::string> breaks;  // "reason at file:line", in order
  std::vector<size_t> ops_per_graph;
  double compile_ms = 0;
  std::vector<std::string> symbols;  // "s0 = input 0 dim 1 (traced at 128)"
  // Device memory and command-buffer replay (docs/runtime.md), summed over the segments.
  uint64_t arena_bytes = 0;         // the planned arena of intermediates and outputs
  uint64_t largest_live_bytes = 0;  // the most bytes live during one kernel: the arena's floor
  uint64_t recordings = 0;          // command buffers recorded (one per layout)
  uint64_t replays = 0;             // calls that submitted a recording
};

/// kiln::explain's answer: the graphs, breaks and guards of a function, and (for a compiled
/// function called many times) its recompiles and their reasons.
struct ExplainReport {
  std::string name;
  size_t graph_count = 0;        // of the most recent entry
  size_t graph_break_count = 0;  // of the most recent entry
  std::vector<std::string> break_reasons;
  std::vector<size_t> ops_per_graph;
  std::string guards;
  double compile_ms = 0;  // all traces
  CompileStats stats;
  std::vector<std::string> recompile_reasons;
  std::vector<EntryInfo> entries;
  std::string to_string() const;
};

class CompiledCore;
using ErasedFn =
    std::function<std::vector<Tensor>(const std::vector<Tensor>&, const std::vector<double>&)>;

namespace detail {
std::shared_ptr<CompiledCore> make_core(CompileOptions options);
std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& tensors,
                         const std::vector<double>& scalars, const ErasedFn& fn);
CompileStats stats(const CompiledCore& core);
std::vector<EntryInfo> entries(const CompiledCore& core);
ExplainReport explain(const CompiledCore& core);

template <typename R>
std::vector<Tensor> to_list(R&& r) {
  if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
    return {std::forward<R>(r)};
  } else {
    return std::vector<Tensor>(std::forward<R>(r));
  }
}
template <typename R>
R from_list(std::vector<Tensor> v) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return std::move(v.at(0));
  } else {
    return v;
  }
}
template <typename A>
constexpr bool is_tensor_arg = std::is_same_v<std::decay_t<A>, Tensor>;
/// Position of argument I among the tensor (or the scalar) arguments.
template <typename... A>
constexpr size_t rank_of(size_t i) {
  constexpr bool kinds[] = {is_tensor_arg<A>..., false};
  size_t r = 0;
  for (size_t j = 0; j < i; ++j) r += kinds[j] == kinds[i];
  return r;
}
}  // namespace detail

/// The callable kiln::compile returns. Call it with the same arguments as `fn`: tensors, and
/// arithmetic scalars (whose values are guarded: a new value re-traces).
template <typename F>
class Compiled {
 public:
  Compiled(F fn, CompileOptions options)
      : fn_(std::move(fn)), core_(detail::make_core(std::move(options))) {}

  template <typename... Args>
  auto operator()(const Args&... args) {
    using R = std::decay_t<std::invoke_result_t<F&, const Args&...>>;
    static_assert(std::is_same_v<R, Tensor> || std::is_same_v<R, std::vector<Tensor>>,
                  "a compiled function returns Tensor or std::vector<Tensor>");
    static_assert(((detail::is_tensor_arg<Args> || std::is_arithmetic_v<Args>)&&...),
                  "compiled functions take kiln::Tensor and arithmetic arguments");
    std::vector<Tensor> tensors;
    std::vector<double> scalars;
    (collect(args, tensors, scalars), ...);
    ErasedFn erased = [this](const std::vector<Tensor>& t, const std::vector<double>& s) {
      return invoke<Args...>(t, s, std::index_sequence_for<Args...>{});
    };
    return detail::from_list<R>(detail::call(*core_, tensors, scalars, erased));
  }

  CompileStats stats() const { return detail::stats(*core_); }
  std::vector<EntryInfo> entries() const { return detail::entries(*core_); }
  /// Graphs, breaks, guards, compile time and every recompile so far, with reasons.
  ExplainReport explain() const { return detail::explain(*core_); }

 private:
  template <typename A>
  static void collect(const A& a, std::vector<Tensor>& t, std::vector<double>& s) {
    if constexpr (detail::is_tensor_arg<A>) {
      t.push_back(a);
    } else {
      s.push_back(static_cast<double>(a));
    }
  }
  template <typename A, size_t I, typename... All>
  static A pick(const std::vector<Tensor>& t, const std::vector<double>& s) {
    if constexpr (detail::is_tensor_arg<A>) {
      return t[detail::rank_of<All...>(I)];
    } else {
      return static_cast<A>(s[detail::rank_of<All...>(I)]);
    }
  }
  template <typename... Args, size_t... I>
  std::vector<Tensor> invoke(const std::vector<Tensor>& t, const std::vector<double>& s,
                             std::index_sequence<I...>) {
    return detail::to_list(fn_(pick<std::decay_t<Args>, I, Args...>(t, s)...));
  }
  F fn_;
  std::shared_ptr<CompiledCore> core_;
};

template <typename F>
Compiled<F> compile(F fn, CompileOptions options = {}) {
  return Compiled<F>(std::move(fn), std::move(options));
}

/// Compiles `fn`, calls it once on `args`, and reports its graphs, breaks and guards.
template <typename F, typename... Args>
ExplainReport explain(F fn, const Args&... args) {
  auto compiled = compile(std::move(fn), {.name = "explain"});
  compiled(args...);
  return compiled.explain();
}

/// Makes dim `dim` of `t` symbolic whenever a compiled function traces `t` (whatever its
/// `dynamic` option), with sizes allowed in [min, max] (a range guard). Code that specialises
/// the dim (turns it into a C++ integer, or an op that needs a fixed size) is an error naming
/// the op and line. Sizes 0 and 1 cannot be dynamic.
void mark_dynamic(const Tensor& t, int dim, int64_t min = 2, int64_t max = INT64_MAX);
/// Makes dim `dim` of `t` static (exact-size guard) even under Dynamic::kTrue / kAuto.
void mark_static(const Tensor& t, int dim);

/// Process-wide runtime counters (for tests and benchmarks).
struct RuntimeCounters {
  uint64_t dispatches = 0;
  uint64_t submissions = 0;
  uint64_t pipelines_created = 0;
  uint64_t pipeline_cache_hits = 0;
  uint64_t shader_compiles = 0;
  uint64_t validation_errors = 0;
  uint64_t device_bytes_allocated = 0;
  uint64_t device_bytes_peak = 0;         // since the device was created or reset_device_peak()
  uint64_t buffer_allocations = 0;        // device and staging sub-allocations
  uint64_t memory_allocations = 0;        // vkAllocateMemory calls
  uint64_t command_buffers_recorded = 0;  // command buffers begun (eager runs and recordings)
};
RuntimeCounters runtime_counters();
/// Restarts RuntimeCounters::device_bytes_peak at the bytes allocated now.
void reset_device_peak();
/// Validation-layer error messages seen so far on the default device.
std::vector<std::string> validation_messages();

}  // namespace kiln
