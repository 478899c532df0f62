#include "exec/replay.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "exec/dump.h"
#include "kiln/logging.h"
#include "tensor/tensor_impl.h"

namespace kiln {
namespace {

constexpr uint64_t kCopyInputBytes = 1 << 20;  // device inputs up to this size are copied in

/// Every live Replayer, so that one that cannot get its arena can make others give theirs up.
/// Never destroyed: Replayers owned by static caches are destroyed at exit, possibly after a
/// function-local static vector (constructed later than those caches) would already be gone.
std::mutex registry_mu;
std::vector<Replayer*>& registry() {
  static auto* all = new std::vector<Replayer*>;
  return *all;
}

bool is_host(const Tensor& t) {
  return t.impl()->device.is_cpu() || t.impl()->literal;
}

}  // namespace

Replayer::Replayer(const Graph& graph, const KernelPlan& plan,
                   std::vector<const vk::Pipeline*> pipelines,
                   std::shared_ptr<vk::VulkanDevice> device, Device kiln_device, std::string name)
    : graph_(graph),
      plan_(plan),
      pipelines_(std::move(pipelines)),
      device_(std::move(device)),
      kiln_device_(kiln_device),
      name_(std::move(name)) {
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    registry().push_back(this);
  }
  capacity_.assign(graph_.size(), 0);
  bound_.resize(graph_.size());
  std::vector<bool> seen(graph_.size(), false);
  for (const Kernel& k : plan_.kernels) {
    for (NodeId b : k.bindings) {
      if (seen[static_cast<size_t>(b)]) continue;
      seen[static_cast<size_t>(b)] = true;
      const Node& n = graph_.node(b);
      if (n.op == OpKind::Input || n.op == OpKind::Constant)
        externals_.push_back({b, Mode::kSlot, {}});
      else
        slot_nodes_.push_back(b);
    }
  }
}

Replayer::~Replayer() {
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    std::erase(registry(), this);
  }
}

uint64_t Replayer::release_if_idle() {
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (!busy.owns_lock() || banks_.empty()) return 0;
  const uint64_t bytes = report().arena_bytes;
  banks_.clear();  // held outputs keep their bank's memory
  std::fill(bound_.begin(), bound_.end(), nullptr);
  arena_.reset();
  params_.reset();
  return bytes;
}

Expected<vk::BufferRef> Replayer::allocate_arena(uint64_t bytes) {
  Expected<vk::BufferRef> arena = device_->allocate(bytes);
  if (arena.ok() || arena.status().code() != StatusCode::kResourceExhausted) return arena;
  // Out of device memory: the arenas of other compiled graphs on this device are only needed
  // by their next call, which plans again (those running a call now keep theirs).
  uint64_t freed = 0;
  size_t count = 0;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    for (Replayer* r : registry()) {
      if (r == this || r->device_ != device_) continue;
      const uint64_t b = r->release_if_idle();
      freed += b;
      count += b > 0;
    }
  }
  if (count == 0) return arena;
  log(LogTopic::kWarning, "'" + name_ + "': out of device memory for a " + std::to_string(bytes) +
                              "-byte arena; released " + std::to_string(count) +
                              " other compiled graph arena(s) (" + std::to_string(freed) +
                              " bytes) and retried");
  return device_->allocate(bytes);
}

const Tensor& Replayer::tensor_of(NodeId node, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& constants) const {
  const Node& n = graph_.node(node);
  return n.op == OpKind::Input ? inputs.at(static_cast<size_t>(n.attrs.index))
                               : constants.at(static_cast<size_t>(n.attrs.index));
}

const Shape& Replayer::shape_of(NodeId node) const {
  return shapes_ ? (*shapes_)[static_cast<size_t>(node)] : graph_.node(node).meta.shape;
}

uint64_t Replayer::bytes_of(NodeId node) const {
  return static_cast<uint64_t>(numel(shape_of(node))) * dtype_size(graph_.node(node).meta.dtype);
}

bool Replayer::in_a_bank(const vk::BufferRef& buffer) const {
  const auto [memory, offset] = buffer->location();
  for (const Bank& b : banks_) {
    const auto [bank_memory, bank_offset] = b.buffer->location();
    if (memory == bank_memory && offset >= bank_offset && offset < bank_offset + b.buffer->size())
      return true;
  }
  return false;
}

