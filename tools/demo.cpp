// kiln demo: the seed's benchmark. A text encoder (embedding -> transformer encoder with a causal
// mask built inside forward from the sequence length -> vocabulary head) is compiled four ways
// (static, dynamic, auto, static after a warm-up) and swept over sequence lengths. Per length:
// first-call and steady latency, compiles, kernels, GFLOP/s and a check against the interpreter.
// docs/demo.md explains every column.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "tools/commands.h"
#include "vk/device.h"

namespace kiln::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTolerance = 1e-3;  // |got - want| / max(|want|, 1) on the sampled check

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Config {
  int64_t vocab = 30000;
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t ffn = 2048;
  int64_t layers = 4;
  int64_t batch = 4;
  std::vector<int64_t> lengths = {128, 256, 512, 768, 1024};
  uint64_t seed = 2024;  // weights
};

Config small_config() {
  Config c;
  c.vocab = 1000;
  c.d_model = 64;
  c.heads = 2;
  c.ffn = 128;
  c.layers = 1;
  c.batch = 2;
  c.lengths = {16, 32, 64, 96, 128};
  return c;
}

/// Matmul FLOPs of one forward (a multiply-add counts 2), with B batch, S sequence length,
/// D d_model, F FFN width, V vocabulary, L layers (heads split D, so they cancel out):
///   per layer  8·B·S·D²   q, k, v and output projections (4 × 2·B·S·D·D)
///            + 4·B·S²·D   attention scores Q·Kᵀ and P·V (2 × 2·B·H·S·S·(D/H))
///            + 4·B·S·D·F  feed-forward (2 × 2·B·S·D·F)
///   head       2·B·S·D·V
///   total      L·(8·B·S·D² + 4·B·S²·D + 4·B·S·D·F) + 2·B·S·D·V
/// The full S×S scores are counted (the causal mask is added, not skipped). Elementwise ops,
/// softmax and layer norms are left out. The seed's model: 29.1 GFLOP at S=128, 263 at S=1024.
double forward_flops(const Config& c, int64_t seq) {
  const double b = static_cast<double>(c.batch), s = static_cast<double>(seq);
  const double d = static_cast<double>(c.d_model), f = static_cast<double>(c.ffn);
  const double v = static_cast<double>(c.vocab), layers = static_cast<double>(c.layers);
  const double per_layer = 8 * b * s * d * d + 4 * b * s * s * d + 4 * b * s * d * f;
  return layers * per_layer + 2 * b * s * d * v;
}

/// The seed's DynamicTextEncoder with the demo's configuration and seed.
nn::TextEncoder make_encoder(const Config& c, Device dev) {
  nn::WeightGenerator gen(c.seed);
  return nn::TextEncoder({c.vocab, c.d_model, c.layers, c.heads, c.ffn}, gen, dev);
}

