#include "exec/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "codegen/kernel_limits.h"
#include "codegen/lower.h"
#include "eager/interpreter.h"
#include "exec/background.h"
#include "exec/calibration.h"
#include "exec/check.h"
#include "graph/graph_key.h"
#include "kiln/logging.h"
#include "tensor/tensor_impl.h"
#include "vk/device.h"

namespace kiln {
namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

}  // namespace

TargetCaps caps_of(const vk::DeviceInfo& info) {
  TargetCaps c;
  c.subgroup_size = info.subgroup_size;
  c.subgroup_shuffle = info.subgroup_shuffle;
  c.subgroup_vote = info.subgroup_vote;
  c.texel_rgba32f = info.texel_rgba32f;
  c.texel_r32f = info.texel_r32f;
  c.max_texel_elements = info.max_texel_buffer_elements;
  c.max_storage_range = info.max_storage_buffer_range;
  c.texels_cover_storage = info.max_texel_buffer_elements >= info.max_storage_buffer_range / 16;
  c.scalar_texels_cover_storage =
      info.max_texel_buffer_elements >= uint64_t{info.max_storage_buffer_range} / 4 + 64;
  c.max_workgroup_invocations = info.max_workgroup_invocations;
  c.max_workgroup_count_x = info.max_workgroup_count[0];
  c.max_shared_memory = info.max_shared_memory;
  c.shader_int64 = info.shader_int64;
  c.storage_buffer_16bit = info.storage_buffer_16bit;
  c.storage_buffer_8bit = info.storage_buffer_8bit;
  c.signed_zero_inf_nan_preserve = info.signed_zero_inf_nan_preserve_f32;
  // Mesa's gallivm ends an invocation's loops after 65535 iterations (LP_MAX_TGSI_LOOP_
  // ITERATIONS), silently; kernels that would loop longer run on the interpreter.
  if (info.driver_name == "llvmpipe") c.loop_limit = 65535;
  c.device_key = info.name + "|" + info.driver_name + "|" + info.driver_info + "|";
  for (uint8_t b : info.driver_uuid) c.device_key += std::to_string(b) + ".";
  // A device under KILN_DEVICE_LIMITS keeps its kernels and graph records apart from the
  // unrestricted device's.
  if (!info.limits.empty()) c.device_key += "|limits=" + info.limits;
  return c;
}

namespace {

/// "f32[s0, 64] (s0 = 37)"
std::string sym_meta_str(const Node& n, std::span<const int64_t> values) {
  std::string s = std::string(dtype_name(n.meta.dtype)) + sym_shape_str(n.sym);
  std::vector<int> syms;
  for (const SymInt& d : n.sym)
    for (int v : d.free_symbols())
      if (std::find(syms.begin(), syms.end(), v) == syms.end()) syms.push_back(v);
  std::sort(syms.begin(), syms.end());
  for (size_t i = 0; i < syms.size(); ++i) {
    s += i == 0 ? " (" : ", ";
    s += "s" + std::to_string(syms[i]) + " = ";
    const auto id = static_cast<size_t>(syms[i]);
    s += id < values.size() ? std::to_string(values[id]) : std::string("?");
  }
  return s + (syms.empty() ? "" : ")");
}

/// Sizes a device kernel reads through without a guard of its own: a concat part, or the axis
/// an index_select / gather / gather_nd clamps into. Static kernels skip empty ones; a symbolic one
/// that is 0 at run time sends that call to the interpreter.
std::vector<SymInt> nonempty_sizes(const Graph& g) {
  std::vector<SymInt> out;
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::GatherND) {  // the data dims its index tuples clamp into
      const SymShape& data = g.node(n.inputs[0]).sym;
      const auto b = static_cast<size_t>(n.attrs.index);
      const auto m = static_cast<size_t>(g.node(n.inputs[1]).meta.shape.back());
      for (size_t i = b; i < b + m; ++i)
        if (!data[i].is_constant()) out.push_back(data[i]);
      continue;
    }
    if (n.op != OpKind::Concat && n.op != OpKind::IndexSelect && n.op != OpKind::Gather) continue;
    const int rank = n.meta.rank();
    const auto axis = static_cast<size_t>(n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis);
    const size_t parts = n.op == OpKind::Concat ? n.inputs.size() : 1;
    for (size_t i = 0; i < parts; ++i) {
      const SymInt& d = g.node(n.inputs[i]).sym.at(axis);
      if (!d.is_constant()) out.push_back(d);
    }
  }
  return out;
}

}  // namespace

