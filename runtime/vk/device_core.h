/// \file device_core.h
/// The root every Vulkan object hangs from: instance + physical device + VkDevice. Shared by the
/// VulkanDevice, its allocators and every live Buffer, so the VkDevice is destroyed only after
/// the last buffer (and its memory block) is gone.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "vk/instance.h"
#include "vk/physical_device.h"

namespace kiln::vk {

struct DeviceCore {
  std::shared_ptr<Instance> instance;
  PhysicalDevice physical;
  VkDevice device = VK_NULL_HANDLE;

  DeviceCore() = default;
  DeviceCore(const DeviceCore&) = delete;
  DeviceCore& operator=(const DeviceCore&) = delete;
  ~DeviceCore() {
    if (device != VK_NULL_HANDLE) vkDestroyDevice(device, nullptr);
  }
};

}  // namespace kiln::vk
