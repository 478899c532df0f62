#include "capture/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "capture/tensor_impl.h"
#include "codegen/lower.h"
#include "eager/interpreter.h"
#include "kiln/logging.h"
#include "vk/device.h"

namespace kiln {
namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

TargetCaps caps_of(const vk::DeviceInfo& info) {
  TargetCaps c;
  c.subgroup_size = info.subgroup_size;
  c.subgroup_shuffle = info.subgroup_shuffle;
  c.subgroup_vote = info.subgroup_vote;
  c.texel_rgba32f = info.texel_rgba32f;
  c.max_texel_elements = info.max_texel_buffer_elements;
  c.max_workgroup_invocations = info.max_workgroup_invocations;
  c.max_workgroup_count_x = info.max_workgroup_count[0];
  c.max_shared_memory = info.max_shared_memory;
  c.shader_int64 = info.shader_int64;
  c.storage_buffer_16bit = info.storage_buffer_16bit;
  c.storage_buffer_8bit = info.storage_buffer_8bit;
  c.device_key = info.name + "|" + info.driver_name + "|" + info.driver_info + "|";
  for (uint8_t b : info.driver_uuid) c.device_key += std::to_string(b) + ".";
  return c;
}

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

/// A row-block matmul whose A or C exceeds maxStorageBufferRange becomes several dispatches over
/// row ranges, each binding windows of A and C (Kernel::RowSplit). Others pass through.
Status split_rows(const Kernel& k, std::span<const int64_t> values, const vk::DeviceInfo& info,
                  vk::Dispatch d, std::vector<vk::Dispatch>& out) {
  const Kernel::RowSplit& rs = *k.row_split;
  uint32_t rows = 0;
  std::memcpy(&rows, d.push_constants.data() + 4 * rs.rows_slot, 4);
  const uint64_t c_row = static_cast<uint64_t>(rs.c_row_elements.evaluate(values)) * 4;
  const uint64_t a_row = rs.a_row_bytes, max_range = info.max_storage_buffer_range;
  if (rows * c_row <= max_range && rows * a_row <= max_range) {
    out.push_back(std::move(d));
    return {};
  }
  // Rows per part: both windows fit, and both start at aligned offsets.
  const uint64_t align = std::max<uint64_t>(
      {info.min_storage_buffer_offset_alignment, info.min_texel_buffer_offset_alignment, 4});
  auto step_for = [align](uint64_t row_bytes) { return align / std::gcd(align, row_bytes); };
  uint64_t step = std::lcm(std::lcm(step_for(c_row), step_for(a_row)),
                           static_cast<uint64_t>(rs.rows_per_group));
  uint64_t part = std::min(max_range / std::max<uint64_t>(c_row, 1), max_range / a_row);
  part -= part % step;
  if (part == 0)
    return unimplemented(k.name + ": one row of its operands exceeds maxStorageBufferRange");
  for (uint64_t row0 = 0; row0 < rows; row0 += part) {
    const uint64_t n = std::min<uint64_t>(part, rows - row0);
    vk::Dispatch p = d;
    p.windows.assign(p.bindings.size(), vk::BufferWindow{});
    p.windows[0] = {row0 * c_row, n * c_row};
    p.windows[rs.a_binding] = {row0 * a_row, n * a_row};
    const auto n32 = static_cast<uint32_t>(n), row0_32 = static_cast<uint32_t>(row0);
    std::memcpy(p.push_constants.data() + 4 * rs.rows_slot, &n32, 4);
    std::memcpy(p.push_constants.data() + 4 * rs.row0_slot, &row0_32, 4);
    p.groups[1] = static_cast<uint32_t>(std::min<uint64_t>(
        (n + rs.rows_per_group - 1) / rs.rows_per_group, info.max_workgroup_count[1]));
    out.push_back(std::move(p));
  }
  return {};
}

}  // namespace

