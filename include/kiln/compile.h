/// \file compile.h
/// kiln::compile: trace a C++ tensor function once per input signature, guard it, fuse it into
/// Vulkan compute kernels (or run it on the CPU interpreter for CPU tensors) and replay it.
///
/// Contract (docs/capture.md): the first call with a new signature runs `fn` on placeholder
/// tensors and records a graph; the guards it depends on (dtype, device, rank and exact sizes of
/// every input; identity of every captured tensor) are stored with it. Later calls check the
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

struct CompileOptions {
  std::string name = "fn";  // used in logs and dump folder names
  bool fuse = true;         // false: one kernel per op (the unfused baseline)
  bool vectorize = true;    // vec4 kernels where legal
};

struct CompileStats {
  uint64_t calls = 0;
  uint64_t compiles = 0;    // traces that produced a new cache entry
  uint64_t cache_hits = 0;  // calls served by replaying an entry
  uint64_t recompiles = 0;  // compiles caused by a guard failure of an existing entry
};

/// What one cache entry holds, for tests, logs and tools.
struct EntryInfo {
  std::string graph;                 // Graph::to_string()
  std::string guards;                // one guard a line, with provenance
  std::vector<std::string> kernels;  // kernel names; empty when run by the interpreter
  bool on_device = false;
};

class CompiledCore;
using ErasedFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace detail {
std::shared_ptr<CompiledCore> make_core(CompileOptions options);
std::vector<Tensor> call(CompiledCore& core, const std::vector<Tensor>& args, const ErasedFn& fn);
CompileStats stats(const CompiledCore& core);
std::vector<EntryInfo> entries(const CompiledCore& core);

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
}  // namespace detail

/// The callable kiln::compile returns. Call it with the same tensor arguments as `fn`.
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
    std::vector<Tensor> list{Tensor(args)...};
    ErasedFn erased = [this](const std::vector<Tensor>& v) {
      return invoke(v, std::index_sequence_for<Args...>{});
    };
    return detail::from_list<R>(detail::call(*core_, list, erased));
  }

  CompileStats stats() const { return detail::stats(*core_); }
  std::vector<EntryInfo> entries() const { return detail::entries(*core_); }

 private:
  template <size_t... I>
  std::vector<Tensor> invoke(const std::vector<Tensor>& v, std::index_sequence<I...>) {
    return detail::to_list(fn_(v[I]...));
  }
  F fn_;
  std::shared_ptr<CompiledCore> core_;
};

template <typename F>
Compiled<F> compile(F fn, CompileOptions options = {}) {
  return Compiled<F>(std::move(fn), std::move(options));
}

/// Process-wide runtime counters (for tests and benchmarks).
struct RuntimeCounters {
  uint64_t dispatches = 0;
  uint64_t submissions = 0;
  uint64_t pipelines_created = 0;
  uint64_t pipeline_cache_hits = 0;
  uint64_t shader_compiles = 0;
  uint64_t validation_errors = 0;
  uint64_t device_bytes_allocated = 0;
};
RuntimeCounters runtime_counters();
/// Validation-layer error messages seen so far on the default device.
std::vector<std::string> validation_messages();

}  // namespace kiln