Expected<size_t> Replayer::choose_bank() {
  auto held = [](const Bank& b) {
    for (const std::weak_ptr<vk::Buffer>& w : b.handed_out)
      if (!w.expired()) return true;
    return false;
  };
  for (size_t i = 0; i < banks_.size() && i < kMaxBanks; ++i)
    if (!held(banks_[i])) return i;
  if (banks_.size() < kMaxBanks) {  // the previous results are still held: a second bank
    KILN_RETURN_IF_ERROR(add_bank());
    return banks_.size() - 1;
  }
  // Every bank holds live results: run into the spill bank and copy the outputs out. (Moving
  // the held results out instead would change their memory under whoever uses them now,
  // possibly on another thread.)
  if (banks_.size() == kSpill) KILN_RETURN_IF_ERROR(add_bank());
  return kSpill;
}

Status Replayer::write_params(std::span<const int64_t> values) {
  auto* base = static_cast<uint8_t*>(params_->mapped());
  const std::array<uint32_t, 3> max_count = device_->info().max_workgroup_count;
  for (const Part& p : parts_) {
    const Kernel& k = plan_.kernels[p.kernel];
    auto* slots = reinterpret_cast<uint32_t*>(base + p.sizes_offset);
    for (size_t s = 0; s < k.size_slots.size(); ++s) {
      const int64_t v = k.size_slots[s].evaluate(values);
      if (v < 0 || v > kMaxKernelElements)
        return unimplemented(k.name + ": size " + k.size_slots[s].str() + " = " +
                             std::to_string(v) + " does not fit the kernel's uint32 math");
      slots[s] = static_cast<uint32_t>(v);
    }
    std::array<uint32_t, 3> groups = numel(shape_of(k.root)) == 0
                                         ? std::array<uint32_t, 3>{0, 0, 0}
                                         : kernel_groups(k, values, max_count);
    if (k.row_split && p.rows > 0) {  // this part's rows of the call's M
      const Kernel::RowSplit& rs = *k.row_split;
      const uint64_t m = slots[rs.rows_slot];
      const uint64_t n = m > p.row0 ? std::min<uint64_t>(m - p.row0, p.rows) : 0;
      slots[rs.rows_slot] = static_cast<uint32_t>(n);
      slots[rs.row0_slot] = static_cast<uint32_t>(p.row0);
      groups[rs.row_axis] = static_cast<uint32_t>(std::min<uint64_t>(
          (n + rs.rows_per_group - 1) / rs.rows_per_group, max_count[rs.row_axis]));
      if (n == 0) groups = {0, 0, 0};
    }
    std::memcpy(base + p.indirect_offset, groups.data(), sizeof(groups));
  }
  return {};
}