std::string Executable::target_key(Device device, const CompileOptions& options) {
  KeyWriter w;
  w.str("executable");
  w.u8(static_cast<uint8_t>(device.kind()));
  w.u64(device.id());  // executables hold their device's pipelines and memory
  w.boolean(options.fuse && !env_flag("KILN_DISABLE_FUSION"));
  w.boolean(options.vectorize && !env_flag("KILN_DISABLE_VEC4"));
  return w.take();
}

Expected<std::shared_ptr<Executable>> Executable::create(Graph graph, Device device,
                                                         const CompileOptions& options,
                                                         std::vector<Tensor> warm_constants) {
  auto start = std::chrono::steady_clock::now();
  auto exe = std::make_shared<Executable>();
  exe->graph_ = std::move(graph);
  exe->device_ = device;
  exe->name_ = options.name;
  if (check_enabled(options)) exe->check_ = options;
  KILN_RETURN_IF_ERROR(exe->graph_.verify());
  for (const Node& n : exe->graph_.nodes())
    for (const SymInt& d : n.sym)
      for (int s : d.free_symbols()) exe->used_symbols_.push_back(s);
  std::sort(exe->used_symbols_.begin(), exe->used_symbols_.end());
  exe->used_symbols_.erase(std::unique(exe->used_symbols_.begin(), exe->used_symbols_.end()),
                           exe->used_symbols_.end());
  if (!exe->used_symbols_.empty()) exe->num_symbols_ = exe->used_symbols_.back() + 1;
  for (const Node& n : exe->graph_.nodes()) {
    if (op_category(n.op) != OpCategory::kCompaction || n.attrs.index < 0) continue;
    SymInt most(1);
    for (const SymInt& d : exe->graph_.node(n.inputs[0]).sym) most = most * d;
    exe->defined_.push_back({static_cast<int>(n.attrs.index), n.id, most});
  }
  for (int s : exe->graph_.unbacked_symbols())
    if (std::none_of(exe->defined_.begin(), exe->defined_.end(),
                     [s](const Defined& d) { return d.symbol == s; }))
      exe->carried_.push_back(s);
  if (!device.is_cpu()) {
    try {
      exe->vk_device_ = device.vulkan_device();
    } catch (const Error& e) {
      return e.status();
    }
    if (options.background) {
      exe->state_.store(State::kCompiling, std::memory_order_release);
      if (log_enabled(LogTopic::kCompile))
        log(LogTopic::kCompile, "'" + options.name + "': queued for background compilation (" +
                                    std::to_string(exe->graph_.op_count()) +
                                    " ops); the interpreter serves until it is ready");
      std::weak_ptr<Executable> weak = exe;
      BackgroundCompiler::instance().enqueue(
          [weak, options, constants = std::move(warm_constants)] {
            if (std::shared_ptr<Executable> self = weak.lock())
              self->compile_in_background(options, constants);
          });
    } else {
      KILN_ASSIGN_OR_RETURN(const bool compiled, exe->compile_device(options));
      if (compiled) exe->state_.store(State::kDevice, std::memory_order_release);
    }
  }
  exe->compile_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return exe;
}

