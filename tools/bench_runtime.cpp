// kiln bench: runtime costs. "overhead": host time per cached call of a tiny compiled function,
// split into guard evaluation + cache lookup alone and the whole call (submission and fence
// included), with the allocations and command-buffer recordings each cached call makes.
// "memory": peak device bytes of one call of the seed encoder against its weights plus the
// largest set of intermediates live at once.
#include <fmt/core.h>

#include <algorithm>

#include "bench/workloads.h"
#include "kiln/kiln.h"
#include "tools/bench.h"

namespace kiln::tools::bench {
namespace {

double per_call_us(Clock::time_point t0, int calls) {
  return ms_since(t0) * 1e3 / calls;
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Result bench_overhead(const Context& ctx) {
  const int rounds = ctx.reps(5, 3);
  const int guard_iters = ctx.quick ? 20000 : 200000;
  const int device_calls = ctx.quick ? 50 : 300;
  const int host_calls = ctx.quick ? 2000 : 20000;
  Result r{.name = "overhead",
           .title =
               "per cached call of a + b on f32[64] (2 inputs): guards + cache lookup "
               "alone, and the whole call"};
  r.figure = {"guard_lookup_us", "guards + lookup per call", kNaN, "us", "<=", 1.0};
  try {
    std::vector<Tensor> args = {kiln::bench::random_tensor({64}, 1),
                                kiln::bench::random_tensor({64}, 2)};
    // (a) Guard evaluation + lookup as a cached call does it: the entries are scanned in
    // order and the first whose guards all pass serves (Compiled::cached, which runs nothing).
    auto f = compile(kiln::bench::tiny_add, {.name = "bench_overhead"});
    ctx.show("overhead: first call (trace + compile) ...");
    (void)f(args[0], args[1]);
    (void)f(args[0], args[1]);
    std::vector<double> guard_us;
    volatile bool sink = false;
    for (int round = 0; round < rounds; ++round) {
      ctx.show(fmt::format("overhead: guards + lookup, round {}/{} ...", round + 1, rounds));
      auto t0 = Clock::now();
      for (int i = 0; i < guard_iters; ++i) sink = f.cached(args[0], args[1]);
      guard_us.push_back(per_call_us(t0, guard_iters));
    }
    if (!sink) r.error = "the cached entry's guards failed";
    r.figure.value = median(guard_us);
    const std::vector<EntryInfo> infos = f.entries();
    const std::string& lines = infos.empty() ? std::string() : infos[0].guards;  // one a line
    r.add("guards", "guards checked per call",
          static_cast<double>(std::count(lines.begin(), lines.end(), '\n') +
                              (!lines.empty() && lines.back() != '\n')),
          "");

    // (b) The whole cached call on the device: guards, lookup, replay, submission, fence.
    const RuntimeCounters before = runtime_counters();
    std::vector<double> call_us;
    for (int round = 0; round < rounds; ++round) {
      ctx.show(fmt::format("overhead: cached device calls, round {}/{} ...", round + 1, rounds));
      auto t0 = Clock::now();
      for (int i = 0; i < device_calls; ++i) (void)f(args[0], args[1]);
      call_us.push_back(per_call_us(t0, device_calls));
    }
    const RuntimeCounters after = runtime_counters();
    const double calls = static_cast<double>(rounds) * device_calls;
    auto per_call = [&](uint64_t RuntimeCounters::*field) {
      return static_cast<double>(after.*field - before.*field) / calls;
    };
    r.add("call_us", "whole cached call on the device", median(call_us), "us");
    r.add("submissions_per_call", "submissions per cached call",
          per_call(&RuntimeCounters::submissions), "");
    r.add("dispatches_per_call", "dispatches per cached call",
          per_call(&RuntimeCounters::dispatches), "");
    r.add("command_buffers_recorded_per_call", "command buffers recorded per cached call",
          per_call(&RuntimeCounters::command_buffers_recorded), "");
    r.add("buffer_allocations_per_call", "buffer sub-allocations per cached call",
          per_call(&RuntimeCounters::buffer_allocations), "");
    r.add("memory_allocations_per_call", "vkAllocateMemory calls per cached call",
          per_call(&RuntimeCounters::memory_allocations), "");
    if (f.stats().compiles != 1)
      r.error = fmt::format("{} compiles (expected 1)", f.stats().compiles);

    // (c) The same cached call on CPU tensors: the host path without the device (guards,
    // lookup, interpreter replay of one 64-element add).
    std::vector<Tensor> host = {args[0].to(Device::cpu()), args[1].to(Device::cpu())};
    auto g = compile(kiln::bench::tiny_add, {.name = "bench_overhead_cpu"});
    (void)g(host[0], host[1]);
    std::vector<double> host_us;
    for (int round = 0; round < rounds; ++round) {
      ctx.show(fmt::format("overhead: cached CPU calls, round {}/{} ...", round + 1, rounds));
      auto t0 = Clock::now();
      for (int i = 0; i < host_calls; ++i) (void)g(host[0], host[1]);
      host_us.push_back(per_call_us(t0, host_calls));
    }
    r.add("cpu_call_us", "whole cached call on CPU tensors (interpreter)", median(host_us), "us");
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

Result bench_memory(const Context& ctx) {
  const kiln::bench::EncoderSetup setup =
      ctx.quick ? kiln::bench::small_encoder() : kiln::bench::full_encoder();
  const int64_t seq = ctx.quick ? 64 : 1024;
  const auto& c = setup.config;
  Result r{
      .name = "memory",
      .title = fmt::format("peak device memory of one call of the seed encoder (vocab {}, d {}, "
                           "{} layers, FFN {}), batch {}, S={}",
                           c.vocab, c.dim, c.layers, c.ffn, setup.batch, seq)};
  r.figure = {"peak_over_bound", "peak / (weights + largest live set)", kNaN, "x", "<=", 1.5};
  try {
    // Device bytes still held by whatever ran before (cached tensors of earlier benchmarks) are
    // not the encoder's: every figure below is counted from this baseline.
    const double baseline = static_cast<double>(runtime_counters().device_bytes_allocated);
    ctx.show("memory: building the encoder ...");
    nn::TextEncoder model = kiln::bench::make_encoder(setup);
    const double weights = static_cast<double>(kiln::bench::encoder_weight_bytes(model));
    Tensor ids = kiln::bench::encoder_ids(setup, seq);
    auto f = compile([&model](const Tensor& t) { return model(t); },
                     {.name = "bench_memory", .dynamic = Dynamic::kFalse});
    const double resident =
        static_cast<double>(runtime_counters().device_bytes_allocated) - baseline;
    ctx.show(fmt::format("memory: first call at S={} (trace + compile + run) ...", seq));
    reset_device_peak();
    (void)f(ids);  // the output is dropped before the next call
    const double first_peak = static_cast<double>(runtime_counters().device_bytes_peak) - baseline;
    ctx.show(fmt::format("memory: second call at S={} ...", seq));
    reset_device_peak();
    Tensor y = f(ids);
    const double peak = static_cast<double>(runtime_counters().device_bytes_peak) - baseline;
    const double output = static_cast<double>(y.numel()) * 4.0;
    const EntryInfo entry = f.entries().at(0);
    const double live = static_cast<double>(entry.largest_live_bytes);
    r.add("weights_mib", "weights", weights / kMiB, "MiB");
    r.add("output_mib", "output (logits)", output / kMiB, "MiB");
    r.add("resident_before_mib", "allocated before the first call (weights, ids)", resident / kMiB,
          "MiB");
    r.add("largest_live_mib", "largest live set (memory plan)", live / kMiB, "MiB");
    r.add("arena_mib", "arena (memory plan)", static_cast<double>(entry.arena_bytes) / kMiB, "MiB");
    r.add("first_call_peak_mib", "peak during the first call", first_peak / kMiB, "MiB");
    r.add("peak_mib", "peak during a cached call", peak / kMiB, "MiB");
    r.add("peak_over_weights", "peak / weights", peak / weights, "x");
    // The output is part of every live set, so this bounds the figure from above.
    r.add("peak_over_weights_output", "peak / (weights + output)", peak / (weights + output), "x");
    r.add("kernels", "kernels", static_cast<double>(entry.kernels.size()), "");
    r.figure.value = peak / (weights + live);  // NaN until the memory plan reports `live`
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace kiln::tools::bench
