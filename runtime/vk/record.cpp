// VulkanDevice::record / replay: a command buffer with its own descriptor sets, recorded once and
// submitted many times. Sizes reach its kernels through buffers the host rewrites before each
// replay, and workgroup counts through indirect dispatch, so one recording serves many sizes.
#include <algorithm>
#include <cstring>
#include <string>

#include "vk/vk_check.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

class RecordingImpl final : public Recording {
 public:
  explicit RecordingImpl(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {}
  ~RecordingImpl() override {
    const VkDevice dev = core_->device;
    for (VkBufferView v : views) vkDestroyBufferView(dev, v, nullptr);
    if (queries != VK_NULL_HANDLE) vkDestroyQueryPool(dev, queries, nullptr);
    if (descriptor_pool != VK_NULL_HANDLE) vkDestroyDescriptorPool(dev, descriptor_pool, nullptr);
    if (command_pool != VK_NULL_HANDLE) vkDestroyCommandPool(dev, command_pool, nullptr);
  }
  RecordingImpl(const RecordingImpl&) = delete;
  RecordingImpl& operator=(const RecordingImpl&) = delete;
  size_t dispatch_count() const override { return active.size(); }

  VkDevice device_handle() const { return core_->device; }

  std::vector<Dispatch> dispatches;  // holds the bound buffers alive; labels for timings
  std::vector<size_t> active;        // dispatches recorded (indirect, or a non-empty grid)
  BufferRef indirect;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  std::vector<VkBufferView> views;
  VkQueryPool queries = VK_NULL_HANDLE;

 private:
  std::shared_ptr<DeviceCore> core_;  // destroyed last
};

}  // namespace

Expected<std::shared_ptr<Recording>> VulkanDeviceImpl::record(std::span<const Dispatch> dispatches,
                                                              const BufferRef& indirect,
                                                              bool timestamps) {
  auto rec = std::make_shared<RecordingImpl>(core_);
  rec->dispatches.assign(dispatches.begin(), dispatches.end());
  rec->indirect = indirect;
  const DeviceBuffer* indirect_buffer = nullptr;
  if (indirect != nullptr) {
    KILN_ASSIGN_OR_RETURN(indirect_buffer, own_buffer(indirect, "indirect argument buffer"));
  }
  uint32_t sets = 0;
  uint32_t descriptors = 0;
  for (size_t i = 0; i < dispatches.size(); ++i) {
    const Dispatch& d = dispatches[i];
    if (d.indirect_offset >= 0) {
      if (indirect_buffer == nullptr || d.indirect_offset % 4 != 0 ||
          static_cast<uint64_t>(d.indirect_offset) + 12 > indirect_buffer->size())
        return invalid_argument("recorded dispatch " + std::to_string(i) + ": indirect offset " +
                                std::to_string(d.indirect_offset) +
                                " is unaligned or outside the indirect buffer");
    } else if (d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0) {
      continue;
    }
    KILN_RETURN_IF_ERROR(check_dispatch(d, i));
    rec->active.push_back(i);
    if (d.pipeline->num_bindings > 0) {
      ++sets;
      descriptors += d.pipeline->num_bindings;
    }
  }

  const VkDevice dev = device();
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.queueFamilyIndex = core_->physical.queue_family;
  KILN_VK_RETURN_IF_ERROR(vkCreateCommandPool(dev, &pool, nullptr, &rec->command_pool));
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = rec->command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  KILN_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(dev, &alloc, &rec->cmd));

  std::vector<VkDescriptorSet> descriptor_sets;
  if (sets > 0)
    KILN_RETURN_IF_ERROR(create_descriptor_pool(dev, sets, descriptors, &rec->descriptor_pool));
  KILN_RETURN_IF_ERROR(write_descriptor_sets(rec->dispatches, rec->active, rec->descriptor_pool,
                                             descriptor_sets, rec->views));
  const bool timed = timestamps && core_->physical.info.timestamp_period_ns > 0;
  if (timed && !rec->active.empty()) {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = static_cast<uint32_t>(2 * rec->active.size());
    KILN_VK_RETURN_IF_ERROR(vkCreateQueryPool(dev, &info, nullptr, &rec->queries));
  }

  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  KILN_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(rec->cmd, &begin));
  ++stats_.command_buffers_recorded;
  // Host writes (sizes, indirect arguments) come before each submission and are visible to it;
  // earlier device work finished before the previous submission returned.
  record_commands(rec->cmd, rec->dispatches, rec->active, descriptor_sets, rec->queries,
                  indirect_buffer);
  KILN_VK_RETURN_IF_ERROR(vkEndCommandBuffer(rec->cmd));
  return std::shared_ptr<Recording>(std::move(rec));
}

