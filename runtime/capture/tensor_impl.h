/// \file tensor_impl.h
/// The storage behind kiln::Tensor: host data, a device buffer, a trace placeholder, or a
/// scalar literal (which takes the device of the tensors it meets).
#pragma once

#include <memory>
#include <optional>

#include "eager/host_tensor.h"
#include "graph/graph.h"
#include "kiln/tensor.h"
#include "vk/device.h"

namespace kiln {

class TraceContext;

struct TensorImpl {
  TensorMeta meta;
  Device device = Device::cpu();
  std::shared_ptr<HostTensor> host;  // cpu data
  vk::BufferRef buffer;              // vulkan data
  // Trace placeholders: `trace` is valid only while trace_id equals the active trace's id.
  TraceContext* trace = nullptr;
  uint64_t trace_id = 0;
  int segment = -1;               // the graph segment `node` belongs to
  NodeId node = -1;               // its node in that segment
  int32_t slot = -1;              // once its segment has run: where its value lives
  std::optional<double> literal;  // scalar literal (rank 0)
  uint64_t version = 0;
};

/// The process default Vulkan device, or throws kiln::Error with the reason.
std::shared_ptr<vk::VulkanDevice> default_vulkan_device();

/// Host copy of any concrete tensor (downloads device data; materialises literals).
HostTensor to_host(const Tensor& t);
/// New tensor on `device` holding `host`.
Tensor from_host(HostTensor host, Device device);

}  // namespace kiln
