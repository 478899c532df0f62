// kiln bench: the host CPU's FP32 FMA peak. On a machine whose Vulkan device is a CPU
// implementation (lavapipe, SwiftShader) it is the ceiling of every kernel Kiln runs there, so
// the GEMM benchmark reports its rate as a fraction of it. Every core runs independent chains
// of vector FMAs (enough of them to cover the FMA latency on two FMA ports) from one start
// signal; the peak is the best of a few such runs.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "tools/bench.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KILN_BENCH_X86 1
#endif

namespace kiln::tools::bench {
namespace {

#if KILN_BENCH_X86
// Each call runs `iters` rounds of kChains FMAs on vectors of 8 (or 16) floats and returns the
// float lanes computed; the sums go to `sink` so that the loop is not removed. acc = acc * m + a
// with m just below 1 stays near a / (1 - m): no overflow, no subnormals.
constexpr int kChains256 = 12;  // 16 ymm registers
constexpr int kChains512 = 24;  // 32 zmm registers

__attribute__((target("avx2,fma"))) int64_t fma_chains_256(int64_t iters, float* sink) {
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-3f);
  __m256 acc[kChains256];
#pragma GCC unroll 12
  for (int i = 0; i < kChains256; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains256; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains256; ++i) s = _mm256_add_ps(s, acc[i]);
  *sink += _mm256_cvtss_f32(s);
  return iters * kChains256 * 8;
}

__attribute__((target("avx512f"))) int64_t fma_chains_512(int64_t iters, float* sink) {
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-3f);
  __m512 acc[kChains512];
#pragma GCC unroll 24
  for (int i = 0; i < kChains512; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains512; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains512; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  *sink += lanes[0];
  return iters * kChains512 * 16;
}
#endif

using ChainFn = int64_t (*)(int64_t, float*);

/// GFLOP/s of `fn` on `threads` threads started together, each running `iters` rounds.
double run_on_threads(ChainFn fn, int threads, int64_t iters) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<int64_t> lanes(static_cast<size_t>(threads), 0);
  std::vector<float> sinks(static_cast<size_t>(threads), 0.0f);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      lanes[static_cast<size_t>(t)] = fn(iters, &sinks[static_cast<size_t>(t)]);
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& th : pool) th.join();
  const double seconds = ms_since(t0) / 1e3;
  double total = 0;
  for (int64_t l : lanes) total += static_cast<double>(l);
  return seconds > 0 ? 2.0 * total / seconds / 1e9 : kNaN;  // an FMA counts 2
}

/// The best of `runs` runs of about `seconds` each after an untimed one (the cores' clocks
/// settle), the round count set from a short single-thread run.
double peak_of(ChainFn fn, int threads, double seconds, int runs) {
  float sink = 0;
  const int64_t probe = int64_t{1} << 16;
  const auto t0 = Clock::now();
  const int64_t lanes = fn(probe, &sink);
  const double probe_s = std::max(ms_since(t0) / 1e3, 1e-6);
  const double lanes_per_s = static_cast<double>(lanes) / probe_s;
  const int64_t iters = std::max<int64_t>(
      probe, static_cast<int64_t>(seconds * lanes_per_s / static_cast<double>(lanes / probe)));
  double best = kNaN;
  run_on_threads(fn, threads, iters);
  for (int r = 0; r < runs; ++r) {
    const double g = run_on_threads(fn, threads, iters);
    if (std::isnan(best) || g > best) best = g;
  }
  return best;
}

}  // namespace

FmaPeak measure_fma_peak(int threads, bool quick) {
  FmaPeak p;
  p.threads = threads;
#if KILN_BENCH_X86
  const double seconds = quick ? 0.02 : 0.1;
  const int runs = quick ? 1 : 5;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    p.gflops_256 = peak_of(fma_chains_256, threads, seconds, runs);
  if (__builtin_cpu_supports("avx512f")) {
    p.gflops_widest = peak_of(fma_chains_512, threads, seconds, runs);
    p.widest_bits = 512;
  } else if (!std::isnan(p.gflops_256)) {
    p.gflops_widest = p.gflops_256;
    p.widest_bits = 256;
  }
#else
  (void)quick;
#endif
  return p;
}

}  // namespace kiln::tools::bench
