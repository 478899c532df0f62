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
/// KILN_LOGS=recompiles with the first failing guard). Threads may call it at once (runtime.md).
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
  /// Scalar arguments received as `kiln::Scalar` are graph inputs (a new value reuses the
  /// compiled code) unless this is set: then their values are guarded like C++ numbers
  /// (torch.compile's specialize_float). Parameters declared as C++ numbers are always guarded.
  bool specialize_float = false;
  /// Compile device code on a worker thread (docs/capture.md, "Background compilation"): a call
  /// whose entry is still compiling is served by a ready entry whose guards pass, else by the
  /// CPU interpreter, and the compiled kernels are swapped in once built and warmed. Off by
  /// default (the first call runs the compiled kernels, as in torch.compile); KILN_BACKGROUND=1
  /// turns it on for every compiled function and KILN_BACKGROUND=0 off. CPU tensors have no
  /// device code: the option changes nothing for them.
  bool background = false;
  /// Check mode (also KILN_CHECK=1; docs/report.md): every call of a compiled device segment
  /// also runs on the CPU interpreter and each kernel's output is compared with it; the first
  /// kernel outside tolerance is logged as a warning (with a repro under KILN_DUMP_DIR). Slow:
  /// for finding a miscompiled kernel, not for production.
  bool check = false;
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
  // Which path served the calls (background compilation); the rest ran compiled code.
  uint64_t calls_while_compiling = 0;  // on the CPU interpreter: their entry was compiling
  uint64_t calls_covered = 0;  // by an older ready entry while the matching one was compiling
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
  bool ready = true;                // false while a segment compiles in the background
  double background_ms = 0;         // the background compiles' time on their worker, summed
  std::string background_error;     // the first failed background compile ("" if none)
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
    std::function<std::vector<Tensor>(const std::vector<Tensor>&, const std::vector<Scalar>&)>;

namespace detail {
std::shared_ptr<CompiledCore> make_core(CompileOptions options);
std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& tensors,
                         const std::vector<Scalar>& scalars, const ErasedFn& fn);
/// Scalar argument `index` turned into a C++ number inside a trace: guard its value.
void specialize_scalar_argument(size_t index);
/// Scalar argument `index` received as kiln::Scalar: a graph value inside a trace.
Scalar scalar_argument(size_t index, const Scalar& value);

/// What a compiled function's scalar parameter is given: it converts to the parameter's type.
/// A C++ number gets the exact value, and the trace guards it; kiln::Scalar gets a traced
/// graph value (CompileOptions::specialize_float aside).
class ScalarArg {
 public:
  ScalarArg(size_t index, const Scalar& value) : index_(index), value_(value) {}
  template <typename T>
  requires std::is_arithmetic_v<T>
  operator T() const {  // NOLINT: implicit
    specialize_scalar_argument(index_);
    if constexpr (std::is_same_v<T, bool>) {
      return value_.is_integral() ? value_.hint_int() != 0 : value_.hint_double() != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(value_.hint_int());
    } else {
      return static_cast<T>(value_.hint_double());
    }
  }
  operator Scalar() const { return scalar_argument(index_, value_); }  // NOLINT: implicit

 private:
  size_t index_;
  Scalar value_;
};
CompileStats stats(const CompiledCore& core);
bool cached(const CompiledCore& core, const std::vector<Tensor>& tensors,
            const std::vector<Scalar>& scalars);