/// Token ids for `batch` rows of `seq`, the same for every strategy.
std::vector<int64_t> token_ids(int64_t batch, int64_t seq, int64_t vocab) {
  std::mt19937 rng(static_cast<uint32_t>(1000 + seq));
  std::uniform_int_distribution<int64_t> d(0, vocab - 1);
  std::vector<int64_t> v(static_cast<size_t>(batch * seq));
  for (int64_t& x : v) x = d(rng);
  return v;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One line on stderr, rewritten in place ("static S=512 call 2/4 ..."); only on a terminal.
class Progress {
 public:
  Progress() : enabled_(isatty(fileno(stderr)) != 0) {}
  ~Progress() { clear(); }
  void show(const std::string& text) {
    if (!enabled_) return;
    fmt::print(stderr, "\r{:<{}}", text, width_);
    width_ = std::max(width_, text.size());
    std::fflush(stderr);
  }
  void clear() {
    if (!enabled_ || width_ == 0) return;
    fmt::print(stderr, "\r{:<{}}\r", "", width_);
    std::fflush(stderr);
    width_ = 0;
  }

 private:
  bool enabled_;
  size_t width_ = 0;
};

struct Strategy {
  std::string name;
  Dynamic dynamic;
  bool warm_up;
};

std::optional<Strategy> strategy_named(const std::string& name) {
  if (name == "static") return Strategy{name, Dynamic::kFalse, false};
  if (name == "dynamic") return Strategy{name, Dynamic::kTrue, false};
  if (name == "auto") return Strategy{name, Dynamic::kAuto, false};
  if (name == "warm-up") return Strategy{name, Dynamic::kFalse, true};
  return std::nullopt;
}

struct Row {
  std::string strategy;
  int64_t seq = 0;
  double first_ms = kNaN;   // trace + compile (when the call compiles) + run + synchronise
  double steady_ms = kNaN;  // median of the further calls
  uint64_t compiles = 0;    // compiled.stats().compiles after the call
  uint64_t new_compiles = 0;
  int entry = -1;  // the cache entry that served the calls; -1: run eagerly
  bool symbolic = false;
  size_t kernels = 0;
  bool on_device = false;
  double gflop = 0;
  double gflops = kNaN;
  std::string check = "skipped";  // "match", "MISMATCH", "skipped"
  double max_error = kNaN;
  std::string error;
  // --background
  std::string served;      // what answered the first call: compiled, interp, cover, eager
  double worst_ms = kNaN;  // the slowest call at this length (the process's first left out)
  double bound_ms = kNaN;  // 3 x steady + 20 ms
};

struct Summary {
  std::string strategy;
  uint64_t compiles = 0;  // in the timed sweep
  uint64_t warmup_compiles = 0;
  double warmup_ms = 0;
  double sweep_ms = 0;   // sum of first-call latencies
  double steady_ms = 0;  // sum of steady latencies
  double total_ms() const { return warmup_ms + sweep_ms; }
  // Process-wide runtime counters over the strategy (the pipeline cache is shared by every
  // compiled function, so a later strategy reuses pipelines an earlier one built).
  uint64_t pipelines_created = 0;
  uint64_t pipeline_cache_hits = 0;
  uint64_t shader_compiles = 0;
  int errors = 0;
  int over_bound = 0;  // --background: lengths whose slowest call exceeded 3 x steady + 20 ms
};

/// The entry that served a call at length `seq`. Entries are tried in creation order and the
/// first whose guards pass serves: a static entry passes only at the length it was traced at
/// (`traced_at`), a symbolic one at every length of its class.
int served_entry(const std::vector<EntryInfo>& entries, const std::map<int64_t, int>& traced_at,
                 int64_t seq) {
  auto it = traced_at.find(seq);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].symbols.empty()) return static_cast<int>(i);
    if (it != traced_at.end() && it->second == static_cast<int>(i)) return static_cast<int>(i);
  }
  return -1;
}

std::string fmt_ms(double ms) {
  if (std::isnan(ms)) return "-";
  return ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.2f}", ms);
}

class Demo {
 public:
  Demo(const DemoOptions& o, Config c, Device dev)
      : o_(o), c_(std::move(c)), dev_(dev), model_(make_encoder(c_, dev)) {
    check_len_ = *std::min_element(c_.lengths.begin(), c_.lengths.end());
  }

  int run(const std::vector<Strategy>& strategies) {
    print_header();
    for (const Strategy& st : strategies) run_strategy(st);
    progress_.clear();
    const uint64_t validation_errors = dev_.is_cpu() ? 0 : runtime_counters().validation_errors;
    bool mismatch = false;
    int errors = 0;
    for (const Row& r : rows_) {
      mismatch |= r.check == "MISMATCH";
      errors += !r.error.empty();
    }
    for (const Summary& s : summaries_) errors += s.errors;
    if (o_.json) {
      print_json(validation_errors, !mismatch && errors == 0);
    } else {
      print_summary();
      if (validation_errors)
        fmt::print("validation errors: {} (KILN_VALIDATE)\n", validation_errors);
    }
    return errors ? 1 : mismatch ? 2 : 0;
  }