Expected<std::shared_ptr<Executable>> Executable::create(Graph graph, Device device,
                                                         const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto exe = std::make_shared<Executable>();
  exe->graph_ = std::move(graph);
  exe->device_ = device;
  KILN_RETURN_IF_ERROR(exe->graph_.verify());
  for (const Node& n : exe->graph_.nodes())
    for (const SymInt& d : n.sym)
      for (int s : d.free_symbols()) exe->used_symbols_.push_back(s);
  std::sort(exe->used_symbols_.begin(), exe->used_symbols_.end());
  exe->used_symbols_.erase(std::unique(exe->used_symbols_.begin(), exe->used_symbols_.end()),
                           exe->used_symbols_.end());
  if (!exe->used_symbols_.empty()) exe->num_symbols_ = exe->used_symbols_.back() + 1;
  if (!device.is_cpu()) {
    KILN_ASSIGN_OR_RETURN(exe->vk_device_, vk::VulkanDevice::default_device());
    CodegenOptions copts;
    // Kill switches for bisecting a wrong result or a slow kernel.
    copts.fuse = options.fuse && !env_flag("KILN_DISABLE_FUSION");
    copts.vectorize = options.vectorize && !env_flag("KILN_DISABLE_VEC4");
    copts.caps = caps_of(exe->vk_device_->info());
    Expected<KernelPlan> plan = plan_kernels(exe->graph_, copts);
    Status st = plan.ok() ? compile_kernels(*plan, copts) : plan.status();
    if (st.code() == StatusCode::kUnimplemented) {
      log(LogTopic::kWarning, "'" + options.name + "': no device lowering (" + st.message() +
                                  "); running this graph on the CPU interpreter");
    } else if (!st.ok()) {
      return st.with_context("compiling '" + options.name + "'");
    } else {
      if (log_enabled(LogTopic::kFusion))
        log(LogTopic::kFusion, "'" + options.name + "':\n" + plan->fusion_log);
      const std::array<uint32_t, 3> max_count = exe->vk_device_->info().max_workgroup_count;
      for (const Kernel& k : plan->kernels) {
        if (log_enabled(LogTopic::kOutputCode))
          log(LogTopic::kOutputCode, "'" + options.name + "' " + k.name + ":\n" + k.glsl);
        vk::PipelineDesc desc;
        desc.spirv = k.spirv;
        desc.num_bindings = static_cast<uint32_t>(k.bindings.size());
        desc.push_constant_bytes = k.push_constant_bytes();
        desc.texel_bindings = k.texel_bindings;
        desc.label = k.name;
        desc.cache_key = k.cache_key;
        KILN_ASSIGN_OR_RETURN(const vk::Pipeline* p, exe->vk_device_->pipeline(desc));
        exe->pipelines_.push_back(p);
        if (exe->num_symbols_ == 0) exe->static_groups_.push_back(kernel_groups(k, {}, max_count));
      }
      exe->plan_ = std::move(plan).value();
      exe->nonempty_ = nonempty_sizes(exe->graph_);
    }
  }
  exe->compile_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return exe;
}