Expected<bool> Executable::compile_device(const CompileOptions& options) {
  CodegenOptions copts;
  // Kill switches for bisecting a wrong result or a slow kernel.
  copts.fuse = options.fuse && !env_flag("KILN_DISABLE_FUSION");
  copts.vectorize = options.vectorize && !env_flag("KILN_DISABLE_VEC4");
  copts.caps = caps_of(vk_device_->info());
  if (!env_flag("KILN_DISABLE_IM2COL")) {  // a kill switch: convs stay convs
    Expected<std::optional<Graph>> lowered = lower_for_device(graph_, copts.caps);
    if (lowered.ok()) {
      lowered_ = std::move(lowered).value();
    } else {  // the traced graph still compiles: its convs stay on the implicit-GEMM kernel
      log(LogTopic::kWarning, "'" + options.name + "': conv lowering failed (" +
                                  lowered.status().message() + "); compiling the traced graph");
    }
  }
  const Graph& graph = device_graph();
  // The device's measured kernel rates, when the graph's matmul kernel choice needs them
  // (calibrating the device on first use).
  copts.caps.matmul = rates_for_compile(graph, vk_device_, copts.caps);
  copts.disk_cache = vk_device_->disk_cache();
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  auto t = std::chrono::steady_clock::now();
  Expected<KernelPlan> plan = plan_kernels(graph, copts);
  const double plan_ms = ms_since(t);
  t = std::chrono::steady_clock::now();
  Status st = plan.ok() ? compile_kernels(*plan, copts) : plan.status();
  const double spirv_ms = ms_since(t);
  if (st.code() == StatusCode::kUnimplemented) {
    log(LogTopic::kWarning, "'" + options.name + "': no device lowering (" + st.message() +
                                "); running this graph on the CPU interpreter");
    return false;
  }
  if (!st.ok()) return st.with_context("compiling '" + options.name + "'");
  // The device would reject a kernel over its limits, or run it wrongly: catch it here, also
  // for limits KILN_DEVICE_LIMITS lowered below what the driver would accept.
  for (const Kernel& k : plan->kernels)
    KILN_RETURN_IF_ERROR(
        check_kernel_limits(k, copts.caps).with_context("compiling '" + options.name + "'"));
  if (log_enabled(LogTopic::kFusion))
    log(LogTopic::kFusion, "'" + options.name + "':\n" + plan->fusion_log);
  std::vector<vk::PipelineDesc> descs;
  for (const Kernel& k : plan->kernels) {
    if (log_enabled(LogTopic::kOutputCode))
      log(LogTopic::kOutputCode, "'" + options.name + "' " + k.name + ":\n" + k.glsl);
    vk::PipelineDesc& desc = descs.emplace_back();
    desc.spirv = k.spirv;
    desc.num_bindings = k.num_bindings();
    if (!k.size_slots.empty()) desc.uniform_bindings = {k.sizes_binding()};
    desc.texel_bindings = k.texel_bindings;
    desc.texel_r32f_bindings = k.texel_r32f_bindings;
    desc.label = k.name;
    desc.cache_key = k.cache_key;
  }
  KILN_ASSIGN_OR_RETURN(pipelines_, vk_device_->pipelines(descs));
  if (log_enabled(LogTopic::kPerf))
    log(LogTopic::kPerf, "'" + options.name + "': " + std::to_string(plan->kernels.size()) +
                             " kernel(s): fusion + GLSL " + std::to_string(plan_ms) +
                             " ms, SPIR-V " + std::to_string(spirv_ms) + " ms, pipelines " +
                             std::to_string(ms_since(t) - spirv_ms) + " ms");
  plan_ = std::move(plan).value();
  nonempty_ = nonempty_sizes(graph);
  loop_limit_ = copts.caps.loop_limit;
  auto replayer = std::make_unique<Replayer>(graph, *plan_, pipelines_, vk_device_, device_, name_);
  std::lock_guard<std::mutex> lock(pool_mu_);
  idle_.push_back(replayer.get());
  replayers_.push_back(std::move(replayer));
  return true;
}

namespace {
std::mutex g_fault_mu;
std::string g_fault_name;  // inject_background_compile_failure
}  // namespace

void inject_background_compile_failure(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_fault_mu);
  g_fault_name = name;
}

