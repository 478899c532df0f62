#include "capture/executable.h"

#include <chrono>
#include <cstdlib>
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

}  // namespace

Expected<std::shared_ptr<Executable>> Executable::create(Graph graph, Device device,
                                                         const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto exe = std::make_shared<Executable>();
  exe->graph_ = std::move(graph);
  exe->device_ = device;
  KILN_RETURN_IF_ERROR(exe->graph_.verify());
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
      for (const Kernel& k : plan->kernels) {
        if (log_enabled(LogTopic::kOutputCode))
          log(LogTopic::kOutputCode, "'" + options.name + "' " + k.name + ":\n" + k.glsl);
        vk::PipelineDesc desc;
        desc.spirv = k.spirv;
        desc.num_bindings = static_cast<uint32_t>(k.bindings.size());
        desc.label = k.name;
        desc.cache_key = k.cache_key;
        KILN_ASSIGN_OR_RETURN(const vk::Pipeline* p, exe->vk_device_->pipeline(desc));
        exe->pipelines_.push_back(p);
      }
      exe->plan_ = std::move(plan).value();
    }
  }
  exe->compile_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return exe;
}

Expected<std::vector<Tensor>> Executable::run(const std::vector<Tensor>& inputs,
                                              const std::vector<Tensor>& constants) {
  if (inputs.size() != graph_.inputs().size())
    return invalid_argument("expected " + std::to_string(graph_.inputs().size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorMeta& want = graph_.node(graph_.inputs()[i]).meta;
    if (!(inputs[i].meta() == want))
      return invalid_argument("input " + std::to_string(i) + ": expected " + want.str() + ", got " +
                              inputs[i].meta().str());
  }
  return plan_ ? run_device(inputs, constants) : run_interpreter(inputs, constants);
}

Expected<std::vector<Tensor>> Executable::run_interpreter(const std::vector<Tensor>& inputs,
                                                          const std::vector<Tensor>& constants) {
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
  KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> outs, interpret(graph_, in_ptrs, const_ptrs));
  std::vector<Tensor> result;
  try {
    for (HostTensor& h : outs) result.push_back(from_host(std::move(h), device_));
  } catch (const Error& e) {
    return e.status();
  }
  return result;
}

Expected<std::vector<Tensor>> Executable::run_device(const std::vector<Tensor>& inputs,
                                                     const std::vector<Tensor>& constants) {
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

  std::vector<vk::Dispatch> dispatches;
  for (size_t i = 0; i < plan_->kernels.size(); ++i) {
    const Kernel& k = plan_->kernels[i];
    KILN_ASSIGN_OR_RETURN(buffers[k.root], vk_device_->allocate(graph_.node(k.root).meta.nbytes()));
    vk::Dispatch d;
    d.pipeline = pipelines_[i];
    for (NodeId b : k.bindings) d.bindings.push_back(buffers[b]);
    d.groups = k.groups;
    dispatches.push_back(std::move(d));
  }
  if (log_enabled(LogTopic::kPerf)) {
    std::vector<vk::DispatchTiming> timings;
    auto t0 = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(vk_device_->run(dispatches, &timings));
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string msg = "run: " + std::to_string(dispatches.size()) + " dispatch(es), " +
                      std::to_string(wall) + " ms wall";
    for (size_t i = 0; i < timings.size() && i < plan_->kernels.size(); ++i)
      msg += "\n  " + plan_->kernels[i].name + ": " + std::to_string(timings[i].gpu_ms) + " ms";
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
      impl->meta = n.meta;
      impl->device = device_;
      impl->buffer = buffers[out];
      outputs.push_back(Tensor(std::move(impl)));
    }
  }
  return outputs;
}

}  // namespace kiln