Expected<std::vector<int64_t>> Executable::bind_symbols(const std::vector<Tensor>& inputs,
                                                        std::span<const int64_t> given) const {
  std::vector<int64_t> values(given.begin(), given.end());
  if (given.empty()) {  // read each symbol from an input dim that is exactly that symbol
    values.assign(static_cast<size_t>(num_symbols_), -1);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Node& n = graph_.node(graph_.inputs()[i]);
      const Shape& got = inputs[i].meta().shape;
      for (size_t d = 0; d < n.sym.size() && d < got.size(); ++d) {
        if (n.sym[d].is_constant() || !n.sym[d].expr().is_symbol()) continue;
        int64_t& v = values[static_cast<size_t>(n.sym[d].expr().symbol_id())];
        if (v < 0) v = got[d];
      }
    }
    for (int s : used_symbols_)
      if (values[static_cast<size_t>(s)] < 0)
        return invalid_argument("symbol s" + std::to_string(s) +
                                " is not an input dim: pass symbol_values to run()");
  } else if (given.size() < static_cast<size_t>(num_symbols_)) {
    return invalid_argument("expected " + std::to_string(num_symbols_) + " symbol values, got " +
                            std::to_string(given.size()));
  }
  for (int s : used_symbols_)  // (symbols specialised to 0 or 1 appear in no shape)
    if (values[static_cast<size_t>(s)] < 2)
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
    return plan_ ? run_device(inputs, constants, {}) : run_interpreter(inputs, constants, {});
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, bind_symbols(inputs, symbol_values));
  if (plan_) {
    bool empty_part = false;
    for (const SymInt& d : nonempty_) empty_part |= d.evaluate(values) == 0;
    if (!empty_part) return run_device(inputs, constants, values);
  }
  return run_interpreter(inputs, constants, values);
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
  std::vector<HostTensor> in_hosts, const_hosts;
  try {
    for (const Tensor& t : inputs) in_hosts.push_back(to_host(t));
    for (const Tensor& t : constants) const_hosts.push_back(to_host(t));
  } catch (const Error& e) {
    return e.status();
  }
  std::vector<const HostTensor*> in_ptrs, const_ptrs;
  for (const HostTensor& h : in_hosts) in_ptrs.push_back(&h);
  for (const HostTensor& h : const_hosts) const_ptrs.push_back(&h);
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
                                                     std::span<const int64_t> values) {
  const bool symbolic = num_symbols_ > 0;
  // The shape of every node at this binding (symbolic graphs; static ones use the metas).
  std::vector<Shape> shapes;
  if (symbolic) {
    shapes.reserve(graph_.size());
    for (const Node& n : graph_.nodes()) {
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
  auto shape_of = [&](NodeId id) -> const Shape& {
    return symbolic ? shapes[static_cast<size_t>(id)] : graph_.node(id).meta.shape;
  };

  std::vector<vk::BufferRef> buffers(graph_.size());
  std::vector<Tensor> keep_alive;  // uploads of host-side constants live until the run ends
  auto bind_tensor = [&](NodeId node, const Tensor& t) -> Status {
    TensorImpl* impl = t.impl();
    if (impl->device.is_cpu() || impl->literal) {
      try {
        keep_alive.push_back(from_host(to_host(t), device_));
      } catch (const Error& e) {
        return e.status();
      }
      impl = keep_alive.back().impl();
    }
    buffers[node] = impl->buffer;
    return {};
  };
  for (NodeId id : graph_.inputs())
    KILN_RETURN_IF_ERROR(bind_tensor(id, inputs[graph_.node(id).attrs.index]));
  for (NodeId id : graph_.constants())
    KILN_RETURN_IF_ERROR(bind_tensor(id, constants.at(graph_.node(id).attrs.index)));

  const std::array<uint32_t, 3> max_count = vk_device_->info().max_workgroup_count;
  std::vector<vk::Dispatch> dispatches;
  for (size_t i = 0; i < plan_->kernels.size(); ++i) {
    const Kernel& k = plan_->kernels[i];
    const Node& root = graph_.node(k.root);
    const Shape& shape = shape_of(k.root);
    KILN_ASSIGN_OR_RETURN(buffers[k.root], vk_device_->allocate(static_cast<size_t>(numel(shape)) *
                                                                dtype_size(root.meta.dtype)));
    vk::Dispatch d;
    d.pipeline = pipelines_[i];
    for (NodeId b : k.bindings) d.bindings.push_back(buffers[b]);
    if (!symbolic) {
      d.groups = static_groups_[i];
    } else {
      d.groups = numel(shape) == 0 ? std::array<uint32_t, 3>{0, 0, 0}
                                   : kernel_groups(k, values, max_count);
    }
    d.push_constants.resize(k.push_constant_bytes());
    for (size_t p = 0; p < k.push_constants.size(); ++p) {
      const int64_t v = k.push_constants[p].evaluate(values);
      if (v < 0 || v > kMaxKernelElements)
        return unimplemented(k.name + ": size " + k.push_constants[p].str() + " = " +
                             std::to_string(v) + " does not fit the kernel's uint32 math");
      const auto u = static_cast<uint32_t>(v);
      std::memcpy(d.push_constants.data() + 4 * p, &u, 4);
    }
    if (k.row_split && d.groups[0] != 0) {
      KILN_RETURN_IF_ERROR(split_rows(k, values, vk_device_->info(), std::move(d), dispatches));
    } else {
      dispatches.push_back(std::move(d));
    }
  }
  if (log_enabled(LogTopic::kPerf)) {
    std::vector<vk::DispatchTiming> timings;
    auto t0 = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(vk_device_->run(dispatches, &timings));
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string msg = "run: " + std::to_string(dispatches.size()) + " dispatch(es), " +
                      std::to_string(wall) + " ms wall";
    // One line per dispatch: a row-split kernel appears once per part, under its label.
    for (const vk::DispatchTiming& t : timings)
      msg += "\n  " + t.label + ": " + std::to_string(t.gpu_ms) + " ms";
    log(LogTopic::kPerf, msg);
  } else {
    KILN_RETURN_IF_ERROR(vk_device_->run(dispatches));
  }

  std::vector<Tensor> outputs;
  for (NodeId out : graph_.outputs()) {
    const Node& n = graph_.node(out);
    if (n.op == OpKind::Input) {
      outputs.push_back(inputs[n.attrs.index]);
    } else if (n.op == OpKind::Constant) {
      outputs.push_back(constants.at(n.attrs.index));
    } else {
      auto impl = std::make_shared<TensorImpl>();
      impl->meta = TensorMeta{n.meta.dtype, shape_of(out)};
      impl->device = device_;
      impl->buffer = buffers[out];
      outputs.push_back(Tensor(std::move(impl)));
    }
  }
  return outputs;
}

}  // namespace kiln
