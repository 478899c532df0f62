// kiln demo --chain: y = relu((x * a + b) * c - d) on the default Vulkan device, fused against
// unfused and eager.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "kiln/kiln.h"
#include "tools/commands.h"

namespace kiln::tools {
namespace {

Tensor program(const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& c,
               const Tensor& d) {
  return relu((x * a + b) * c - d);
}

std::vector<float> random_vector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

template <typename F>
double time_ms(F&& f, int iters) {
  f();  // warm-up (first dispatch compiles the pipeline in the driver)
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];  // median
}

}  // namespace

int chain_main(const ChainOptions& o) {
  try {
    if (!vulkan_available()) {
      fmt::print(stderr, "kiln demo --chain: no Vulkan device: {}\n", vulkan_status().to_string());
      return 1;
    }
    std::mt19937 rng(42);
    const size_t n = static_cast<size_t>(o.rows * o.cols);
    Tensor x_cpu = Tensor::from_vector(random_vector(n, rng), {o.rows, o.cols});
    std::vector<Tensor> vecs_cpu;
    for (int i = 0; i < 4; ++i)
      vecs_cpu.push_back(
          Tensor::from_vector(random_vector(static_cast<size_t>(o.cols), rng), {o.cols}));
    Tensor x = x_cpu.to(Device::vulkan());
    std::vector<Tensor> v;
    for (const Tensor& t : vecs_cpu) v.push_back(t.to(Device::vulkan()));

    fmt::print("kiln demo --chain: y = relu((x * a + b) * c - d), x f32[{}, {}], a..d f32[{}]\n",
               o.rows, o.cols, o.cols);
    CompileOptions fused_opts;
    fused_opts.name = "demo_fused";
    CompileOptions unfused_opts;
    unfused_opts.name = "demo_unfused";
    unfused_opts.fuse = false;
    auto fused = compile(program, fused_opts);
    auto unfused = compile(program, unfused_opts);

    auto t0 = std::chrono::steady_clock::now();
    Tensor y = fused(x, v[0], v[1], v[2], v[3]);
    double first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto info = fused.entries().at(0);
    fmt::print("fused: {} kernel(s):", info.kernels.size());
    for (const auto& k : info.kernels) fmt::print(" {}", k);
    fmt::print("  (first call incl. trace + compile: {:.1f} ms)\n", first_ms);
    unfused(x, v[0], v[1], v[2], v[3]);
    fmt::print("unfused: {} kernel(s)\n", unfused.entries().at(0).kernels.size());

    double fused_ms = time_ms([&] { fused(x, v[0], v[1], v[2], v[3]); }, o.iters);
    double unfused_ms = time_ms([&] { unfused(x, v[0], v[1], v[2], v[3]); }, o.iters);
    double eager_ms = time_ms([&] { program(x, v[0], v[1], v[2], v[3]); }, o.iters);
    fmt::print("median per call over {} iterations:\n", o.iters);
    fmt::print("  fused    {:9.3f} ms\n", fused_ms);
    fmt::print("  unfused  {:9.3f} ms  ({:.2f}x the fused time)\n", unfused_ms,
               unfused_ms / fused_ms);
    fmt::print("  eager    {:9.3f} ms  ({:.2f}x; one submission per op)\n", eager_ms,
               eager_ms / fused_ms);

    // Check against the CPU interpreter.
    std::vector<float> got = y.to_vector<float>();
    std::vector<float> want =
        program(x_cpu, vecs_cpu[0], vecs_cpu[1], vecs_cpu[2], vecs_cpu[3]).to_vector<float>();
    double max_err = 0;
    for (size_t i = 0; i < n; ++i) max_err = std::max(max_err, double(std::fabs(got[i] - want[i])));
    bool match = max_err <= 1e-5;
    fmt::print("result vs CPU interpreter: {} (max abs error {:.3g})\n",
               match ? "MATCH" : "MISMATCH", max_err);
    RuntimeCounters c = runtime_counters();
    fmt::print("pipelines created: {}, validation errors: {}\n", c.pipelines_created,
               c.validation_errors);
    return match ? 0 : 2;
  } catch (const Error& e) {
    fmt::print(stderr, "kiln demo --chain: {}\n", e.what());
    return 1;
  }
}

}  // namespace kiln::tools