 private:
  void print_header() {
    if (o_.json) return;
    std::string lengths;
    for (int64_t s : c_.lengths) lengths += (lengths.empty() ? "" : ", ") + std::to_string(s);
    fmt::print(
        "kiln demo: text encoder (embedding {}x{}, {} encoder layer(s), {} heads, FFN {}, "
        "causal mask, head {}->{})\n",
        c_.vocab, c_.d_model, c_.layers, c_.heads, c_.ffn, c_.d_model, c_.vocab);
    fmt::print("batch {}, S in {{{}}}, device: {}, steady = median of {} call(s)\n", c_.batch,
               lengths, device_name(), o_.repeat);
    fmt::print("check: batch row 0 at S={} against the CPU interpreter (tolerance {:g})\n\n",
               check_len_, kTolerance);
    if (o_.background)
      fmt::print(
          "background compilation: first calls are served by the interpreter or a covering "
          "entry;\nsteady = after wait_ready(); worst = slowest call at that length (the "
          "process's first left out) against 3 x steady + 20 ms\n\n");
    fmt::print(
        "{:<9} {:>6} {:>11} {:>11} {:>9} {:>4} {:>8} {:>8} {:>9}  {}{}\n", "strategy", "S",
        "first ms", "steady ms", "compiles", "new", "kernels", "GFLOP", "GFLOP/s",
        o_.background ? fmt::format("{:<9} {:>17}  ", "served", "worst / bound ms") : std::string(),
        "check");
    std::fflush(stdout);
  }

  std::string device_name() const {
    if (dev_.is_cpu()) return "cpu (interpreter)";
    auto d = vk::VulkanDevice::default_device();
    return d.ok() ? "vulkan (" + (*d)->info().name + ")" : "vulkan";
  }

  void print_row(const Row& r) {
    if (o_.json) return;
    progress_.clear();
    std::string kernels = !r.error.empty() ? "-"
                          : r.entry < 0    ? "eager"
                          : r.on_device    ? std::to_string(r.kernels)
                                           : "interp";
    std::string check = r.check;
    if (!std::isnan(r.max_error)) check += fmt::format(" (max err {:.2g})", r.max_error);
    if (!r.error.empty()) check = "error: " + r.error;
    const std::string gflops = std::isnan(r.gflops) ? "-" : fmt::format("{:.3g}", r.gflops);
    std::string background;
    if (o_.background)
      background = fmt::format("{:<9} {:>17}  ", r.served,
                               fmt::format("{} / {}{}", fmt_ms(r.worst_ms), fmt_ms(r.bound_ms),
                                           r.worst_ms > r.bound_ms ? " OVER" : ""));
    fmt::print("{:<9} {:>6} {:>11} {:>11} {:>9} {:>4} {:>8} {:>8.3g} {:>9}  {}{}\n", r.strategy,
               r.seq, fmt_ms(r.first_ms), fmt_ms(r.steady_ms), r.compiles, r.new_compiles, kernels,
               r.gflop, gflops, background, check);
    std::fflush(stdout);
  }

  Tensor ids(int64_t seq) const {
    return Tensor::from_vector(token_ids(c_.batch, seq, c_.vocab), {c_.batch, seq}, dev_);
  }

  /// Batch row 0 at the check length on the CPU interpreter (computed once).
  const std::vector<float>& reference() {
    if (!reference_) {
      progress_.show(fmt::format("interpreter reference S={} (batch row 0) ...", check_len_));
      std::vector<int64_t> row = token_ids(c_.batch, check_len_, c_.vocab);
      row.resize(static_cast<size_t>(check_len_));
      Tensor cpu_ids = Tensor::from_vector(row, {1, check_len_});
      if (dev_.is_cpu()) {
        reference_ = model_(cpu_ids).to_vector<float>();
      } else {
        const nn::TextEncoder cpu_model = make_encoder(c_, Device::cpu());
        reference_ = cpu_model(cpu_ids).to_vector<float>();
      }
    }
    return *reference_;
  }