Expected<std::vector<Tensor>> Replayer::run(const std::vector<Tensor>& inputs,
                                            const std::vector<Tensor>& constants,
                                            std::span<const int64_t> values,
                                            const std::vector<Shape>* shapes) {
  const std::lock_guard<std::mutex> busy(busy_);
  shapes_ = shapes;
  // Externals: host data and small device inputs are copied into the arena; the rest is bound.
  const bool timed = log_enabled(LogTopic::kPerf) || dump_timings_wanted();
  bool same = !banks_.empty() && timed_ == timed;
  for (External& e : externals_) {
    const Tensor& t = tensor_of(e.node, inputs, constants);
    const bool input = graph_.node(e.node).op == OpKind::Input;
    // An input that is one of this graph's own earlier results (y = f(y)) is copied in too:
    // binding it would record again on every call, as each result is a new buffer.
    const Mode mode =
        is_host(t) ||
                (input && (bytes_of(e.node) <= kCopyInputBytes || in_a_bank(t.impl()->buffer)))
            ? Mode::kSlot
            : Mode::kBind;
    same = same && mode == e.mode &&
           (mode == Mode::kSlot || t.impl()->buffer->location() == e.location);
    e.mode = mode;
  }
  for (size_t s = 0; same && s < layout_nodes_.size(); ++s)
    same = round_up(std::max<uint64_t>(bytes_of(layout_nodes_[s]), 4), kAlign) <=
           capacity_[static_cast<size_t>(layout_nodes_[s])];
  for (size_t i = 0; same && i < plan_.kernels.size(); ++i) {  // row windows: the same row bytes
    const Kernel& k = plan_.kernels[i];
    if (k.row_split &&
        k.row_split->c_row_elements.evaluate(values) * 4 != static_cast<int64_t>(row_bytes_[i]))
      same = false;
  }
  if (!same) {
    const auto t0 = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(rebuild(inputs, constants, values, timed));
    if (log_enabled(LogTopic::kPerf))
      log(LogTopic::kPerf, "'" + name_ + "': planned and recorded in " +
                               std::to_string(std::chrono::duration<double, std::milli>(
                                                  std::chrono::steady_clock::now() - t0)
                                                  .count()) +
                               " ms");
  }
  KILN_ASSIGN_OR_RETURN(const size_t use, choose_bank());
  Bank& bank = banks_[use];
  bank.handed_out.clear();
  // Copy in, in the replay's own submission (on unified memory, host copies before it).
  std::vector<vk::CopyIn> copies;
  std::vector<HostTensor> literals;  // materialised literals, alive until the replay returns
  literals.reserve(externals_.size());
  for (const External& e : externals_) {
    if (e.mode != Mode::kSlot) continue;
    const Tensor& t = tensor_of(e.node, inputs, constants);
    vk::CopyIn c{.dst = bound_[static_cast<size_t>(e.node)], .bytes = bytes_of(e.node)};
    if (t.impl()->host != nullptr) {  // host data goes straight into the slot, no copy first
      c.host = t.impl()->host->data.data();
    } else if (is_host(t)) {  // a literal: materialised (one element)
      try {
        literals.push_back(to_host(t));
      } catch (const Error& err) {
        return err.status();
      }
      c.host = literals.back().data.data();
    } else {
      c.src = t.impl()->buffer;
    }
    copies.push_back(std::move(c));
  }
  KILN_RETURN_IF_ERROR(write_params(values));
  if (timed_) {
    std::vector<vk::DispatchTiming> timings;
    const auto t0 = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(device_->replay(*bank.recording, copies, &timings));
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // The dump names each dispatch by its kernel, not by its pipeline (equal kernels share one).
    if (timings.size() == parts_.size() && dump_timings_wanted()) {
      std::vector<vk::DispatchTiming> named = timings;
      for (size_t i = 0; i < named.size(); ++i)
        named[i].label = plan_.kernels[parts_[i].kernel].name;
      dump_timings(&plan_, named, wall);
    }
    std::string msg = "'" + name_ +
                      "' replay: " + std::to_string(bank.recording->dispatch_count()) +
                      " dispatch(es), " + std::to_string(wall) + " ms wall, arena " +
                      std::to_string(report().arena_bytes) + " bytes";
    for (const vk::DispatchTiming& t : timings)  // a row-split kernel once per part
      msg += "\n  " + t.label + ": " + std::to_string(t.gpu_ms) + " ms";
    if (log_enabled(LogTopic::kPerf)) log(LogTopic::kPerf, msg);
  } else {
    KILN_RETURN_IF_ERROR(device_->replay(*bank.recording, copies));
  }
  {
    std::lock_guard<std::mutex> lock(report_mu_);
    ++report_.replays;
  }

  std::vector<Tensor> outputs;
  for (NodeId out : graph_.outputs()) {
    const Node& n = graph_.node(out);
    if (n.op == OpKind::Input || n.op == OpKind::Constant) {
      outputs.push_back(tensor_of(out, inputs, constants));
      continue;
    }
    const int o = output_of_[static_cast<size_t>(out)];
    if (o < 0) return internal_error("output %" + std::to_string(out) + " has no bank slot");
    const uint64_t offset = output_offsets_[static_cast<size_t>(o)];
    Shape shape = shape_of(out);
    uint64_t bytes = bytes_of(out);
    if (op_category(n.op) == OpCategory::kCompaction) {  // its length: the kernel's count
      const uint64_t most = static_cast<uint64_t>(numel(shape_of(n.inputs[0])));
      // Bytes per unit of the length: an element (masked_select), a row of coordinates.
      const uint64_t width =
          dtype_size(n.meta.dtype) * static_cast<uint64_t>(n.meta.rank() > 1 ? n.meta.shape[1] : 1);
      uint32_t count = 0;
      KILN_RETURN_IF_ERROR(
          device_->download(bank.buffer, &count, sizeof count,
                            static_cast<size_t>(offset + masked_select_count_offset(most, width))));
      if (count > most)
        return internal_error(std::string(op_name(n.op)) + " %" + std::to_string(out) +
                              ": the kernel counted " + std::to_string(count) + " of " +
                              std::to_string(most) + " elements");
      shape[0] = static_cast<Dim>(count);
      bytes = count * width;
    }
    KILN_ASSIGN_OR_RETURN(vk::BufferRef view, device_->slice(bank.buffer, offset, bytes));
    if (use == kSpill) {  // a copy of its own: the spill bank is overwritten by the next call
      KILN_ASSIGN_OR_RETURN(vk::BufferRef copy, device_->allocate(bytes));
      KILN_RETURN_IF_ERROR(device_->copy(view, copy, bytes));
      view = std::move(copy);
    } else {
      bank.handed_out.push_back(view);
    }
    auto impl = std::make_shared<TensorImpl>();
    impl->meta = TensorMeta{n.meta.dtype, std::move(shape)};
    impl->device = kiln_device_;
    impl->buffer = std::move(view);
    outputs.push_back(Tensor(std::move(impl)));
  }
  return outputs;
}

}  // namespace kiln
