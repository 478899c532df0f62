#include "exec/check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "eager/interpreter.h"
#include "exec/executable.h"
#include "graph/graph_key.h"
#include "kiln/io.h"
#include "kiln/logging.h"
#include "tensor/tensor_impl.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

thread_local bool t_in_check = false;  // compiling or running check mode's own executables

std::mutex mu;  // guards everything below
std::vector<CheckReport> reports;
bool fault_set = false;
std::string fault;
int repros = 0;

/// Adds a checked call's report, keeping the last 256.
void keep(CheckReport report) {
  std::lock_guard<std::mutex> lock(mu);
  reports.push_back(std::move(report));
  if (reports.size() > 256) reports.erase(reports.begin());
}

std::unordered_map<GraphKey, std::shared_ptr<Executable>, GraphKeyHash>& check_cache() {
  static std::unordered_map<GraphKey, std::shared_ptr<Executable>, GraphKeyHash> cache;
  return cache;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

std::string current_fault() {
  std::lock_guard<std::mutex> lock(mu);
  if (fault_set) return fault;
  const char* v = std::getenv("KILN_CHECK_FAULT");
  return v ? v : "";
}

struct Tolerance {
  double rel = 0, abs = 0, scale = 0;  // allowed: abs + scale * max|expected| + rel * |e|
};

/// Per dtype, wider for kernels that sum (contractions, reductions, normalisations, windows):
/// their order of summation differs from the interpreter's (docs/ops.md), and check mode feeds
/// each kernel the device's own upstream results.
Tolerance tolerance_for(const Graph& g, const Kernel& k, DType dtype) {
  bool sums = false;
  for (NodeId id : k.fused_nodes) {
    const OpCategory c = op_category(g.node(id).op);
    sums |= c == OpCategory::kContraction || c == OpCategory::kReduce ||
            c == OpCategory::kNormalization || c == OpCategory::kWindow ||
            c == OpCategory::kSpectral;
  }
  switch (dtype) {
    case DType::kC64:  // both parts as f32 values
    case DType::kF32:
      return sums ? Tolerance{1e-3, 1e-6, 1e-3} : Tolerance{1e-4, 1e-6, 1e-5};
    case DType::kF16:
      return sums ? Tolerance{1e-2, 1e-3, 1e-2} : Tolerance{2e-3, 1e-3, 1e-3};
    default:
      return {};  // integers and bool: exact
  }
}

void compare(const HostTensor& actual, const HostTensor& expected, const Tolerance& tol,
             KernelCheck& out) {
  out.compared = true;
  const int64_t n = expected.meta.numel();
  if (actual.meta.numel() != n) {
    out.ok = false;
    out.max_error = INFINITY;
    return;
  }
  if (is_complex(expected.meta.dtype)) {  // compare the real and imaginary parts as f32
    auto parts = [](const HostTensor& h) {
      HostTensor f(TensorMeta{DType::kF32, {h.meta.numel() * 2}});
      f.data = h.data;
      return f;
    };
    compare(parts(actual), parts(expected), tol, out);
    return;
  }
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(expected.get(i))) scale = std::max(scale, std::abs(expected.get(i)));
  double worst_excess = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual.get(i), e = expected.get(i);
    double err = 0;
    if (std::isnan(a) || std::isnan(e))
      err = std::isnan(a) && std::isnan(e) ? 0 : INFINITY;
    else if (std::isinf(a) || std::isinf(e))
      err = a == e ? 0 : INFINITY;
    else
      err = std::abs(a - e);
    const double allowed = tol.abs + tol.scale * scale + tol.rel * std::abs(e);
    out.max_error = std::max(out.max_error, err);
    if (err - allowed > worst_excess) {
      worst_excess = err - allowed;
      out.worst_index = i;
      out.expected = e;
      out.actual = a;
      out.tolerance = allowed;
    }
    if (err > allowed) out.ok = false;
  }
}

std::string safe(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return o.empty() ? "fn" : o;
}

