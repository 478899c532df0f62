#include "exec/calibration.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "cache/disk_cache.h"
#include "codegen/lower_internal.h"
#include "exec/executable.h"
#include "kiln/logging.h"
#include "tensor/tensor_impl.h"
#include "vk/device.h"

namespace kiln {
namespace {

// The problem: A [rows, 128] · B [128, 128] (and a copy of A), rows growing from 64 by doubling
// or more until one run takes kTargetMs, kMaxRows is reached or a kernel has spent kBudgetMs. The
// sizes are symbolic, so each variant compiles once; K and N are constant multiples of 32 (full
// tiles, and the row-block kernel's conditions).
constexpr int64_t kCols = 128;
constexpr int64_t kFirstRows = 64;
// The rows at the hints, where the tiled kernel takes its tile: the large tile, as large
// products do.
constexpr int64_t kHintRows = 256;
constexpr int64_t kMaxRows = 16384;
constexpr double kTargetMs = 4;
constexpr double kBudgetMs = 120;
constexpr std::string_view kRecordKey = "matmul-rates-1";

thread_local MatmulRates::Force t_force = MatmulRates::Force::kNone;
std::atomic<uint64_t> g_measurements{0};

struct Slot {
  std::mutex mu;  // held while calibrating
  std::optional<Calibration> result;
};
std::mutex g_slots_mu;
std::map<uint64_t, std::shared_ptr<Slot>> g_slots;  // by VulkanDevice::id()

/// printf into a std::string.
std::string format(const char* spec, ...) {
  char buf[256];
  va_list args;
  va_start(args, spec);
  std::vsnprintf(buf, sizeof buf, spec, args);
  va_end(args);
  return buf;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// Two significant digits: remeasuring a device usually yields the same rates, hence the same
/// compiled-graph keys.
double round2(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 0;
  const double scale = std::pow(10.0, std::floor(std::log10(v)) - 1);
  return std::round(v / scale) * scale;
}

std::string encode(const MatmulRates& r) {
  return format("rowblock_flops_per_ms=%.17g\ntiled_flops_per_ms=%.17g\ncopy_bytes_per_ms=%.17g\n",
                r.rowblock_flops_per_ms, r.tiled_flops_per_ms, r.copy_bytes_per_ms);
}

/// The rates of a stored record, or nullopt unless it is exactly what encode() writes with
/// finite rates (positive ones for the tiled kernel and the copy).
std::optional<MatmulRates> decode(std::string_view text) {
  MatmulRates r;
  double* fields[] = {&r.rowblock_flops_per_ms, &r.tiled_flops_per_ms, &r.copy_bytes_per_ms};
  const char* names[] = {"rowblock_flops_per_ms=", "tiled_flops_per_ms=", "copy_bytes_per_ms="};
  for (int i = 0; i < 3; ++i) {
    const std::string_view name = names[i];
    const size_t eol = text.find('\n');
    if (eol == std::string_view::npos || text.substr(0, name.size()) != name) return std::nullopt;
    const std::string value(text.substr(name.size(), eol - name.size()));
    char* end = nullptr;
    *fields[i] = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(*fields[i]) ||
        *fields[i] < 0)
      return std::nullopt;
    text.remove_prefix(eol + 1);
  }
  if (!text.empty() || !(r.tiled_flops_per_ms > 0) || !(r.copy_bytes_per_ms > 0))
    return std::nullopt;
  r.measured = true;
  return r;
}

struct Probe {
  ShapeEnv env;
  Graph graph;
  double work_per_row = 0;  // FLOPs or bytes
};

/// A [rows, 128] · B [128, 128], or A + A (a copy: 8 bytes moved per element).
std::unique_ptr<Probe> make_probe(bool matmul) {
  auto p = std::make_unique<Probe>();
  p->graph.set_shape_env(&p->env);
  const SymInt rows(p->env.symbol(p->env.create_symbol(kHintRows, "calibration rows")));
  const NodeId a = p->graph.add_input(TensorMeta{DType::kF32, {kHintRows, kCols}}, "a",
                                      SymShape{rows, SymInt(kCols)});
  NodeId out;
  if (matmul) {
    const NodeId b = p->graph.add_input(TensorMeta{DType::kF32, {kCols, kCols}}, "b");
    out = p->graph.add(OpKind::MatMul, {a, b}, Attrs{}, "", {}).value();
    p->work_per_row = 2.0 * kCols * kCols;
  } else {
    out = p->graph.add(OpKind::Add, {a, a}, Attrs{}, "", {}).value();
    p->work_per_row = 8.0 * kCols;
  }
  p->graph.set_outputs({out});
  p->graph.canonicalize(p->env);
  return p;
}

/// One kernel to time: its probe, the forced kernel, the variant it must compile to (nullopt:
/// any single kernel), and the compiled executable.
struct Variant {
  const Probe* probe = nullptr;
  MatmulRates::Force force = MatmulRates::Force::kNone;
  std::optional<KernelVariant> want;
  std::shared_ptr<Executable> exe;
  double* rate = nullptr;  // where the measured rate goes
};

Status compile_variant(const Device& device, Variant& v) {
  const ForcedMatmulKernel scope(v.force);
  CompileOptions options;
  options.name = "kiln_calibration";
  KILN_ASSIGN_OR_RETURN(v.exe, Executable::create(v.probe->graph, device, options));
  const KernelPlan* plan = v.exe->plan();
  if (plan == nullptr || plan->kernels.size() != 1 ||
      (v.want && plan->kernels[0].variant != *v.want))
    return internal_error("calibration probe did not compile to the expected kernel");
  return Status();
}

std::vector<Tensor> probe_inputs(const Probe& probe, int64_t rows, const Device& device) {
  std::vector<Tensor> inputs;
  for (NodeId id : probe.graph.inputs()) {  // A [rows, 128], then B [128, 128]
    TensorMeta meta = probe.graph.node(id).meta;
    if (inputs.empty()) meta.shape[0] = rows;
    inputs.push_back(from_host(HostTensor(meta), device));
  }
  return inputs;
}

/// Work per ms of `v` on `device`: rows grow from kFirstRows toward kTargetMs per run.
Expected<double> time_variant(const Device& device, const Variant& v, int64_t max_rows) {
  double best = 0, spent = 0;
  for (int64_t rows = kFirstRows;;) {
    const std::vector<Tensor> inputs = probe_inputs(*v.probe, rows, device);
    KILN_RETURN_IF_ERROR(v.exe->run(inputs, {}).status());  // the uploads: not timed
    const auto t = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(v.exe->run(inputs, {}).status());
    const double ms = std::max(ms_since(t), 1e-3);
    spent += 2 * ms;  // both runs, the first about as long as the second
    best = std::max(best, v.probe->work_per_row * static_cast<double>(rows) / ms);
    // Grow toward kTargetMs per run, doubling at least, unless the next size would overrun the
    // budget.
    int64_t factor = 2;
    while (factor < 16 && ms * static_cast<double>(factor) < kTargetMs) factor *= 2;
    if (ms >= kTargetMs || rows >= max_rows ||
        spent + 2 * ms * static_cast<double>(factor) > kBudgetMs)
      break;
    rows = std::min(max_rows, rows * factor);
  }
  return best;
}

Calibration measure_device(const std::shared_ptr<vk::VulkanDevice>& vk_device) {
  const auto start = std::chrono::steady_clock::now();
  const Device device = Device::from_vulkan_device(vk_device);
  const TargetCaps caps = caps_of(vk_device->info());
  Calibration c;
  c.source = Calibration::Source::kMeasured;
  ++g_measurements;
  const std::unique_ptr<Probe> mm = make_probe(true), copy = make_probe(false);
  std::vector<Variant> variants;
  if (rowblock_supported(caps))
    variants.push_back({mm.get(), MatmulRates::Force::kRowBlock, KernelVariant::kMatmulRowBlock,
                        nullptr, &c.rates.rowblock_flops_per_ms});
  variants.push_back({mm.get(), MatmulRates::Force::kTiled, KernelVariant::kMatmulTiled, nullptr,
                      &c.rates.tiled_flops_per_ms});
  variants.push_back(
      {copy.get(), MatmulRates::Force::kTiled, std::nullopt, nullptr, &c.rates.copy_bytes_per_ms});
  // Kernels may read A through a texel buffer bound over its whole allocation (which may be
  // larger than A); keep A within half the device's texel limit (65536 rgba32f texels on
  // SwiftShader).
  int64_t max_rows = kMaxRows;
  if (caps.max_texel_elements > 0)
    max_rows =
        std::clamp(static_cast<int64_t>(caps.max_texel_elements) * 2 / kCols, kFirstRows, kMaxRows);
  Status st;
  for (Variant& v : variants)
    if (st.ok()) st = compile_variant(device, v);
  if (st.ok()) {
    // The first dispatches, side by side and not timed: drivers such as lavapipe and
    // SwiftShader compile a pipeline there.
    std::vector<Status> warm(variants.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < variants.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          warm[i] = variants[i]
                        .exe->run(probe_inputs(*variants[i].probe, kFirstRows, device), {})
                        .status();
        } catch (const Error& e) {
          warm[i] = e.status();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const Status& w : warm)
      if (st.ok()) st = w;
  }
  for (Variant& v : variants) {
    if (!st.ok()) break;
    Expected<double> rate = time_variant(device, v, max_rows);
    if (rate.ok()) *v.rate = *rate;
    st = rate.status();
  }
  if (!st.ok()) {
    c.source = Calibration::Source::kFailed;
    c.message = st.to_string();
    c.rates = {};
    return c;
  }
  c.rates.rowblock_flops_per_ms = round2(c.rates.rowblock_flops_per_ms);
  c.rates.tiled_flops_per_ms = round2(c.rates.tiled_flops_per_ms);
  c.rates.copy_bytes_per_ms = round2(c.rates.copy_bytes_per_ms);
  c.rates.measured = true;
  c.ms = ms_since(start);
  return c;
}

Calibration load_or_measure(const std::shared_ptr<vk::VulkanDevice>& device) {
  const char* env = std::getenv("KILN_CALIBRATE");
  if (env != nullptr && std::string_view(env) == "0") return {};
  const std::string identity = caps_of(device->info()).device_key;
  cache::DiskCache* disk = device->disk_cache();
  const std::string label = "matmul rates of " + device->info().name;
  if (disk != nullptr && disk->enabled()) {
    if (std::optional<std::string> stored =
            disk->load(cache::EntryKind::kCalibration, kRecordKey, identity, label)) {
      if (std::optional<MatmulRates> rates = decode(*stored)) {
        Calibration c;
        c.rates = *rates;
        c.source = Calibration::Source::kCache;
        return c;
      }
      log(LogTopic::kCache, "calibration " + label + ": malformed record - measuring again");
    }
  }
  Calibration c = measure_device(device);
  if (c.source == Calibration::Source::kFailed) {
    log(LogTopic::kWarning, "calibration of " + device->info().name + " failed (" + c.message +
                                "); matmul kernels follow the structural rule");
    return c;
  }
  if (disk != nullptr && disk->enabled())
    disk->store(cache::EntryKind::kCalibration, kRecordKey, identity, label, encode(c.rates));
  return c;
}

bool has_f32_matmul(const Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(), [](const Node& n) {
    return n.op == OpKind::MatMul && n.meta.dtype == DType::kF32;
  });
}

}  // namespace

