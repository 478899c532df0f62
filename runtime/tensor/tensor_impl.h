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
  int segment = -1;                    // the graph segment `node` belongs to
  NodeId node = -1;                    // its node in that segment
  int32_t slot = -1;                   // once its segment has run: where its value lives
  std::optional<double> literal;       // scalar literal (rank 0)
  std::optional<int64_t> literal_int;  // ... exactly, when it is an integer
  uint64_t version = 0;
  SymShape sym;  // trace placeholders: the symbolic shape (empty: static, meta.shape)
  // mark_dynamic / mark_static on a concrete tensor: read when a compiled function traces it.
  struct DynamicMark {
    int dim = 0;
    int64_t min = 2, max = SymRange::kPosInf;
    bool soft = false;  // maybe_mark_dynamic: specialising it records a guard, not an error
  };
  std::vector<DynamicMark> dynamic_marks;
  std::vector<int> static_marks;
};

namespace detail {
/// A symbolic SymSize: its expression over the symbols of the trace that made it.
struct SymSizeNode {
  SymInt expr;
  TraceContext* trace = nullptr;
  uint64_t trace_id = 0;
  std::string loc;  // where the size was taken
};
}  // namespace detail

/// The symbolic size of `s` for the active trace (a plain size is a constant).
SymInt to_sym_int(const SymSize& s);
/// A SymSize for `v` in the active trace (plain when `v` is constant).
SymSize make_sym_size(const SymInt& v, const std::string& loc);

/// Host copy of any concrete tensor (downloads device data; materialises literals).
HostTensor to_host(const Tensor& t);
/// The host value of `t` without a copy where it lives on the CPU (the tensor's own storage,
/// valid while `t` is); otherwise to_host(t) stored in `scratch`, which is returned.
const HostTensor& host_view(const Tensor& t, HostTensor& scratch);
/// host_view of each tensor; `scratch` is resized to hold the copies (it must outlive the
/// result, as must the tensors).
std::vector<const HostTensor*> host_views(const std::vector<Tensor>& tensors,
                                          std::vector<HostTensor>& scratch);
/// New tensor on `device` holding `host`.
Tensor from_host(HostTensor host, Device device);

}  // namespace kiln
