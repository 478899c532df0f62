// kiln bench: kernel throughput. "chain": the 6-op elementwise chain fused (one kernel) against
// unfused (six dispatches); "copy": the fused chain's bandwidth against a one-read-one-write
// kernel over the same bytes; "gemm": f32 GEMM GFLOP/s, against the host's FMA peak where the
// device is a CPU implementation; "conv": a dense 3x3 conv's GFLOP/s on the device and on the
// interpreter. Variants run interleaved, one call of each per round, so that drift on a shared
// machine hits them alike; medians are reported.
#include <fmt/core.h>

#include <cmath>
#include <map>
#include <thread>

#include "bench/workloads.h"
#include "kiln/kiln.h"
#include "tools/bench.h"
#include "vk/device.h"

namespace kiln::tools::bench {
namespace {

using kiln::bench::chain6;
using kiln::bench::copy1;

/// Times `rounds` rounds of calls to each of `fns` (in order within a round) after one untimed
/// call each (trace, compile, the driver's first-dispatch compile). Returns per-variant medians.
template <typename Fn>
std::vector<double> interleaved_ms(const Context& ctx, const std::string& what,
                                   const std::vector<std::pair<std::string, Fn>>& fns, int rounds) {
  for (const auto& [name, fn] : fns) {
    ctx.show(fmt::format("{}: {} first call (trace + compile) ...", what, name));
    fn();
  }
  std::vector<std::vector<double>> times(fns.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < fns.size(); ++i) {
      ctx.show(fmt::format("{}: round {}/{}, {} ...", what, r + 1, rounds, fns[i].first));
      auto t0 = Clock::now();
      fns[i].second();  // a compiled call returns after its submission's fence
      times[i].push_back(ms_since(t0));
    }
  }
  std::vector<double> out;
  for (const auto& t : times) out.push_back(median(t));
  return out;
}

double gbps(double bytes, double ms) {
  return bytes / (ms * 1e6);
}

/// max |x - y| over two outputs of one computation; NaN where a difference is NaN or the
/// element counts differ (the callers' `<=` checks then fail).
double max_abs_diff(const Tensor& x, const Tensor& y) {
  const std::vector<float> a = x.to_vector<float>(), b = y.to_vector<float>();
  if (a.size() != b.size()) return kNaN;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    if (std::isnan(d)) return kNaN;
    m = std::max(m, d);
  }
  return m;
}

}  // namespace

std::vector<Result> bench_chain_and_copy(const Context& ctx, bool chain, bool copy) {
  const int64_t rows = ctx.quick ? 512 : 4096, cols = ctx.quick ? 1024 : 4096;
  const int rounds = ctx.reps(7, 3);
  const double bytes = kiln::bench::chain_bytes(rows, cols);
  const std::string size =
      fmt::format("x f32[{}, {}] ({:.0f} MB read + written)", rows, cols, bytes / 1e6);
  Result rc{.name = "chain",
            .title = "6-op chain relu((x*a+b)*c-d)+x, " + size +
                     ": one fused kernel vs six "
                     "dispatches in one submission"};
  Result rb{.name = "copy",
            .title = "fused chain vs a copy kernel (y = -x) over the same bytes, " + size};
  rc.figure = {"unfused_over_fused", "unfused / fused", kNaN, "x", ">=", 5.5};
  rb.figure = {"fused_over_copy", "fused chain time / copy time", kNaN, "x", "<=", kNaN};
  try {
    ctx.show("chain: uploading inputs ...");
    std::vector<Tensor> t = kiln::bench::chain_inputs(rows, cols);
    auto fused = compile(chain6, {.name = "bench_chain_fused"});
    auto unfused = compile(chain6, {.name = "bench_chain_unfused", .fuse = false});
    auto copier = compile(copy1, {.name = "bench_copy"});
    Tensor y_fused, y_unfused;
    using Fn = std::function<void()>;
    std::vector<std::pair<std::string, Fn>> fns;
    if (chain || copy)
      fns.push_back({"fused", [&] { y_fused = fused(t[0], t[1], t[2], t[3], t[4]); }});
    if (chain)
      fns.push_back({"unfused", [&] { y_unfused = unfused(t[0], t[1], t[2], t[3], t[4]); }});
    if (copy) fns.push_back({"copy", [&] { (void)copier(t[0]); }});
    std::vector<double> ms = interleaved_ms(ctx, "chain", fns, rounds);
    const double fused_ms = ms[0];
    if (chain) {
      const double unfused_ms = ms[1];
      const auto fused_kernels = fused.entries().at(0).kernels.size();
      const auto unfused_kernels = unfused.entries().at(0).kernels.size();
      rc.add("fused_ms", fmt::format("fused ({} kernel)", fused_kernels), fused_ms, "ms");
      rc.add("unfused_ms", fmt::format("unfused ({} kernels)", unfused_kernels), unfused_ms, "ms");
      rc.add("fused_kernels", "fused kernels", static_cast<double>(fused_kernels), "");
      rc.add("unfused_kernels", "unfused kernels", static_cast<double>(unfused_kernels), "");
      rc.figure.value = unfused_ms / fused_ms;
      // The two variants must compute the same thing (a cheap sanity check, not a test).
      ctx.show("chain: comparing fused and unfused outputs ...");
      const double max_diff = max_abs_diff(y_fused, y_unfused);
      rc.add("max_abs_diff", "max |fused - unfused|", max_diff, "");
      if (!(max_diff <= 1e-5)) rc.error = fmt::format("fused and unfused differ by {}", max_diff);
    }
    if (copy) {
      const double copy_ms = ms.back();
      rb.add("fused_ms", "fused chain", fused_ms, "ms");
      rb.add("copy_ms", "copy kernel (y = -x)", copy_ms, "ms");
      rb.add("fused_gbps", "fused chain bandwidth", gbps(bytes, fused_ms), "GB/s");
      rb.add("copy_gbps", "copy bandwidth", gbps(bytes, copy_ms), "GB/s");
      rb.figure.value = fused_ms / copy_ms;
    }
  } catch (const Error& e) {
    rc.error = rb.error = e.what();
  }
  std::vector<Result> out;
  if (chain) out.push_back(std::move(rc));
  if (copy) out.push_back(std::move(rb));
  return out;
}