  void check(Row& r, const Tensor& y) {
    const std::vector<float>& want = reference();
    // On the host: the full-size logits exceed one storage-buffer binding (128 MiB on lavapipe).
    std::vector<float> got = slice(y.to(Device::cpu()), 0, 0, 1).to_vector<float>();
    if (got.size() != want.size()) {
      r.check = "MISMATCH";
      r.error =
          fmt::format("output has {} elements in row 0, expected {}", got.size(), want.size());
      return;
    }
    double max_err = std::isnan(r.max_error) ? 0 : r.max_error;  // over every output checked
    for (size_t i = 0; i < got.size(); ++i) {
      const double err =
          std::fabs(double(got[i]) - double(want[i])) / std::max(1.0, std::fabs(double(want[i])));
      if (!(err <= max_err)) max_err = err;  // NaN propagates
    }
    r.max_error = max_err;
    r.check = max_err <= kTolerance ? "match" : "MISMATCH";
  }

  void run_strategy(const Strategy& st) {
    CompileOptions opts;
    opts.name = "encoder_" + st.name;
    opts.dynamic = st.dynamic;
    // Room for one compile per length under dynamic=false, so no strategy hits the limit.
    opts.recompile_limit = std::max(8, static_cast<int>(c_.lengths.size()) + 1);
    opts.background = o_.background;
    const nn::TextEncoder& model = model_;
    auto fn = compile([&model](const Tensor& t) { return model(t); }, opts);
    Summary sum;
    sum.strategy = st.name;
    const RuntimeCounters counters_before = runtime_counters();
    std::map<int64_t, int> traced_at;     // length -> entry traced at it
    std::map<int64_t, double> warmup_at;  // --background: warm-up call latency per length
    // A timed call; the process's first is left out of the background bound.
    auto timed = [&](const Tensor& in, double* worst) {
      auto t0 = Clock::now();
      Tensor y = fn(in);  // returns after its submission's fence: the timers need no extra wait
      const double ms = ms_since(t0);
      if (worst && !first_call_of_process_) *worst = std::isnan(*worst) ? ms : std::max(*worst, ms);
      first_call_of_process_ = false;
      return std::pair<Tensor, double>(std::move(y), ms);
    };

    auto note_compile = [&](uint64_t before, int64_t seq) {
      if (fn.stats().compiles > before) traced_at[seq] = static_cast<int>(fn.stats().compiles) - 1;
    };

    if (st.warm_up) {
      for (size_t i = 0; i < c_.lengths.size(); ++i) {
        const int64_t s = c_.lengths[i];
        progress_.show(
            fmt::format("{} S={} warm-up call ({}/{}) ...", st.name, s, i + 1, c_.lengths.size()));
        Tensor in = ids(s);
        const uint64_t before = fn.stats().compiles;
        try {
          double worst = kNaN;
          sum.warmup_ms += timed(in, &worst).second;
          if (!std::isnan(worst)) warmup_at[s] = worst;
        } catch (const Error& e) {
          ++sum.errors;
          progress_.clear();
          fmt::print(stderr, "kiln demo: {} warm-up at S={}: {}\n", st.name, s, e.what());
        }
        note_compile(before, s);
      }
      sum.warmup_compiles = fn.stats().compiles;
    }

    const int calls = 1 + o_.repeat;
    for (const int64_t s : c_.lengths) {
      Row r;
      r.strategy = st.name;
      r.seq = s;
      r.gflop = forward_flops(c_, s) / 1e9;
      Tensor in = ids(s);
      const CompileStats before = fn.stats();
      try {
        progress_.show(
            fmt::format("{} S={} call 1/{} (first: trace + compile + run) ...", st.name, s, calls));
        double worst = warmup_at.count(s) ? warmup_at[s] : kNaN;
        auto [y, first_ms] = timed(in, &worst);
        r.first_ms = first_ms;
        const CompileStats after = fn.stats();
        r.compiles = after.compiles;
        r.new_compiles = after.compiles - before.compiles;
        note_compile(before.compiles, s);
        r.served = after.eager_calls > before.eager_calls                       ? "eager"
                   : after.calls_while_compiling > before.calls_while_compiling ? "interp"
                   : after.calls_covered > before.calls_covered                 ? "cover"
                                                                                : "compiled";
        if (o_.background) {
          // Calls while the kernels may still compile, then the steady state once they are in.
          for (int i = 0; i < o_.repeat; ++i) {
            progress_.show(fmt::format("{} S={} call {}/{} (compiling) ...", st.name, s, i + 2,
                                       calls + o_.repeat));
            (void)timed(in, &worst);
          }
          fn.wait_ready();
        }
        if (after.eager_calls == before.eager_calls) {
          const std::vector<EntryInfo> entries = fn.entries();
          r.entry = served_entry(entries, traced_at, s);
          if (r.entry >= 0) {
            const EntryInfo& e = entries[static_cast<size_t>(r.entry)];
            r.kernels = e.kernels.size();
            r.on_device = e.on_device;
            r.symbolic = !e.symbols.empty();
          }
        }
        std::vector<double> times;
        Tensor last;
        for (int i = 0; i < o_.repeat; ++i) {
          progress_.show(fmt::format("{} S={} call {}/{} ...", st.name, s, i + 2, calls));
          auto [out, ms] = timed(in, &worst);
          times.push_back(ms);
          last = std::move(out);
        }
        r.steady_ms = median(times);
        r.gflops = r.gflop / (r.steady_ms / 1e3);
        if (o_.background) {
          r.worst_ms = worst;
          r.bound_ms = 3 * r.steady_ms + 20;
          if (worst > r.bound_ms) ++sum.over_bound;
        }
        if (s == check_len_) {
          check(r, y);  // the first call's answer (the interpreter's under --background)
          if (o_.background && last.defined()) check(r, last);  // and the compiled kernels'
        }
      } catch (const Error& e) {
        r.error = e.what();
        r.compiles = fn.stats().compiles;
        r.new_compiles = r.compiles - before.compiles;
      }
      sum.compiles += r.new_compiles;
      if (!std::isnan(r.first_ms)) sum.sweep_ms += r.first_ms;
      if (!std::isnan(r.steady_ms)) sum.steady_ms += r.steady_ms;
      rows_.push_back(r);
      print_row(r);
    }
    const RuntimeCounters counters_after = runtime_counters();
    sum.pipelines_created = counters_after.pipelines_created - counters_before.pipelines_created;
    sum.pipeline_cache_hits =
        counters_after.pipeline_cache_hits - counters_before.pipeline_cache_hits;
    sum.shader_compiles = counters_after.shader_compiles - counters_before.shader_compiles;
    summaries_.push_back(sum);
  }

