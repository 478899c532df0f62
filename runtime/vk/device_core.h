/// \file device_core.h
/// The root every Vulkan object hangs from: instance + physical device + VkDevice. Shared by the
/// VulkanDevice, its allocators and every live Buffer, so the VkDevice is destroyed only after
/// the last buffer (and its memory block) is gone.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "cache/disk_cache.h"
#include "kiln/vulkan_interop.h"
#include "vk/instance.h"
#include "vk/physical_device.h"

namespace kiln::vk {

struct DeviceCore {
  std::shared_ptr<Instance> instance;
  PhysicalDevice physical;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_index = 0;  // within physical.queue_family
  /// False when the application owns `device` (VulkanDevice::adopt): it is never destroyed here.
  bool owns_device = true;
  /// The application's lock around the queue (kiln::vulkan::adopt); empty when the queue is
  /// Kiln's alone.
  vulkan::QueueLock queue_lock;
  /// The persistent cache (DeviceOptions::disk_cache, else the global one).
  std::shared_ptr<cache::DiskCache> disk;
  bool prewarm = false;  // DeviceOptions::prewarm

  DeviceCore() = default;
  DeviceCore(const DeviceCore&) = delete;
  DeviceCore& operator=(const DeviceCore&) = delete;
  ~DeviceCore() {
    if (device != VK_NULL_HANDLE && owns_device) vkDestroyDevice(device, nullptr);
  }
};

}  // namespace kiln::vk