Expected<bool> VulkanDeviceImpl::record_copies_in(CommandSlot& slot, std::span<const CopyIn> copies,
                                                  StagingRanges& staging, const std::string& what) {
  bool recording = false;
  for (const CopyIn& c : copies) {
    KILN_ASSIGN_OR_RETURN(const DeviceBuffer* to,
                          own_buffer(c.dst, (what + " destination").c_str()));
    const DeviceBuffer* from = nullptr;
    if (c.src != nullptr) {
      KILN_ASSIGN_OR_RETURN(from, own_buffer(c.src, (what + " source").c_str()));
    } else if (c.host == nullptr && c.bytes > 0) {
      return invalid_argument(what + " source is null");
    }
    if (c.bytes > to->size() || (from != nullptr && c.bytes > from->size()))
      return invalid_argument(what + " of " + std::to_string(c.bytes) + " bytes " +
                              (from != nullptr
                                   ? "between buffers of " + std::to_string(from->size()) + " and "
                                   : "into a buffer of ") +
                              std::to_string(to->size()));
    if (c.bytes == 0) continue;
    // Every earlier submission has finished, so the host may write mapped memory now.
    if (to->mapped() != nullptr && (from == nullptr || from->mapped() != nullptr)) {
      std::memmove(to->mapped(), from != nullptr ? from->mapped() : c.host, c.bytes);
      continue;
    }
    if (!recording) {
      KILN_RETURN_IF_ERROR(begin_commands(slot));
      // Earlier dispatches may still read or write the destination: the copies come after them.
      cmd_memory_barrier(slot.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
      recording = true;
    }
    VkBuffer source = VK_NULL_HANDLE;
    VkDeviceSize source_offset = 0;
    if (from != nullptr) {
      source = from->vk_buffer();
      source_offset = from->offset();
    } else {
      KILN_ASSIGN_OR_RETURN(const Allocation range, staging_->allocate(c.bytes));
      staging.ranges.push_back(range);
      std::memcpy(range.block->mapped + range.offset, c.host, c.bytes);
      ++stats_.staged_uploads;
      source = range.block->buffer;
      source_offset = range.offset;
    }
    const VkBufferCopy region{source_offset, to->offset(), c.bytes};
    vkCmdCopyBuffer(slot.cmd, source, to->vk_buffer(), 1, &region);
  }
  if (recording) {
    cmd_memory_barrier(slot.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    KILN_VK_RETURN_IF_ERROR(vkEndCommandBuffer(slot.cmd));
  }
  return recording;
}

Status VulkanDeviceImpl::submit_copies(std::span<const CopyIn> copies, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(SlotLease slot, acquire_slot());
  StagingRanges staging{staging_.get(), {}};
  KILN_ASSIGN_OR_RETURN(const bool recorded, record_copies_in(*slot, copies, staging, what));
  if (!recorded) return Status::ok_status();
  const VkCommandBuffer cmds[] = {slot->cmd};
  return submit_and_wait(*slot, cmds);
}

Status VulkanDeviceImpl::replay(Recording& recording, std::span<const CopyIn> copies,
                                std::vector<DispatchTiming>* timings) {
  auto* rec = dynamic_cast<RecordingImpl*>(&recording);
  if (rec == nullptr || rec->device_handle() != device())
    return invalid_argument("replay of a recording made by another device");
  if (timings != nullptr) timings->clear();
  // The recording belongs to one caller at a time (a Replayer); the slot lends its fence, and
  // its command buffer carries the copies that need the device.
  KILN_ASSIGN_OR_RETURN(SlotLease slot, acquire_slot());
  StagingRanges staging{staging_.get(), {}};
  KILN_ASSIGN_OR_RETURN(const bool copying,
                        record_copies_in(*slot, copies, staging, "replay copy"));
  std::vector<VkCommandBuffer> cmds;
  if (copying) cmds.push_back(slot->cmd);
  if (!rec->active.empty()) cmds.push_back(rec->cmd);
  if (cmds.empty()) return Status::ok_status();
  KILN_RETURN_IF_ERROR(submit_and_wait(*slot, cmds));
  if (rec->active.empty()) return Status::ok_status();
  ++stats_.replays;
  stats_.dispatches += rec->active.size();
  if (timings != nullptr && rec->queries != VK_NULL_HANDLE)
    KILN_RETURN_IF_ERROR(read_timings(rec->queries, rec->dispatches, rec->active, *timings));
  return Status::ok_status();
}

}  // namespace kiln::vk
