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
  const CopyIn c{.dst = dst, .src = src, .bytes = bytes};
  return submit_copies({&c, 1}, "copy");
}

}  // namespace kiln::vk
