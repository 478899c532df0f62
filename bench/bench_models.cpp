// GEMM and a small transformer encoder on the default Vulkan device, side by side in one run.
//
//   BM_Gemm/1024/mode   f32 1024^3 matmul, GFLOP/s counter. mode 0: A·B and 1: A·Bᵀ (the
//                       row-block kernel on devices with subgroup shuffles), 2: Aᵀ·B (the tiled
//                       shared-memory kernel, which serves operands with fused prologues)
//   BM_Head/M/mode/K/N  f32 [M, K] x [K, N]: A·B (0), A·Bᵀ (1); the vocabulary head's
//                       [512, 512] x [512, 30000] and a GPT-2 MLP's two products
//   BM_Attention/S/fused  causal attention over q, k, v f32[4, 8, S, 64]: the flash-style
//                       kernel (fused:1) against scores + softmax + product kernels (fused:0)
//   BM_Encoder/fused    the small encoder (d 64, 4 heads, FFN 128, 2 layers, vocab 100, B 4,
//                       S 64) compiled with fusion
//   BM_Encoder/unfused  the same graph, one kernel per op
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "bench/bench_util.h"
#include "bench/workloads.h"
#include "kiln/kiln.h"

namespace {

using kiln::Tensor;

Tensor random_matrix(int64_t r, int64_t c, uint32_t seed) {
  return kiln::bench::random_tensor({r, c}, seed);
}

void BM_Gemm(benchmark::State& state) {
  const int64_t n = state.range(0), mode = state.range(1);
  Tensor a = random_matrix(n, n, 1), b = random_matrix(n, n, 2);
  auto f = kiln::compile(
      [mode](const Tensor& x, const Tensor& y) {
        return kiln::bench::gemm(x, y, static_cast<int>(mode));
      },
      {.name = "gemm"});
  f(a, b);  // trace, compile, and the driver's first-dispatch compile
  for (auto _ : state) benchmark::DoNotOptimize(f(a, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(kiln::bench::gemm_flops(n) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Gemm)
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Args({1024, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// A linear layer's product: A f32[M, K] times a [K, N] weight, as A·B (mode 0, the layout ONNX
/// exporters write) or A·Bᵀ with the weight stored [N, K] (mode 1, the layout of nn::Linear).
/// The vocabulary head's weight (61 MB) does not fit in the caches, unlike BM_Gemm's.
void BM_Head(benchmark::State& state) {
  const int64_t m = state.range(0), mode = state.range(1);
  const int64_t k = state.range(2), n = state.range(3);
  Tensor a = random_matrix(m, k, 6);
  Tensor w = mode == 1 ? random_matrix(n, k, 7) : random_matrix(k, n, 7);
  auto f = kiln::compile(
      [mode](const Tensor& x, const Tensor& y) {
        return kiln::matmul(x, y, false, mode == 1);
      },
      {.name = "head"});
  f(a, w);
  for (auto _ : state) benchmark::DoNotOptimize(f(a, w));
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(m * k) * static_cast<double>(n) *
          static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Head)
    ->Args({512, 0, 512, 30000})
    ->Args({512, 1, 512, 30000})
    ->Args({1024, 0, 768, 3072})
    ->Args({1024, 0, 3072, 768})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// Causal multi-head attention at the seed's head shape: q, k, v f32[4, 8, S, 64], the mask
/// built in the graph. Fused, it is one flash-style kernel (FusionRule::kAttention); unfused,
/// the scores, mask, softmax and product are separate kernels.
void BM_Attention(benchmark::State& state) {
  const int64_t s = state.range(0);
  const bool fuse = state.range(1) != 0;
  auto head = [s](uint32_t seed) {
    return kiln::reshape(random_matrix(4 * 8 * s, 64, seed), {4, 8, s, 64});
  };
  Tensor q = head(3), k = head(4), v = head(5);
  auto f = kiln::compile(
      [](const Tensor& x, const Tensor& y, const Tensor& z) {
        Tensor mask = kiln::nn::causal_mask(x.size(2), x.device());
        return kiln::matmul(kiln::softmax(kiln::matmul(x, y, false, true) * 0.125 + mask, -1), z);
      },
      {.name = "attention", .fuse = fuse});
  f(q, k, v);
  for (auto _ : state) benchmark::DoNotOptimize(f(q, k, v));
  state.counters["GFLOP/s"] = benchmark::Counter(
      4.0 * 4 * 8 * s * s * 64 * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["kernels"] = static_cast<double>(f.entries().at(0).kernels.size());
}
BENCHMARK(BM_Attention)
    ->ArgNames({"S", "fused"})
    ->Args({256, 1})
    ->Args({256, 0})
    ->Args({1024, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The seed's model at a small size: vocab 100, d 64, 2 layers, 4 heads, FFN 128.
kiln::nn::TextEncoder small_encoder() {
  kiln::nn::WeightGenerator gen(7);
  return kiln::nn::TextEncoder({100, 64, 2, 4, 128}, gen, kiln::Device::vulkan());
}

void run_encoder(benchmark::State& state, bool fuse) {
  static const kiln::nn::TextEncoder model = small_encoder();
  std::vector<int64_t> ids(4 * 64);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 37) % 100);
  Tensor t = Tensor::from_vector(ids, {4, 64}, kiln::Device::vulkan());
  auto f = kiln::compile([](const Tensor& x) { return model(x); },
                         {.name = fuse ? "encoder_fused" : "encoder_unfused", .fuse = fuse});
  f(t);
  for (auto _ : state) benchmark::DoNotOptimize(f(t));
  state.counters["kernels"] = static_cast<double>(f.entries().at(0).kernels.size());
}
void BM_EncoderFused(benchmark::State& state) {
  run_encoder(state, true);
}
void BM_EncoderUnfused(benchmark::State& state) {
  run_encoder(state, false);
}
BENCHMARK(BM_EncoderFused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EncoderUnfused)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!kiln::vulkan_available()) {
    std::printf("bench_models: no Vulkan device (%s)\n", kiln::vulkan_status().to_string().c_str());
    return 0;
  }
  kiln::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratio("small encoder: unfused / fused", "BM_EncoderUnfused/real_time",
                       "BM_EncoderFused/real_time");
  reporter.print_ratio("attention S=256: unfused / fused", "BM_Attention/S:256/fused:0/real_time",
                       "BM_Attention/S:256/fused:1/real_time");
  benchmark::Shutdown();
  return 0;
}