bool has_rowblock_kernel(const vk::DeviceInfo& info) {
  return rowblock_supported(caps_of(info));
}

Calibration calibrate_device(const std::shared_ptr<vk::VulkanDevice>& device) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(g_slots_mu);
    std::shared_ptr<Slot>& s = g_slots[device->id()];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard<std::mutex> lock(slot->mu);
  if (!slot->result) {
    slot->result = load_or_measure(device);
    const Calibration& c = *slot->result;
    const bool rowblock = rowblock_supported(caps_of(device->info()));
    std::string text;
    switch (c.source) {
      case Calibration::Source::kMeasured:
        text = format("measured in %.0f ms", c.ms);
        break;
      case Calibration::Source::kCache:
        text = "read from the cache";
        break;
      case Calibration::Source::kDisabled:
        text = "not measured (KILN_CALIBRATE=0)";
        break;
      case Calibration::Source::kFailed:
        text = "not measured (failed)";
        break;
    }
    if (c.rates.measured)
      text += ": " + rates_text(c.rates) + "; large matmuls run on the " +
              large_matmul_kernel(c.rates, rowblock) + " kernel";
    log(LogTopic::kCompile, "'" + device->info().name + "': kernel rates " + text);
  }
  return *slot->result;
}

std::string rates_text(const MatmulRates& r) {
  if (!r.measured) return "not measured";
  // FLOP/ms / 1e6 = GFLOP/s; bytes/ms / 1e6 = GB/s.
  const std::string rowblock = r.rowblock_flops_per_ms > 0
                                   ? format("%.3g GFLOP/s", r.rowblock_flops_per_ms / 1e6)
                                   : std::string("unsupported");
  return format("row-block %s, tiled %.3g GFLOP/s, copy %.3g GB/s", rowblock.c_str(),
                r.tiled_flops_per_ms / 1e6, r.copy_bytes_per_ms / 1e6);
}

