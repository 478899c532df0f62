// Guard evaluation + cache lookup per cached call, next to a call that re-traces.
//
//   BM_GuardCheck/entries:N  first_failure over a 4-input guard set, N cached entries scanned
//                            (the match is the last one): the per-call guard + lookup cost
//   BM_GuardCheckSymbolic    the same 4 inputs with every dim >= 2 a size symbol (duck sizing
//                            shares equal sizes): binding the symbols + the ShapeEnv's flat
//                            guard program + the static guards
//   BM_CachedCall            a whole cached call of a 1-element CPU function (guards, lookup,
//                            interpreter replay)
//   BM_CachedCallDevice      a whole cached call of `a + b` on f32[64] Vulkan tensors (guards,
//                            lookup, replay, submission, fence), with the buffer allocations
//                            and command-buffer recordings each call makes (`kiln bench`'s
//                            overhead benchmark)
//   BM_RetraceCall           a call whose guards fail every time (new shape): trace + compile
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/workloads.h"
#include "capture/guards.h"
#include "kiln/kiln.h"

namespace {

using kiln::Tensor;

Tensor ones(kiln::Shape s) {
  return Tensor::full(std::move(s), 1.0);
}

void BM_GuardCheck(benchmark::State& state) {
  const int n_entries = static_cast<int>(state.range(0));
  std::vector<kiln::Scalar> no_scalars;
  std::vector<kiln::CapturedConstant> no_constants;
  std::vector<kiln::GuardSet> entries;
  for (int e = 0; e < n_entries; ++e) {
    std::vector<Tensor> seen = {ones({4, 128 + e}), ones({128 + e}), ones({8, 16, 4}), ones({1})};
    entries.push_back(kiln::GuardSet::build({seen, no_scalars}, no_constants, "bench"));
  }
  std::vector<Tensor> args = {ones({4, 128 + n_entries - 1}), ones({128 + n_entries - 1}),
                              ones({8, 16, 4}), ones({1})};
  kiln::CallArgs call{args, no_scalars};
  for (auto _ : state) {
    int hit = -1;
    for (int e = 0; e < n_entries && hit < 0; ++e)
      if (entries[e].first_failure(call, no_constants) < 0) hit = e;
    benchmark::DoNotOptimize(hit);
  }
  state.counters["guards_per_entry"] = static_cast<double>(entries[0].guards().size());
}
BENCHMARK(BM_GuardCheck)->Arg(1)->Arg(8);

void BM_GuardCheckSymbolic(benchmark::State& state) {
  std::vector<kiln::Scalar> no_scalars;
  std::vector<kiln::CapturedConstant> no_constants;
  std::vector<Tensor> seen = {ones({4, 128}), ones({128}), ones({8, 16, 4}), ones({1})};
  auto env = std::make_shared<kiln::ShapeEnv>();
  std::vector<kiln::SymbolSource> sources;
  for (size_t a = 0; a < seen.size(); ++a) {
    for (int d = 0; d < seen[a].dim(); ++d) {
      int id = -1;
      env->symbol_for_value(seen[a].meta().shape[static_cast<size_t>(d)],
                            "input " + std::to_string(a), &id);
      sources.resize(static_cast<size_t>(id) + 1);
      sources[static_cast<size_t>(id)] = {static_cast<int32_t>(a), d};
    }
  }
  kiln::GuardSet guards =
      kiln::GuardSet::build({seen, no_scalars}, no_constants, "bench", env, sources);
  std::vector<Tensor> args = {ones({4, 300}), ones({300}), ones({8, 16, 4}), ones({1})};
  kiln::CallArgs call{args, no_scalars};
  if (guards.first_failure(call, no_constants) >= 0) state.SkipWithError("guards should pass");
  for (auto _ : state) benchmark::DoNotOptimize(guards.first_failure(call, no_constants));
  state.counters["symbols"] = static_cast<double>(env->num_symbols());
  state.counters["shape_guards"] = static_cast<double>(env->guards().size());
}
BENCHMARK(BM_GuardCheckSymbolic);

void BM_CachedCall(benchmark::State& state) {
  auto f = kiln::compile([](const Tensor& a, const Tensor& b) { return a + b; });
  Tensor a = ones({1}), b = ones({1});
  f(a, b);
  for (auto _ : state) benchmark::DoNotOptimize(f(a, b));
}
BENCHMARK(BM_CachedCall);

void BM_CachedCallDevice(benchmark::State& state) {
  if (!kiln::vulkan_available()) {
    state.SkipWithError("no Vulkan device");
    return;
  }
  Tensor a = kiln::bench::random_tensor({64}, 1), b = kiln::bench::random_tensor({64}, 2);
  auto f = kiln::compile(kiln::bench::tiny_add, {.name = "cached_device"});
  f(a, b);
  f(a, b);
  const kiln::RuntimeCounters before = kiln::runtime_counters();
  for (auto _ : state) benchmark::DoNotOptimize(f(a, b));
  const kiln::RuntimeCounters after = kiln::runtime_counters();
  const double calls = static_cast<double>(state.iterations());
  auto per_call = [&](uint64_t kiln::RuntimeCounters::*field) {
    return static_cast<double>(after.*field - before.*field) / calls;
  };
  state.counters["buffer_allocs"] = per_call(&kiln::RuntimeCounters::buffer_allocations);
  state.counters["memory_allocs"] = per_call(&kiln::RuntimeCounters::memory_allocations);
  state.counters["recordings"] = per_call(&kiln::RuntimeCounters::command_buffers_recorded);
  state.counters["submissions"] = per_call(&kiln::RuntimeCounters::submissions);
}
BENCHMARK(BM_CachedCallDevice)->UseRealTime();

void BM_RetraceCall(benchmark::State& state) {
  auto f = kiln::compile(
      [](const Tensor& a, const Tensor& b) { return a + b; },
      {.name = "retrace", .recompile_limit = 1 << 30, .dynamic = kiln::Dynamic::kFalse});
  kiln::Dim n = 1;
  for (auto _ : state) {
    Tensor a = ones({n}), b = ones({n});
    ++n;
    benchmark::DoNotOptimize(f(a, b));
  }
}
BENCHMARK(BM_RetraceCall)->Iterations(2000);

}  // namespace

BENCHMARK_MAIN();