void Executable::compile_in_background(const CompileOptions& options,
                                       const std::vector<Tensor>& constants) {
  const auto start = std::chrono::steady_clock::now();
  auto ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  try {
    {
      std::lock_guard<std::mutex> lock(g_fault_mu);
      if (!g_fault_name.empty() && name_.find(g_fault_name) != std::string::npos)
        throw Error(internal_error("injected background compile failure"));
    }
    Expected<bool> compiled = compile_device(options);
    if (!compiled.ok()) throw Error(compiled.status());
    if (!*compiled) {
      publish(State::kInterpreter, "no device lowering", ms());
      return;
    }
    // One dispatch before the swap, so that no caller waits for the driver's own compile:
    // zeros for the inputs, the trace's constants (skipped when they were not given).
    size_t num_constants = 0;
    for (const Node& n : graph_.nodes())
      if (n.op == OpKind::Constant)
        num_constants = std::max(num_constants, static_cast<size_t>(n.attrs.index) + 1);
    if (constants.size() >= num_constants) {
      std::vector<Tensor> inputs;
      for (NodeId id : graph_.inputs())
        inputs.push_back(from_host(HostTensor(graph_.node(id).meta), device_));
      Expected<std::vector<int64_t>> values = bind_symbols(inputs, {});
      bool empty_part = false;
      if (values.ok()) {
        for (const SymInt& d : nonempty_) empty_part |= d.evaluate(*values) == 0;
        // As run(): kernels take every size to be at least 2, a carried length may be less.
        for (int s : carried_) empty_part |= (*values)[static_cast<size_t>(s)] < 2;
      }
      if (values.ok() && !empty_part) {
        auto warm = run_device(
            inputs, constants,
            num_symbols_ > 0 ? std::span<const int64_t>(*values) : std::span<const int64_t>());
        if (!warm.ok())
          log(LogTopic::kCompile, "'" + name_ + "': warm-up dispatch failed (" +
                                      warm.status().message() + "); the first call warms it");
      }
    }
    publish(State::kDevice, "", ms());
  } catch (const std::exception& e) {
    log(LogTopic::kWarning, "'" + name_ + "': background compile failed after " +
                                std::to_string(ms()) + " ms (" + e.what() +
                                "); this graph stays on the CPU interpreter");
    publish(State::kInterpreter, e.what(), ms());
  }
}

void Executable::publish(State state, std::string error, double ms) {
  std::vector<std::function<void(const Executable&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(ready_mu_);
    background_error_ = std::move(error);
    background_ms_ = ms;
    state_.store(state, std::memory_order_release);
    callbacks.swap(on_ready_);
  }
  ready_cv_.notify_all();
  for (auto& fn : callbacks) fn(*this);
  if (state == State::kDevice && log_enabled(LogTopic::kCompile))
    log(LogTopic::kCompile, "'" + name_ + "': compiled in the background in " + std::to_string(ms) +
                                " ms (" + std::to_string(plan_->kernels.size()) +
                                " kernel(s), warmed); swapped in: calls now run on the device");
}

void Executable::when_ready(std::function<void(const Executable&)> fn) {
  {
    std::lock_guard<std::mutex> lock(ready_mu_);
    if (state() == State::kCompiling) {
      on_ready_.push_back(std::move(fn));
      return;
    }
  }
  fn(*this);
}

void Executable::wait_ready() const {
  std::unique_lock<std::mutex> lock(ready_mu_);
  ready_cv_.wait(lock, [this] { return state() != State::kCompiling; });
}

std::string Executable::background_error() const {
  std::lock_guard<std::mutex> lock(ready_mu_);
  return background_error_;
}

double Executable::background_ms() const {
  std::lock_guard<std::mutex> lock(ready_mu_);
  return background_ms_;
}

Expected<std::vector<int64_t>> Executable::bind_symbols(const std::vector<Tensor>& inputs,
                                                        std::span<const int64_t> given) const {
  std::vector<int64_t> values(given.begin(), given.end());
  if (!given.empty() && given.size() < static_cast<size_t>(num_symbols_))
    return invalid_argument("expected " + std::to_string(num_symbols_) + " symbol values, got " +
                            std::to_string(given.size()));
  if (given.empty()) values.assign(static_cast<size_t>(num_symbols_), -1);
  auto is = [](const std::vector<int>& set, int s) {
    return std::find(set.begin(), set.end(), s) != set.end();
  };
  // Read each symbol from an input dim that is exactly that symbol: every one when no values
  // are given, the unbacked ones always (only the inputs know them).
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Node& n = graph_.node(graph_.inputs()[i]);
    const Shape& got = inputs[i].meta().shape;
    for (size_t d = 0; d < n.sym.size() && d < got.size(); ++d) {
      if (n.sym[d].is_constant() || !n.sym[d].expr().is_symbol()) continue;
      const int s = n.sym[d].expr().symbol_id();
      int64_t& v = values[static_cast<size_t>(s)];
      if ((given.empty() && v < 0) || is(carried_, s)) v = got[d];
    }
  }
  for (const Defined& d : defined_) values[static_cast<size_t>(d.symbol)] = -1;
  for (int s : used_symbols_)
    if (values[static_cast<size_t>(s)] < 0 && !is(graph_.unbacked_symbols(), s))
      return invalid_argument("symbol s" + std::to_string(s) +
                              " is not an input dim: pass symbol_values to run()");
  for (const Defined& d : defined_)  // the largest length until the run tells
    values[static_cast<size_t>(d.symbol)] = d.most.evaluate(values);
  for (int s : used_symbols_)  // (symbols specialised to 0 or 1 appear in no shape)
    if (values[static_cast<size_t>(s)] < 2 && !is(graph_.unbacked_symbols(), s))
      return invalid_argument("symbol s" + std::to_string(s) + " = " +
                              std::to_string(values[static_cast<size_t>(s)]) +
                              ": size symbols are at least 2 (sizes 0 and 1 are specialised)");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Node& n = graph_.node(graph_.inputs()[i]);
    const TensorMeta& got = inputs[i].meta();
    bool ok = got.dtype == n.meta.dtype && got.shape.size() == n.sym.size();
    for (size_t d = 0; ok && d < n.sym.size(); ++d) ok = n.sym[d].evaluate(values) == got.shape[d];
    if (!ok)
      return invalid_argument("input " + std::to_string(i) + ": expected " +
                              sym_meta_str(n, values) + ", got " + got.str());
  }
  return values;
}