/// The kernel's inputs (as the interpreter computed them), its expected and actual outputs,
/// its GLSL and check.json, under KILN_DUMP_DIR/check/<function>-<n>/.
std::string write_repro(const Graph& g, const Kernel& k, const KernelCheck& kc,
                        const CheckReport& report, const std::vector<HostTensor>& in_hosts,
                        const std::vector<HostTensor>& const_hosts,
                        const std::vector<HostTensor>& interp, const std::vector<NodeId>& outs,
                        const HostTensor& actual) {
  const char* root = std::getenv("KILN_DUMP_DIR");
  if (!root || !*root) return "";
  int n;
  {
    std::lock_guard<std::mutex> lock(mu);
    n = ++repros;
  }
  const fs::path dir = fs::path(root) / "check" / (safe(report.function) + "-" + std::to_string(n));
  fs::create_directories(dir);
  auto save = [&](const std::string& name, const HostTensor& h) {
    Status st = save_npy((dir / name).string(), from_host(h, Device::cpu()));
    if (!st.ok()) log(LogTopic::kWarning, "check mode: " + st.to_string());
  };
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t b = 1; b < k.bindings.size(); ++b) {
    const Node& node = g.node(k.bindings[b]);
    const HostTensor* value = nullptr;
    if (node.op == OpKind::Input)
      value = &in_hosts.at(static_cast<size_t>(node.attrs.index));
    else if (node.op == OpKind::Constant)
      value = &const_hosts.at(static_cast<size_t>(node.attrs.index));
    else if (auto it = std::find(outs.begin(), outs.end(), node.id); it != outs.end())
      value = &interp[static_cast<size_t>(it - outs.begin())];
    const std::string file =
        "binding" + std::to_string(b) + "_node" + std::to_string(node.id) + ".npy";
    if (value) save(file, *value);
    inputs.push_back({{"binding", b},
                      {"node", node.id},
                      {"op", op_name(node.op)},
                      {"meta", node.meta.str()},
                      {"file", value ? file : ""}});
  }
  const auto root_at = std::find(outs.begin(), outs.end(), k.root) - outs.begin();
  save("expected.npy", interp[static_cast<size_t>(root_at)]);
  save("actual.npy", actual);
  std::ofstream(dir / (k.name + ".comp")) << k.glsl;
  nlohmann::json j;
  j["function"] = report.function;
  j["kernel"] = k.name;
  j["nodes"] = kc.nodes;
  j["sources"] = kc.sources;
  j["dtype"] = kc.dtype;
  j["max_error"] = kc.max_error;
  j["worst_index"] = kc.worst_index;
  j["expected"] = kc.expected;
  j["actual"] = kc.actual;
  j["tolerance"] = kc.tolerance;
  j["inputs"] = inputs;
  j["glsl"] = k.name + ".comp";
  j["graph"] = g.to_string();
  std::ofstream(dir / "check.json") << j.dump(2) << "\n";
  return dir.string();
}

