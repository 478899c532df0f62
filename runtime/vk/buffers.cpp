// VulkanDevice buffers: allocation by use, slices of a buffer (arenas), moving a slice into its
// own memory, and device-side copies.
#include <algorithm>
#include <cstring>
#include <string>

#include "vk/vk_check.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {

Expected<BufferRef> VulkanDeviceImpl::allocate(size_t bytes, MemoryUse use) {
  const size_t size = bytes == 0 ? 4 : bytes;  // a zero-size request still binds as a range
  const std::shared_ptr<Allocator>& from = use == MemoryUse::kDevice ? allocator_ : params_;
  KILN_ASSIGN_OR_RETURN(const Allocation allocation, from->allocate(size));
  return BufferRef(std::make_shared<DeviceBuffer>(from, allocation, size));
}

Expected<BufferRef> VulkanDeviceImpl::slice(const BufferRef& parent, size_t offset, size_t bytes) {
  KILN_ASSIGN_OR_RETURN(const DeviceBuffer* of, own_buffer(parent, "slice parent"));
  const VkDeviceSize align = of->allocator()->alignment();
  if (offset % align != 0)
    return invalid_argument("slice at byte " + std::to_string(offset) +
                            " is not a multiple of the allocation alignment (" +
                            std::to_string(align) + ")");
  const size_t size = bytes == 0 ? 4 : bytes;
  if (offset > of->size() || size > of->size() - offset)
    return invalid_argument("slice of " + std::to_string(size) + " bytes at " +
                            std::to_string(offset) + " does not fit a buffer of " +
                            std::to_string(of->size()));
  return BufferRef(std::make_shared<DeviceBuffer>(parent, *of, offset, size));
}

Status VulkanDeviceImpl::make_private(const BufferRef& buffer) {
  KILN_ASSIGN_OR_RETURN(const DeviceBuffer* view, own_buffer(buffer, "make_private buffer"));
  if (!view->is_slice()) return Status::ok_status();
  const bool host = view->allocator() == params_.get() && params_ != allocator_;
  KILN_ASSIGN_OR_RETURN(BufferRef fresh, allocate(view->size(), host ? MemoryUse::kHostWritable
                                                                     : MemoryUse::kDevice));
  KILN_RETURN_IF_ERROR(copy(buffer, fresh, view->size()));
  auto* slice = const_cast<DeviceBuffer*>(view);  // the same object the caller's BufferRef holds
  slice->adopt(static_cast<DeviceBuffer*>(fresh.get())->release());
  return Status::ok_status();
}

Status VulkanDeviceImpl::copy(const BufferRef& src, const BufferRef& dst, size_t bytes) {
  KILN_ASSIGN_OR_RETURN(const DeviceBuffer* from, own_buffer(src, "copy source"));
  KILN_ASSIGN_OR_RETURN(const DeviceBuffer* to, own_buffer(dst, "copy destination"));
  if (bytes > from->size() || bytes > to->size())
    return invalid_argument("copy of " + std::to_string(bytes) + " bytes between buffers of " +
                            std::to_string(from->size()) + " and " + std::to_string(to->size()));
  if (bytes == 0) return Status::ok_status();
  if (from->mapped() != nullptr && to->mapped() != nullptr) {  // every submission has finished
    std::memmove(to->mapped(), from->mapped(), bytes);
    return Status::ok_status();
  }
  KILN_ASSIGN_OR_RETURN(SlotLease slot, acquire_slot());
  KILN_RETURN_IF_ERROR(begin_commands(*slot));
  cmd_memory_barrier(slot->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  const VkBufferCopy region{from->offset(), to->offset(), bytes};
  vkCmdCopyBuffer(slot->cmd, from->vk_buffer(), to->vk_buffer(), 1, &region);
  cmd_memory_barrier(slot->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  return submit_and_wait(*slot);
}

}  // namespace kiln::vk