Expected<std::vector<Tensor>> Executable::run(const std::vector<Tensor>& inputs,
                                              const std::vector<Tensor>& constants,
                                              std::span<const int64_t> symbol_values,
                                              std::vector<int64_t>* resolved) {
  auto out = run_bound(inputs, constants, symbol_values);
  if (!out.ok() || resolved == nullptr) return out;
  for (const Defined& d : defined_) {  // the lengths the run revealed
    const auto& outs = graph_.outputs();
    const auto at = std::find(outs.begin(), outs.end(), d.node);
    if (at == outs.end()) continue;
    if (resolved->size() <= static_cast<size_t>(d.symbol))
      resolved->resize(static_cast<size_t>(d.symbol) + 1, 0);
    (*resolved)[static_cast<size_t>(d.symbol)] =
        (*out)[static_cast<size_t>(at - outs.begin())].meta().shape.at(0);
  }
  return out;
}

Expected<std::vector<Tensor>> Executable::run_bound(const std::vector<Tensor>& inputs,
                                                    const std::vector<Tensor>& constants,
                                                    std::span<const int64_t> symbol_values) {
  if (inputs.size() != graph_.inputs().size())
    return invalid_argument("expected " + std::to_string(graph_.inputs().size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  if (num_symbols_ == 0) {  // static: the metas are the shapes
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorMeta& want = graph_.node(graph_.inputs()[i]).meta;
      if (!(inputs[i].meta() == want))
        return invalid_argument("input " + std::to_string(i) + ": expected " + want.str() +
                                ", got " + inputs[i].meta().str());
    }
    return on_device() ? run_device(inputs, constants, {}) : run_interpreter(inputs, constants, {});
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, bind_symbols(inputs, symbol_values));
  if (on_device()) {
    bool empty_part = false;
    for (const SymInt& d : nonempty_) empty_part |= d.evaluate(values) == 0;
    // Kernels take every symbol to be at least 2; a carried unbacked one may be 0 or 1.
    for (int s : carried_) empty_part |= values[static_cast<size_t>(s)] < 2;
    if (!empty_part && !over_loop_limit(values)) return run_device(inputs, constants, values);
  }
  return run_interpreter(inputs, constants, values);
}

bool Executable::over_loop_limit(std::span<const int64_t> values) const {
  if (loop_limit_ == 0) return false;
  const std::array<uint32_t, 3> max_count = vk_device_->info().max_workgroup_count;
  for (const Kernel& k : plan_->kernels) {
    const int64_t n = kernel_loop_iterations(k, values, max_count);
    if (n <= loop_limit_) continue;
    if (!loop_limit_warned_.exchange(true))
      log(LogTopic::kWarning, "'" + name_ + "': " + k.name + " would run " + std::to_string(n) +
                                  " loop iterations per invocation at these sizes, past the "
                                  "driver's limit of " +
                                  std::to_string(loop_limit_) +
                                  " (Mesa's llvmpipe ends longer loops early); running this "
                                  "call on the CPU interpreter");
    return true;
  }
  return false;
}

Expected<std::vector<Tensor>> Executable::run_interpreter(const std::vector<Tensor>& inputs,
                                                          const std::vector<Tensor>& constants,
                                                          std::span<const int64_t> values) {
  const Graph* graph = &graph_;
  std::shared_ptr<const Graph> instance;  // keeps the instantiation alive during this call
  if (num_symbols_ > 0) {
    std::lock_guard<std::mutex> lock(instance_mu_);
    if (!instance_ || !std::equal(values.begin(), values.end(), instance_values_.begin(),
                                  instance_values_.end())) {
      KILN_ASSIGN_OR_RETURN(Graph g, graph_.instantiate(values));
      instance_ = std::make_shared<const Graph>(std::move(g));
      instance_values_.assign(values.begin(), values.end());
    }
    instance = instance_;
    graph = instance.get();
  }
  // CPU tensors are read in place; others are copied to the host first.
  std::vector<HostTensor> in_hosts, const_hosts;
  std::vector<const HostTensor*> in_ptrs, const_ptrs;
  try {
    in_ptrs = host_views(inputs, in_hosts);
    const_ptrs = host_views(constants, const_hosts);
  } catch (const Error& e) {
    return e.status();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> outs, interpret(*graph, in_ptrs, const_ptrs));
  std::vector<Tensor> result;
  try {
    for (HostTensor& h : outs) result.push_back(from_host(std::move(h), device_));
  } catch (const Error& e) {
    return e.status();
  }
  return result;
}

Expected<std::vector<Tensor>> Executable::run_device(const std::vector<Tensor>& inputs,
                                                     const std::vector<Tensor>& constants,
                                                     std::span<const int64_t> bound_values) {
  const bool symbolic = num_symbols_ > 0;
  // A compaction's buffer holds its largest length and room for the count.
  std::vector<int64_t> with_count(bound_values.begin(), bound_values.end());
  for (const Defined& d : defined_)
    with_count[static_cast<size_t>(d.symbol)] = d.most.evaluate(with_count) + kMaskedSelectExtra;
  const std::span<const int64_t> values = with_count;
  // The shape of every node at this binding (symbolic graphs; static ones use the metas).
  std::vector<Shape> shapes;
  if (symbolic) {
    shapes.reserve(device_graph().size());
    for (const Node& n : device_graph().nodes()) {
      shapes.push_back(evaluate_shape(n.sym, values));
      int64_t count = 1;
      for (Dim d : shapes.back()) {
        if (d < 0)
          return invalid_argument("node %" + std::to_string(n.id) + " (" + op_name(n.op) +
                                  "): negative size in " + shape_str(shapes.back()) + " for " +
                                  sym_meta_str(n, values));
        count *= std::max<Dim>(d, 1);
        if (count > kMaxKernelElements)
          return unimplemented("node %" + std::to_string(n.id) + " (" + op_name(n.op) + ") is " +
                               shape_str(shapes.back()) + " for " + sym_meta_str(n, values) +
                               ": the compiled kernels index in 32 bits (at most 2^32 - 1 "
                               "elements per tensor)");
      }
    }
  }
  // A replay slot of this call's own (the most recently used idle one, so that a single
  // thread always gets the same one).
  Replayer* replayer = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      replayer = idle_.back();
      idle_.pop_back();
    }
  }
  if (replayer == nullptr) {  // every slot is running a call on another thread
    auto made =
        std::make_unique<Replayer>(device_graph(), *plan_, pipelines_, vk_device_, device_, name_);
    replayer = made.get();
    std::lock_guard<std::mutex> lock(pool_mu_);
    replayers_.push_back(std::move(made));
  }
  struct GiveBack {
    Executable* exe;
    Replayer* replayer;
    ~GiveBack() {
      std::lock_guard<std::mutex> lock(exe->pool_mu_);
      exe->idle_.push_back(replayer);
    }
  } give_back{this, replayer};
  auto out = replayer->run(inputs, constants, values, symbolic ? &shapes : nullptr);
  if (check_ && out.ok()) check_segment(*this, *check_, device_, inputs, constants, values);
  return out;
}

ReplayReport Executable::replay_report() const {
  // Summed over the replay slots (the largest live set is a property of the graph: the max).
  std::lock_guard<std::mutex> lock(pool_mu_);
  ReplayReport sum;
  for (const std::unique_ptr<Replayer>& r : replayers_) {
    const ReplayReport one = r->report();
    sum.arena_bytes += one.arena_bytes;
    sum.largest_live_bytes = std::max(sum.largest_live_bytes, one.largest_live_bytes);
    sum.recordings += one.recordings;
    sum.replays += one.replays;
  }
  return sum;
}

}  // namespace kiln