void wait_ready(const CompiledCore& core);
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
template <typename A>
constexpr bool is_scalar_arg =
    std::is_arithmetic_v<std::decay_t<A>> || std::is_same_v<std::decay_t<A>, Scalar>;
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
/// numbers or kiln::Scalars. A parameter of `fn` declared as a C++ number is value-guarded (a
/// new value re-traces); one declared as kiln::Scalar is a graph input (kiln/scalar.h).
/// Integers travel exactly (int64).
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
    static_assert(((detail::is_tensor_arg<Args> || detail::is_scalar_arg<Args>)&&...),
                  "compiled functions take kiln::Tensor, arithmetic and kiln::Scalar arguments");
    std::vector<Tensor> tensors;
    std::vector<Scalar> scalars;
    (collect(args, tensors, scalars), ...);
    ErasedFn erased = [this](const std::vector<Tensor>& t, const std::vector<Scalar>& s) {
      return invoke<Args...>(t, s, std::index_sequence_for<Args...>{});
    };
    return detail::from_list<R>(detail::call(*core_, tensors, scalars, erased));
  }

  CompileStats stats() const { return detail::stats(*core_); }
  /// Whether a call with these arguments would be served by an entry compiled so far: the
  /// guards of one entry pass (value guards on data read inside the program are checked only
  /// when it runs). Evaluates guards only: nothing is traced, compiled or run.
  template <typename... Args>
  bool cached(const Args&... args) const {
    std::vector<Tensor> tensors;
    std::vector<Scalar> scalars;
    (collect(args, tensors, scalars), ...);
    return detail::cached(*core_, tensors, scalars);
  }
  /// Blocks until every entry's background compiles have finished (each either swapped in or
  /// failed and logged); returns at once without background compilation.
  void wait_ready() const { detail::wait_ready(*core_); }
  /// Compiles the entry for these arguments ahead of use: one call, then wait_ready(). Its
  /// kernels land in the device's cache directory (KILN_CACHE_DIR, or
  /// DeviceOpenOptions::cache_dir), which an application can ship (docs/cache.md).
  template <typename... Args>
  void precompile(const Args&... args) {
    (void)(*this)(args...);
    wait_ready();
  }
  std::vector<EntryInfo> entries() const { return detail::entries(*core_); }
  /// Graphs, breaks, guards, compile time and every recompile so far, with reasons.
  ExplainReport explain() const { return detail::explain(*core_); }

 private:
  template <typename A>
  static void collect(const A& a, std::vector<Tensor>& t, std::vector<Scalar>& s) {
    if constexpr (detail::is_tensor_arg<A>) {
      t.push_back(a);
    } else if constexpr (std::is_same_v<A, Scalar>) {
      s.push_back(a.untraced());
    } else {
      s.push_back(Scalar(a));
    }
  }
  template <typename A, size_t I, typename... All>
  static auto pick(const std::vector<Tensor>& t, const std::vector<Scalar>& s) {
    if constexpr (detail::is_tensor_arg<A>) {
      return t[detail::rank_of<All...>(I)];
    } else {
      const size_t r = detail::rank_of<All...>(I);
      return detail::ScalarArg(r, s[r]);
    }
  }
  template <typename... Args, size_t... I>
  std::vector<Tensor> invoke(const std::vector<Tensor>& t, const std::vector<Scalar>& s,
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
/// As mark_dynamic (a size symbol of its own from the first trace, sizes >= 2), but code that
/// needs the dim's value specialises it with a guard (one compile per value) instead of failing,
/// as torch's maybe_mark_dynamic. Imported ONNX models mark their named dims this way.
void maybe_mark_dynamic(const Tensor& t, int dim);
/// Makes dim `dim` of `t` static (exact-size guard) even under Dynamic::kTrue / kAuto.
void mark_static(const Tensor& t, int dim);

/// While one lives, the nodes that ops record on this thread name `label` before their C++
/// location, so that a front end's nodes say what they came from in explain(), dumps and check
/// reports: "Gemm node 'fc1' (ops_math.cpp:279)". The ONNX importer labels each node it imports.
class SourceLabel {
 public:
  explicit SourceLabel(std::string label);
  ~SourceLabel();
  SourceLabel(const SourceLabel&) = delete;
  SourceLabel& operator=(const SourceLabel&) = delete;

 private:
  std::string previous_;
};

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
/// Validation-layer error messages seen so far on every Vulkan device Kiln created (not on
/// adopted devices: the application's own messenger sees those).
std::vector<std::string> validation_messages();

}  // namespace kiln