const char* large_matmul_kernel(const MatmulRates& r, bool rowblock_supported) {
  if (!rowblock_supported) return "tiled";
  if (!r.measured) return "row-block";
  return r.rowblock_flops_per_ms >= r.tiled_flops_per_ms ? "row-block" : "tiled";
}

uint64_t calibration_measurements() {
  return g_measurements.load();
}

ForcedMatmulKernel::ForcedMatmulKernel(MatmulRates::Force force) : previous_(t_force) {
  t_force = force;
}

ForcedMatmulKernel::~ForcedMatmulKernel() {
  t_force = previous_;
}

MatmulRates::Force ForcedMatmulKernel::current() {
  return t_force;
}

MatmulRates rates_for_compile(const Graph& graph, const std::shared_ptr<vk::VulkanDevice>& device,
                              const TargetCaps& caps) {
  MatmulRates none;
  none.max_binding_bytes = device->info().max_storage_buffer_range;
  if (t_force != MatmulRates::Force::kNone) {
    none.force = t_force;
    return none;
  }
  if (!rowblock_supported(caps) || !has_f32_matmul(graph)) return none;
  MatmulRates rates = calibrate_device(device).rates;
  rates.max_binding_bytes = none.max_binding_bytes;
  return rates;
}

}  // namespace kiln