Result bench_gemm(const Context& ctx) {
  const int64_t n = ctx.quick ? 256 : 1024;
  const int rounds = ctx.reps(5, 2);
  Result r{.name = "gemm",
           .title = fmt::format("f32 GEMM {0}x{0}x{0}: A·B and A·Bᵀ (row-block kernel), "
                                "Aᵀ·B (tiled kernel)",
                                n)};
  // On a CPU implementation the goal is a fraction of what the host's cores can do at all
  // (lavapipe runs 256-bit vectors by default and splits each FMA into a multiply and an add,
  // so about 0.5 is its ceiling); on a GPU, a rate.
  auto dev = vk::VulkanDevice::default_device();
  const bool cpu_device = dev.ok() && (*dev)->info().type == "cpu";
  r.figure = {"gflops", "A·B GFLOP/s", kNaN, "GFLOP/s", ">=", 40};
  try {
    // The peak first, while no driver thread is busy.
    FmaPeak peak;
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (cpu_device) {
      ctx.show("gemm: the host's FMA peak ...");
      peak = measure_fma_peak(threads, ctx.quick);
    }
    ctx.show("gemm: uploading inputs ...");
    Tensor a = kiln::bench::random_tensor({n, n}, 1), b = kiln::bench::random_tensor({n, n}, 2);
    auto ab = compile([](const Tensor& x, const Tensor& y) { return kiln::bench::gemm(x, y, 0); },
                      {.name = "bench_gemm_ab"});
    auto abt = compile([](const Tensor& x, const Tensor& y) { return kiln::bench::gemm(x, y, 1); },
                       {.name = "bench_gemm_abt"});
    auto atb = compile([](const Tensor& x, const Tensor& y) { return kiln::bench::gemm(x, y, 2); },
                       {.name = "bench_gemm_atb"});
    using Fn = std::function<void()>;
    std::vector<std::pair<std::string, Fn>> fns = {{"A·B", [&] { (void)ab(a, b); }},
                                                   {"A·Bᵀ", [&] { (void)abt(a, b); }},
                                                   {"Aᵀ·B", [&] { (void)atb(a, b); }}};
    std::vector<double> ms = interleaved_ms(ctx, "gemm", fns, rounds);
    const double gflop = kiln::bench::gemm_flops(n) / 1e9;
    r.add("ab_ms", "A·B", ms[0], "ms");
    r.add("abt_ms", "A·Bᵀ", ms[1], "ms");
    r.add("atb_ms", "Aᵀ·B (tiled)", ms[2], "ms");
    const double ab_gflops = gflop / (ms[0] / 1e3);
    r.add("ab_gflops", "A·B GFLOP/s", ab_gflops, "GFLOP/s");
    r.add("abt_gflops", "A·Bᵀ GFLOP/s", gflop / (ms[1] / 1e3), "GFLOP/s");
    r.add("atb_gflops", "Aᵀ·B GFLOP/s", gflop / (ms[2] / 1e3), "GFLOP/s");
    if (cpu_device) {
      r.add("fma_peak_256_gflops",
            fmt::format("host FMA peak, 256-bit vectors, {} threads", threads), peak.gflops_256,
            "GFLOP/s");
      r.add("fma_peak_widest_gflops",
            fmt::format("host FMA peak, {}-bit vectors, {} threads", peak.widest_bits, threads),
            peak.gflops_widest, "GFLOP/s");
      if (!std::isnan(peak.gflops_256)) {
        r.figure = {"ab_over_fma_peak",
                    "A·B / host FMA peak (256-bit)",
                    ab_gflops / peak.gflops_256,
                    "x",
                    ">=",
                    0.4};
        r.add("ab_over_fma_peak", "A·B / host FMA peak (256-bit)", r.figure.value, "x");
      }
    }
    if (std::isnan(r.figure.value)) r.figure.value = ab_gflops;
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

Result bench_conv(const Context& ctx) {
  // ResNet's first stage: 64 -> 64 channels, 3x3, stride 1, pad 1, at 56x56 (quick: 16x16).
  const int64_t c = ctx.quick ? 32 : 64, hw = ctx.quick ? 16 : 56, batch = 1;
  const int rounds = ctx.reps(5, 2);
  const double gflop =
      2.0 * static_cast<double>(batch * c * hw * hw) * static_cast<double>(c * 9) / 1e9;
  Result r{.name = "conv",
           .title = fmt::format("f32 conv x [{0}, {1}, {2}, {2}], w [{1}, {1}, 3, 3] + bias, pad 1 "
                                "({3:.3f} GFLOP): Kiln's kernels on the device and the interpreter",
                                batch, c, hw, gflop)};
  r.figure = {"gflops", "device conv GFLOP/s", kNaN, "GFLOP/s", ">=", 40};
  try {
    ctx.show("conv: uploading inputs ...");
    auto conv3x3 = [](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv(x, w, b, {1, 1}, {1, 1, 1, 1});
    };
    const Shape xs{batch, c, hw, hw}, ws{c, c, 3, 3}, bs{c};
    using kiln::bench::random_tensor;
    Tensor x = random_tensor(xs, 11), w = random_tensor(ws, 12), b = random_tensor(bs, 13);
    Tensor hx = random_tensor(xs, 11, Device::cpu()), hw_ = random_tensor(ws, 12, Device::cpu()),
           hb = random_tensor(bs, 13, Device::cpu());
    auto on_device = compile(conv3x3, {.name = "bench_conv"});
    auto on_cpu = compile(conv3x3, {.name = "bench_conv_cpu"});
    Tensor yd, yc;
    using Fn = std::function<void()>;
    std::vector<std::pair<std::string, Fn>> fns = {
        {"device", [&] { yd = on_device(x, w, b); }},
        {"interpreter", [&] { yc = on_cpu(hx, hw_, hb); }}};
    std::vector<double> ms = interleaved_ms(ctx, "conv", fns, rounds);
    const auto entries = on_device.entries();
    const size_t kernels = entries.empty() ? 0 : entries.front().kernels.size();
    r.add("device_ms", fmt::format("device ({} kernels)", kernels), ms[0], "ms");
    r.add("cpu_ms", "interpreter", ms[1], "ms");
    r.add("kernels", "kernels", static_cast<double>(kernels), "");
    r.add("device_gflops", "device GFLOP/s", gflop / (ms[0] / 1e3), "GFLOP/s");
    r.add("cpu_gflops", "interpreter GFLOP/s", gflop / (ms[1] / 1e3), "GFLOP/s");
    r.figure.value = gflop / (ms[0] / 1e3);
    // Both compute the same conv (a sanity check, not a test).
    const double max_diff = max_abs_diff(yd, yc);
    r.add("max_abs_diff", "max |device - interpreter|", max_diff, "");
    if (!(max_diff <= 1e-3)) r.error = fmt::format("device and interpreter differ by {}", max_diff);
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace kiln::tools::bench
