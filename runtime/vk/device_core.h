/// \file device_core.h
/// The root every Vulkan object hangs from: instance + physical device + VkDevice. Shared by the
/// VulkanDevice, its allocators and every live Buffer, so the VkDevice is destroyed only after
/// the last buffer (and its memory block) is gone.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "cache/disk_cache.h"
#include "vk/instance.h"
#include "vk/physical_device.h"

namespace kiln::vk {

/// Serialises Kiln's queue submissions with an application that submits to the same queue
/// (kiln::vulkan::QueueLock; empty when the queue is Kiln's alone).
struct ExternalQueueLock {
  void (*lock)(void* user) = nullptr;
  void (*unlock)(void* user) = nullptr;
  void* user = nullptr;
};

struct DeviceCore {
  std::shared_ptr<Instance> instance;
  PhysicalDevice physical;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_index = 0;  // within physical.queue_family
  /// False when the application owns `device` (VulkanDevice::adopt): it is never destroyed here.
  bool owns_device = true;
  ExternalQueueLock queue_lock;
  /// The persistent cache (DeviceOptions::disk_cache, else the global one).
  std::shared_ptr<cache::DiskCache> disk;

  DeviceCore() = default;
  DeviceCore(const DeviceCore&) = delete;
  DeviceCore& operator=(const DeviceCore&) = delete;
  ~DeviceCore() {
    if (device != VK_NULL_HANDLE && owns_device) vkDestroyDevice(device, nullptr);
  }
};

}  // namespace kiln::vk
