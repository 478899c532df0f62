// cumsum on the device, compiled, steady state: a few shapes along an inner and an outer axis,
// long and short lines. Used to measure the scan kernel against the build before it (two
// binaries run interleaved on the same machine, docs/perf.md); timings are never asserted.
//
//   bench_scan [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <vector>

#include "kiln/kiln.h"

namespace {

using kiln::Tensor;

/// cumsum(x, axis) of a random f32 [rows, cols] on the device.
void BM_CumSum(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1), axis = state.range(2);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : v) x = u(rng);
  Tensor x = Tensor::from_vector(v, {rows, cols}, kiln::Device::vulkan());
  auto f =
      kiln::compile([axis](const Tensor& t) { return kiln::cumsum(t, axis); }, {.name = "cumsum"});
  Tensor y = f(x);  // trace, compile, the driver's first-dispatch compile
  y.to_vector<float>();
  for (auto _ : state) {
    y = f(x);
    y.to_vector<float>();  // waits for the kernel
  }
  state.counters["on_device"] = f.entries().at(0).on_device ? 1 : 0;
  state.SetItemsProcessed(state.iterations() * rows * cols);
}

BENCHMARK(BM_CumSum)
    ->ArgNames({"rows", "cols", "axis"})
    ->Args({8, 65536, 1})
    ->Args({65536, 8, 0})
    ->Args({64, 4096, 1})
    ->Args({4096, 64, 0})
    ->Args({1, 1000000, 1})
    ->Args({262144, 16, 1})
    ->Args({1048576, 4, 1})
    ->Args({16384, 64, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!kiln::vulkan_available()) {
    std::printf("bench_scan: no Vulkan device (%s)\n", kiln::vulkan_status().to_string().c_str());
    return 0;
  }
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