void run_check(const Executable& exe, const CompileOptions& options, Device device,
               const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants,
               std::span<const int64_t> values) {
  const KernelPlan* plan = exe.plan();
  if (!plan) return;
  const Graph& g = exe.device_graph();
  // The same graph with every kernel's output a graph output: the device computes each kernel
  // root into memory it can read back, the interpreter hands out the same nodes.
  std::vector<NodeId> outs = g.outputs();
  for (const Kernel& k : plan->kernels)
    if (std::find(outs.begin(), outs.end(), k.root) == outs.end()) outs.push_back(k.root);
  Graph checked = g;
  checked.set_outputs(outs);

  CheckReport report;
  report.function = options.name;
  std::shared_ptr<Executable> cexe;
  {
    t_in_check = true;
    struct Reset {
      ~Reset() { t_in_check = false; }
    } reset;
    const GraphKey key(checked, Executable::target_key(device, options));
    std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<Executable>& cached = check_cache()[key];
    if (!cached) {
      CompileOptions foreground = options;  // the kernels themselves, never the interpreter
      foreground.background = false;
      cached = value_or_throw(Executable::create(checked, device, foreground));
    }
    cexe = cached;
  }
  const std::vector<Tensor> device_out = value_or_throw(cexe->run(inputs, constants, values));
  if (cexe->plan() && cexe->plan()->kernels.size() != plan->kernels.size())
    report.note = "the check plan has " + std::to_string(cexe->plan()->kernels.size()) +
                  " kernels, the run's " + std::to_string(plan->kernels.size()) +
                  ": kernels are compared by the node they write";

  std::vector<HostTensor> in_hosts, const_hosts;
  const std::vector<const HostTensor*> in_ptrs = host_views(inputs, in_hosts),
                                       const_ptrs = host_views(constants, const_hosts);
  Graph instance = values.empty() ? checked : value_or_throw(checked.instantiate(values));
  Expected<std::vector<HostTensor>> reference = interpret(instance, in_ptrs, const_ptrs);
  if (!reference.ok()) {
    report.interpreter_error = reference.status().to_string();
    log(LogTopic::kWarning, "check mode: '" + report.function +
                                "': the interpreter rejects this call, yet the device returned "
                                "a result (kernels clamp out-of-range indices): " +
                                report.interpreter_error);
    keep(std::move(report));
    return;
  }
  const std::vector<HostTensor>& interp = *reference;

  const std::string faulty = current_fault();
  std::vector<HostTensor> actuals;
  for (const Kernel& k : plan->kernels) {
    KernelCheck kc;
    kc.kernel = k.name;
    kc.nodes.assign(k.fused_nodes.begin(), k.fused_nodes.end());
    for (NodeId id : k.fused_nodes) {
      const std::string& loc = g.node(id).loc;
      if (!loc.empty() && std::find(kc.sources.begin(), kc.sources.end(), loc) == kc.sources.end())
        kc.sources.push_back(loc);
    }
    const size_t at =
        static_cast<size_t>(std::find(outs.begin(), outs.end(), k.root) - outs.begin());
    HostTensor actual = to_host(device_out.at(at));
    kc.dtype = dtype_name(actual.meta.dtype);
    if (!faulty.empty() && k.name == faulty && actual.meta.numel() > 0)  // test-only fault
      actual.set(0, actual.meta.dtype == DType::kBool
                        ? 1.0 - actual.get(0)
                        : actual.get(0) + 1.0 + std::abs(actual.get(0)));
    compare(actual, interp.at(at), tolerance_for(g, k, actual.meta.dtype), kc);
    if (!kc.ok && report.first_divergence < 0) {
      report.first_divergence = static_cast<int>(report.kernels.size());
      report.repro_dir = write_repro(g, k, kc, report, in_hosts, const_hosts, interp, outs, actual);
    }
    report.kernels.push_back(std::move(kc));
  }
  if (report.first_divergence >= 0) {
    const KernelCheck& bad = report.kernels[static_cast<size_t>(report.first_divergence)];
    std::string nodes, sources;
    for (int32_t id : bad.nodes) nodes += " %" + std::to_string(id);
    for (const std::string& s : bad.sources) sources += " " + s;
    log(LogTopic::kWarning,
        "check mode: '" + report.function + "' kernel " + bad.kernel +
            " differs from the interpreter: max error " + std::to_string(bad.max_error) +
            " (allowed " + std::to_string(bad.tolerance) + " at element " +
            std::to_string(bad.worst_index) + ": device " + std::to_string(bad.actual) +
            ", interpreter " + std::to_string(bad.expected) + "); nodes" + nodes +
            (sources.empty() ? "" : "; from" + sources) +
            (report.repro_dir.empty() ? "; set KILN_DUMP_DIR for a repro"
                                      : "; repro in " + report.repro_dir));
  }
  keep(std::move(report));
}

}  // namespace

bool check_enabled(const CompileOptions& options) {
  return !t_in_check && (options.check || env_flag("KILN_CHECK"));
}

void check_segment(const Executable& exe, const CompileOptions& options, Device device,
                   const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants,
                   std::span<const int64_t> symbol_values) {
  try {
    run_check(exe, options, device, inputs, constants, symbol_values);
  } catch (const Error& e) {
    log(LogTopic::kWarning,
        std::string("check mode could not check '") + options.name + "': " + e.what());
  } catch (const std::exception& e) {
    log(LogTopic::kWarning,
        std::string("check mode could not check '") + options.name + "': " + e.what());
  }
}

std::vector<CheckReport> check_reports() {
  std::lock_guard<std::mutex> lock(mu);
  return reports;
}

void clear_check_reports() {
  std::lock_guard<std::mutex> lock(mu);
  reports.clear();
}

void set_check_fault(const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mu);
  fault_set = true;
  fault = kernel;
}

}  // namespace kiln
