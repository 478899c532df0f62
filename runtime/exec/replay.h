/// \file replay.h
/// An Executable's kernels as one recorded command buffer, replayed on every call.
///
/// The intermediates live in one arena planned by liveness (memory_plan.h); small or host
/// inputs are copied into it, large device inputs and constants are bound in place; outputs
/// live in an output bank with its own recording (two banks when results are held).
/// Sizes reach the kernels through a host-written sizes buffer and workgroup counts through
/// indirect dispatch, so a call whose tensors fit the arena's capacities and whose bound
/// buffers are the ones recorded replays without recording, allocating device memory or
/// writing descriptors. Otherwise the call re-plans (capacities grow 1.5x past the need) and
/// records again. Outputs are slices of a bank; a call takes a bank none of whose results is
/// still referenced, and when both banks hold live results it runs into a spill bank and hands
/// out copies of its outputs, so a result handed out is never written or moved again.
///
/// Threads: a Replayer serves one call at a time (an Executable keeps a pool of them, one per
/// concurrent call). Another thread may only read its report() and, when the device runs out
/// of memory, make an idle one give up its memory (release_if_idle). docs/runtime.md.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel.h"
#include "graph/graph.h"
#include "kiln/tensor.h"
#include "vk/device.h"

namespace kiln {

struct ReplayReport {
  uint64_t arena_bytes = 0;         // intermediates, outputs and copied inputs of the layout
  uint64_t largest_live_bytes = 0;  // the most bytes live during one kernel (a lower bound)
  uint64_t recordings = 0;          // command buffers recorded so far
  uint64_t replays = 0;
};

class Replayer {
 public:
  Replayer(const Graph& graph, const KernelPlan& plan, std::vector<const vk::Pipeline*> pipelines,
           std::shared_ptr<vk::VulkanDevice> device, Device kiln_device, std::string name);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  /// One call at symbol values `values` (empty for static graphs); `shapes` holds every node's
  /// shape at those values (nullptr: the static metas).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& constants,
                                    std::span<const int64_t> values,
                                    const std::vector<Shape>* shapes);
  ReplayReport report() const {
    std::lock_guard<std::mutex> lock(report_mu_);
    return report_;
  }
  /// Unless a call is running on it: gives up the arena and the recordings (held outputs keep
  /// their bank's memory); the next call plans and records again. Returns the bytes given up
  /// (0 when there were none or a call is running).
  uint64_t release_if_idle();

 private:
  static constexpr uint64_t kAlign = 256;  // >= every device's storage/texel offset alignment
  static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

  enum class Mode { kSlot, kBind };  // external tensors: copied into the arena, or bound
  struct External {                  // an Input or Constant node some kernel reads
    NodeId node = -1;
    Mode mode = Mode::kSlot;
    std::pair<uint64_t, uint64_t> location{};  // kBind: the buffer recorded
  };
  struct Part {  // one dispatch of a kernel (several for a row-split matmul)
    size_t kernel = 0;
    uint64_t row0 = 0, rows = 0;  // row-split parts: first row and capacity in rows
    uint64_t sizes_offset = 0, indirect_offset = 0;
  };

  const Tensor& tensor_of(NodeId node, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& constants) const;
  const Shape& shape_of(NodeId node) const;  // at this call
  uint64_t bytes_of(NodeId node) const;
  /// Plans the arena at capacities >= this call's sizes and records the command buffer
  /// (replay_layout.cpp, with add_bank).
  Status rebuild(const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants,
                 std::span<const int64_t> values, bool timed);
  /// Allocates an output bank and records the kernels writing their outputs into it.
  Status add_bank();
  /// A bank none of whose earlier results is still referenced (adding a second bank), or
  /// kSpill when both hold live results.
  Expected<size_t> choose_bank();
  /// Whether `buffer` lies in one of the output banks (an earlier result of this graph).
  bool in_a_bank(const vk::BufferRef& buffer) const;
  Status write_params(std::span<const int64_t> values);
  /// device_->allocate, and when the device is out of memory, again after the other Replayers
  /// on the device released their arenas (logged).
  Expected<vk::BufferRef> allocate_arena(uint64_t bytes);

  const Graph& graph_;
  const KernelPlan& plan_;
  std::vector<const vk::Pipeline*> pipelines_;
  std::shared_ptr<vk::VulkanDevice> device_;
  Device kiln_device_;
  std::string name_;
  const std::vector<Shape>* shapes_ = nullptr;  // this call's shapes (nullptr: static)

  std::vector<NodeId> slot_nodes_;  // the kernel roots, in slot order
  std::vector<uint64_t> capacity_;  // per node: bytes its arena slot holds (0: none yet)
  // The current layout: its slots (kernel roots, then copied-in externals); the outputs among
  // them live in output banks at output_offsets_, the rest in the arena.
  std::vector<NodeId> layout_nodes_;
  std::vector<NodeId> output_nodes_;
  std::vector<uint64_t> output_offsets_;
  std::vector<int> output_of_;  // per node: index into output_nodes_, or -1
  uint64_t arena_bytes_ = 0, bank_bytes_ = 0;
  struct OutputRef {  // dispatches_[dispatch].bindings[binding] is output `output`
    size_t dispatch, binding, output;
  };
  std::vector<OutputRef> output_refs_;
  std::vector<vk::Dispatch> dispatches_;  // output bindings empty: filled per bank
  /// Outputs of one recording: a buffer, its slices bound by the recording, and the results
  /// handed out from it by the latest call that used it.
  struct Bank {
    vk::BufferRef buffer;
    std::vector<vk::BufferRef> slices;
    std::shared_ptr<vk::Recording> recording;
    std::vector<std::weak_ptr<vk::Buffer>> handed_out;
  };
  static constexpr size_t kMaxBanks = 2;
  /// banks_[kSpill]: the recording a call uses while both banks hold live results; its outputs
  /// are copied out, so it is never held.
  static constexpr size_t kSpill = kMaxBanks;
  std::vector<Bank> banks_;
  std::vector<External> externals_;
  std::vector<vk::BufferRef> bound_;  // per node: the buffer a kernel binding reads (this layout)
  std::vector<Part> parts_;
  std::vector<uint64_t> row_bytes_;  // per kernel: C's row bytes of a row-split matmul
  vk::BufferRef arena_, params_;
  bool timed_ = false;
  std::mutex busy_;               // held by the call running (and by release_if_idle)
  mutable std::mutex report_mu_;  // guards report_
  ReplayReport report_;
};

}  // namespace kiln
