/// \file physical_device.h
/// Physical-device queries: DeviceInfo, the compute queue family, memory types, and the device
/// selection rule shared by VulkanDevice::create, select_device and `kiln devices`.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "vk/device.h"

namespace kiln::vk {

constexpr uint32_t kNoQueueFamily = UINT32_MAX;

/// Everything Kiln needs to know about one physical device before creating a VkDevice.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceInfo info;
  uint32_t api_version = 0;                // VK_MAKE_API_VERSION encoded
  uint32_t queue_family = kNoQueueFamily;  // the compute family Kiln uses
  uint32_t timestamp_valid_bits = 0;       // of that family
  uint64_t max_memory_allocation_size = 0;
  uint32_t max_storage_buffers_per_stage = 0;
  bool portability_subset = false;  // VK_KHR_portability_subset must then be enabled
  VkPhysicalDeviceMemoryProperties memory{};
};

/// Fills a PhysicalDevice for `handle`, the `index`-th device of its instance.
Expected<PhysicalDevice> query_physical_device(VkPhysicalDevice handle, uint32_t index);

/// "NVIDIA", "AMD", ..., or "0x1234" for an unknown vendor id.
std::string vendor_name(uint32_t vendor_id);

/// KILN_DISABLE_UNIFIED_MEMORY=1 makes Kiln treat every device as discrete (staging copies);
/// it exercises the staging path on unified-memory devices such as lavapipe.
bool unified_memory_disabled_by_env();

/// A memory type index allowed by `type_bits` that has all of `required` flags, preferring one
/// that also has `preferred`; -1 when none has `required`.
int32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                         VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);

/// The device `selector` picks (an index, or a case-insensitive name substring; empty: the best
/// by type, discrete > integrated > virtual > cpu, ties by index). Devices older than Vulkan 1.2
/// are never picked by default. Errors: invalid_argument naming the devices, or unavailable.
Expected<uint32_t> select_device_index(std::span<const DeviceInfo> devices,
                                       const std::string& selector);

}  // namespace kiln::vk
