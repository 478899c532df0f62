// Replayer: planning a layout (capacities, the arena by liveness, row windows, the sizes and
// indirect buffer) and recording it into output banks.
#include <algorithm>
#include <numeric>

#include "exec/memory_plan.h"
#include "exec/replay.h"
#include "kiln/logging.h"
#include "tensor/tensor_impl.h"

namespace kiln {

Status Replayer::rebuild(const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants,
                         std::span<const int64_t> values, bool timed) {
  banks_.clear();  // held outputs keep their bank's memory alive
  arena_.reset();
  const vk::DeviceInfo& info = device_->info();
  const auto kernels = static_cast<int>(plan_.kernels.size());

  // Slots: the kernel roots, then the external tensors copied in.
  std::vector<NodeId> nodes = slot_nodes_;
  for (const External& e : externals_)
    if (e.mode == Mode::kSlot) nodes.push_back(e.node);
  std::vector<int> first(nodes.size(), kernels), last(nodes.size(), 0);
  std::vector<int> index_of(graph_.size(), -1);
  for (size_t s = 0; s < nodes.size(); ++s)
    index_of[static_cast<size_t>(nodes[s])] = static_cast<int>(s);
  for (int k = 0; k < kernels; ++k) {
    for (NodeId b : plan_.kernels[static_cast<size_t>(k)].bindings) {
      const int s = index_of[static_cast<size_t>(b)];
      if (s < 0) continue;
      first[static_cast<size_t>(s)] = std::min(first[static_cast<size_t>(s)], k);
      last[static_cast<size_t>(s)] = std::max(last[static_cast<size_t>(s)], k);
    }
  }
  for (NodeId out : graph_.outputs())
    if (index_of[static_cast<size_t>(out)] >= 0)
      last[static_cast<size_t>(index_of[static_cast<size_t>(out)])] = kernels - 1;
  std::vector<BufferLifetime> lifetimes(nodes.size());
  for (size_t s = 0; s < nodes.size(); ++s) {
    const Node& n = graph_.node(nodes[s]);
    const bool external = n.op == OpKind::Input || n.op == OpKind::Constant;
    const uint64_t need = round_up(std::max<uint64_t>(bytes_of(nodes[s]), 4), kAlign);
    uint64_t& cap = capacity_[static_cast<size_t>(nodes[s])];
    if (need > cap) {
      // Grow past the need so that a few larger sizes do not each record again, but keep a
      // buffer that fits one storage-buffer range within it.
      uint64_t grown = cap > 0 ? round_up(need + need / 2, kAlign) : need;
      if (need <= info.max_storage_buffer_range)
        grown = std::min<uint64_t>(grown, info.max_storage_buffer_range / kAlign * kAlign);
      cap = std::max(need, grown);
    }
    lifetimes[s] = {cap, external ? 0 : first[s], last[s]};
  }
  // Outputs go to an output bank (a buffer of their own, so that a held output is never
  // overwritten by the next call's intermediates); the rest to the arena.
  std::vector<bool> is_output(graph_.size(), false);
  for (NodeId out : graph_.outputs()) is_output[static_cast<size_t>(out)] = true;
  std::vector<BufferLifetime> arena_lifetimes;
  std::vector<size_t> in_arena;
  output_nodes_.clear();
  output_offsets_.clear();
  output_of_.assign(graph_.size(), -1);
  bank_bytes_ = 0;
  for (size_t s = 0; s < nodes.size(); ++s) {
    if (is_output[static_cast<size_t>(nodes[s])]) {
      output_of_[static_cast<size_t>(nodes[s])] = static_cast<int>(output_nodes_.size());
      output_nodes_.push_back(nodes[s]);
      output_offsets_.push_back(bank_bytes_);
      bank_bytes_ += lifetimes[s].bytes;
    } else {
      arena_lifetimes.push_back(lifetimes[s]);
      in_arena.push_back(s);
    }
  }
  const MemoryLayout layout = plan_memory(arena_lifetimes, kAlign);
  layout_nodes_ = nodes;
  arena_bytes_ = layout.arena_bytes;
  {
    std::lock_guard<std::mutex> lock(report_mu_);
    report_.largest_live_bytes = largest_live_bytes(lifetimes, kAlign);
  }
  std::fill(bound_.begin(), bound_.end(), nullptr);
  if (!in_arena.empty()) {
    KILN_ASSIGN_OR_RETURN(arena_, allocate_arena(layout.arena_bytes));
    for (size_t i = 0; i < in_arena.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(
          bound_[static_cast<size_t>(nodes[in_arena[i]])],
          device_->slice(arena_, layout.offsets[i], lifetimes[in_arena[i]].bytes));
    }
  }
  for (External& e : externals_) {
    if (e.mode != Mode::kBind) continue;
    const Tensor& t = tensor_of(e.node, inputs, constants);
    bound_[static_cast<size_t>(e.node)] = t.impl()->buffer;
    e.location = t.impl()->buffer->location();
  }

  // Dispatches: one per kernel, or one per row window of a row-split matmul.
  parts_.clear();
  row_bytes_.assign(plan_.kernels.size(), 0);
  std::vector<vk::Dispatch> dispatches;
  for (size_t i = 0; i < plan_.kernels.size(); ++i) {
    const Kernel& k = plan_.kernels[i];
    std::vector<std::pair<uint64_t, uint64_t>> rows{{0, 0}};  // (row0, rows) per part
    uint64_t c_row = 0, a_row = 0;
    if (k.row_split) {
      const Kernel::RowSplit& rs = *k.row_split;
      c_row = static_cast<uint64_t>(rs.c_row_elements.evaluate(values)) * 4;
      row_bytes_[i] = c_row;
      a_row = rs.a_row_bytes;
      const uint64_t c_cap = capacity_[static_cast<size_t>(k.root)];
      const uint64_t cap_rows = c_row == 0 ? 0 : c_cap / c_row;
      const uint64_t max_range = info.max_storage_buffer_range;
      // C bound whole (rs.c_whole) is never split: only A's rows are.
      const uint64_t c_split_row = rs.c_whole ? 0 : c_row;
      if (cap_rows * c_split_row > max_range || cap_rows * a_row > max_range) {
        const uint64_t align = std::max<uint64_t>(
            {info.min_storage_buffer_offset_alignment, info.min_texel_buffer_offset_alignment, 4});
        auto step_for = [align](uint64_t row_bytes) {
          return align / std::gcd(align, std::max<uint64_t>(row_bytes, 1));
        };
        const uint64_t step = std::lcm(std::lcm(rs.c_whole ? 1 : step_for(c_row), step_for(a_row)),
                                       static_cast<uint64_t>(rs.rows_per_group));
        uint64_t part = max_range / a_row;
        if (!rs.c_whole) part = std::min(part, max_range / std::max<uint64_t>(c_row, 1));
        part -= part % step;
        if (part == 0)
          return unimplemented(k.name + ": one row of its operands exceeds maxStorageBufferRange");
        rows.clear();
        for (uint64_t r0 = 0; r0 < cap_rows; r0 += part)
          rows.emplace_back(r0, std::min(part, cap_rows - r0));
      }
    }
    for (const auto& [row0, n] : rows) {
      vk::Dispatch d;
      d.pipeline = pipelines_[i];
      for (NodeId b : k.bindings) d.bindings.push_back(bound_[static_cast<size_t>(b)]);
      if (n > 0) {  // a window of C (binding 0) and of A
        d.windows.assign(k.num_bindings(), vk::BufferWindow{});
        if (!k.row_split->c_whole) d.windows[0] = {row0 * c_row, n * c_row};
        const uint32_t a = k.row_split->a_binding;
        const NodeId a_node = k.bindings[a];
        const uint64_t a_size =
            (d.bindings[a] ? d.bindings[a]->size() : capacity_[static_cast<size_t>(a_node)]) / 4 *
            4;
        const uint64_t a_off = row0 * a_row;
        d.windows[a] = a_off < a_size ? vk::BufferWindow{a_off, std::min(n * a_row, a_size - a_off)}
                                      : vk::BufferWindow{0, std::min(n * a_row, a_size)};
      }
      parts_.push_back({i, row0, n, 0, 0});
      dispatches.push_back(std::move(d));
    }
  }
  // The params buffer: each part's sizes block, then its indirect arguments.
  uint64_t bytes = 0;
  for (Part& p : parts_) {
    p.sizes_offset = bytes;
    bytes += round_up(std::max<uint32_t>(plan_.kernels[p.kernel].sizes_bytes(), 4), kAlign);
  }
  for (Part& p : parts_) {
    p.indirect_offset = bytes;
    bytes += 16;
  }
  params_.reset();
  KILN_ASSIGN_OR_RETURN(params_, device_->allocate(bytes, vk::MemoryUse::kHostWritable));
  if (params_->mapped() == nullptr) return internal_error("the params buffer is not mapped");
  for (size_t j = 0; j < parts_.size(); ++j) {
    const Kernel& k = plan_.kernels[parts_[j].kernel];
    vk::Dispatch& d = dispatches[j];
    if (!k.size_slots.empty()) {
      d.bindings.push_back(params_);
      d.windows.resize(k.num_bindings(), vk::BufferWindow{});
      d.windows.back() = {parts_[j].sizes_offset, k.sizes_bytes()};
    }
    d.indirect_offset = static_cast<int64_t>(parts_[j].indirect_offset);
  }
  output_refs_.clear();
  for (size_t j = 0; j < parts_.size(); ++j) {
    const Kernel& k = plan_.kernels[parts_[j].kernel];
    for (size_t b = 0; b < k.bindings.size(); ++b)
      if (const int o = output_of_[static_cast<size_t>(k.bindings[b])]; o >= 0)
        output_refs_.push_back({j, b, static_cast<size_t>(o)});
  }
  dispatches_ = std::move(dispatches);
  timed_ = timed;
  return add_bank();
}

Status Replayer::add_bank() {
  Bank bank;
  KILN_ASSIGN_OR_RETURN(bank.buffer, allocate_arena(std::max<uint64_t>(bank_bytes_, kAlign)));
  for (size_t o = 0; o < output_nodes_.size(); ++o) {
    KILN_ASSIGN_OR_RETURN(vk::BufferRef s,
                          device_->slice(bank.buffer, output_offsets_[o],
                                         capacity_[static_cast<size_t>(output_nodes_[o])]));
    bank.slices.push_back(std::move(s));
  }
  std::vector<vk::Dispatch> dispatches = dispatches_;
  for (const OutputRef& r : output_refs_)
    dispatches[r.dispatch].bindings[r.binding] = bank.slices[r.output];
  KILN_ASSIGN_OR_RETURN(bank.recording, device_->record(dispatches, params_, timed_));
  banks_.push_back(std::move(bank));
  ReplayReport report;
  {
    std::lock_guard<std::mutex> lock(report_mu_);
    ++report_.recordings;
    report_.arena_bytes = arena_bytes_ + banks_.size() * bank_bytes_;
    report = report_;
  }
  if (log_enabled(LogTopic::kPerf))
    log(LogTopic::kPerf, "'" + name_ + "': recorded " + std::to_string(dispatches.size()) +
                             " dispatch(es) into output bank " + std::to_string(banks_.size()) +
                             "; arena " + std::to_string(arena_bytes_) + " bytes, outputs " +
                             std::to_string(bank_bytes_) + " bytes per bank (largest live set " +
                             std::to_string(report.largest_live_bytes) + ")");
  return {};
}

}  // namespace kiln