  const Summary* static_summary() const {
    for (const Summary& s : summaries_)
      if (s.strategy == "static") return &s;
    return nullptr;
  }

  void print_summary() {
    const Summary* ref = static_summary();
    fmt::print("\n{:<9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9} {:>10}\n", "strategy", "compiles",
               "warm-up ms", "sweep ms", "total ms", "steady ms", "vs static", "pipelines");
    for (const Summary& s : summaries_) {
      std::string compiles = std::to_string(s.compiles);
      if (s.warmup_compiles) compiles = fmt::format("{}+{}", s.warmup_compiles, s.compiles);
      std::string ratio = ref && ref->total_ms() > 0
                              ? fmt::format("{:.2f}x", s.total_ms() / ref->total_ms())
                              : std::string("-");
      fmt::print(
          "{:<9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9} {:>10}{}\n", s.strategy, compiles,
          s.warmup_ms > 0 ? fmt_ms(s.warmup_ms) : "-", fmt_ms(s.sweep_ms), fmt_ms(s.total_ms()),
          fmt_ms(s.steady_ms), ratio,
          fmt::format("{}/{}", s.pipelines_created, s.pipelines_created + s.pipeline_cache_hits),
          s.errors ? fmt::format("  ({} error(s))", s.errors) : "");
    }
    fmt::print(
        "\ncompiles: in the timed sweep (warm-up's as warm-up+sweep); sweep ms: the first calls, "
        "one per length;\ntotal ms: warm-up + sweep; steady ms: the steady latencies summed; "
        "pipelines: built/needed\n(the pipeline cache is shared by the strategies, so a later "
        "one reuses what an earlier one built).\ndocs/demo.md has the details.\n");
    if (o_.background) {
      int over = 0;
      for (const Summary& s : summaries_) over += s.over_bound;
      fmt::print("\nbackground: {}\n",
                 over == 0
                     ? std::string("every call after the process's first was served within "
                                   "3 x its steady latency + 20 ms")
                     : fmt::format("{} length(s) had a call slower than 3 x steady + 20 ms", over));
    }
  }

