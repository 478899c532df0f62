// Fused vs unfused: a 6-op elementwise chain on 16M floats, as one fused kernel and as six
// dispatches, measured side by side in one run; the ratio is the figure (DESIGN.md reference
// on lavapipe: 12.2 ms vs 67 ms, 5.5x). BM_Copy is a one-read-one-write kernel over the same
// bytes: the fused chain's time over it is the chain's cost above memory bandwidth. The
// workloads are bench/workloads.h's, the same `kiln bench` runs.
//
//   bench_fusion [--rows=4096 --cols=4096] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/bench_util.h"
#include "bench/workloads.h"
#include "kiln/kiln.h"

namespace {

using kiln::Tensor;

int64_t g_rows = 4096, g_cols = 4096;

using kiln::bench::chain6;
using kiln::bench::copy1;

std::vector<Tensor>& inputs() {
  static std::vector<Tensor> t = kiln::bench::chain_inputs(g_rows, g_cols);
  return t;
}

void run_chain(benchmark::State& state, bool fuse) {
  auto& t = inputs();
  auto f = kiln::compile(chain6, {.name = fuse ? "fused" : "unfused", .fuse = fuse});
  f(t[0], t[1], t[2], t[3], t[4]);  // trace, compile, and the driver's first-dispatch compile
  for (auto _ : state) {
    Tensor y = f(t[0], t[1], t[2], t[3], t[4]);
    benchmark::DoNotOptimize(y);
  }
  state.counters["kernels"] = static_cast<double>(f.entries().at(0).kernels.size());
  state.SetBytesProcessed(state.iterations() * g_rows * g_cols * 2 * 4);  // read x, write y
}

void BM_Copy(benchmark::State& state) {
  auto& t = inputs();
  auto f = kiln::compile(copy1, {.name = "copy"});
  f(t[0]);
  for (auto _ : state) {
    Tensor y = f(t[0]);
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(state.iterations() * g_rows * g_cols * 2 * 4);
}

void BM_Chain6Fused(benchmark::State& state) {
  run_chain(state, true);
}
void BM_Chain6Unfused(benchmark::State& state) {
  run_chain(state, false);
}
BENCHMARK(BM_Chain6Fused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Chain6Unfused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Copy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rows=", 7) == 0) g_rows = std::atoll(argv[i] + 7);
    if (std::strncmp(argv[i], "--cols=", 7) == 0) g_cols = std::atoll(argv[i] + 7);
  }
  benchmark::Initialize(&argc, argv);
  if (!kiln::vulkan_available()) {
    std::printf("bench_fusion: no Vulkan device (%s)\n", kiln::vulkan_status().to_string().c_str());
    return 0;
  }
  kiln::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratio("6-op chain on " + std::to_string(g_rows) + "x" + std::to_string(g_cols) +
                           " floats: unfused / fused",
                       "BM_Chain6Unfused/real_time", "BM_Chain6Fused/real_time");
  reporter.print_ratio("fused chain / copy of the same bytes", "BM_Chain6Fused/real_time",
                       "BM_Copy/real_time");
  benchmark::Shutdown();
  return 0;
}