  void print_json(uint64_t validation_errors, bool ok) {
    using nlohmann::json;
    json config = {{"vocab", c_.vocab},
                   {"d_model", c_.d_model},
                   {"heads", c_.heads},
                   {"ffn", c_.ffn},
                   {"layers", c_.layers},
                   {"batch", c_.batch},
                   {"lengths", c_.lengths},
                   {"seed", c_.seed},
                   {"repeat", o_.repeat},
                   {"device", dev_.str()},
                   {"device_name", device_name()},
                   {"small", o_.small},
                   {"background", o_.background},
                   {"check_length", check_len_},
                   {"tolerance", kTolerance}};
    json rows = json::array();
    for (const Row& r : rows_) {
      json j = {
          {"strategy", r.strategy},   {"seq_len", r.seq},        {"first_ms", r.first_ms},
          {"steady_ms", r.steady_ms}, {"compiles", r.compiles},  {"new_compiles", r.new_compiles},
          {"entry", r.entry},         {"symbolic", r.symbolic},  {"kernels", r.kernels},
          {"on_device", r.on_device}, {"gflop", r.gflop},        {"gflops", r.gflops},
          {"check", r.check},         {"max_error", r.max_error}};
      if (!r.error.empty()) j["error"] = r.error;
      if (o_.background) {
        j["served"] = r.served;
        j["worst_ms"] = r.worst_ms;
        j["bound_ms"] = r.bound_ms;
      }
      rows.push_back(std::move(j));
    }
    const Summary* ref = static_summary();
    json summary = json::array();
    for (const Summary& s : summaries_) {
      summary.push_back(
          {{"strategy", s.strategy},
           {"compiles", s.compiles},
           {"warmup_compiles", s.warmup_compiles},
           {"warmup_ms", s.warmup_ms},
           {"sweep_ms", s.sweep_ms},
           {"total_ms", s.total_ms()},
           {"steady_ms", s.steady_ms},
           {"vs_static",
            ref && ref->total_ms() > 0 ? json(s.total_ms() / ref->total_ms()) : json(nullptr)},
           {"pipelines_created", s.pipelines_created},
           {"pipeline_cache_hits", s.pipeline_cache_hits},
           {"shader_compiles", s.shader_compiles},
           {"errors", s.errors},
           {"over_bound", s.over_bound}});
    }
    json doc = {{"config", config},
                {"rows", rows},
                {"summary", summary},
                {"validation_errors", validation_errors},
                {"ok", ok}};
    fmt::print("{}\n", doc.dump(2));
  }

  const DemoOptions& o_;
  Config c_;
  Device dev_;
  nn::TextEncoder model_;
  int64_t check_len_ = 0;
  std::optional<std::vector<float>> reference_;
  std::vector<Row> rows_;
  std::vector<Summary> summaries_;
  Progress progress_;
  bool first_call_of_process_ = true;
};

}  // namespace

int demo_main(const DemoOptions& o) {
  try {
    Config c = o.small ? small_config() : Config{};
    if (!o.lengths.empty()) c.lengths = o.lengths;
    std::vector<Strategy> strategies;
    for (const std::string& name : o.strategies) {
      std::optional<Strategy> st = strategy_named(name);
      if (!st) {
        fmt::print(stderr, "kiln demo: unknown strategy '{}' (static, dynamic, auto, warm-up)\n",
                   name);
        return 1;
      }
      strategies.push_back(*st);
    }
    const Device dev = o.device == "cpu" ? Device::cpu() : Device::vulkan();
    if (!dev.is_cpu() && !vulkan_available()) {
      fmt::print(stderr, "kiln demo: no Vulkan device: {}\n", vulkan_status().to_string());
      return 1;
    }
    Demo demo(o, std::move(c), dev);
    return demo.run(strategies);
  } catch (const Error& e) {
    fmt::print(stderr, "\nkiln demo: {}\n", e.what());
    return 1;
  }
}

}  // namespace kiln::tools
