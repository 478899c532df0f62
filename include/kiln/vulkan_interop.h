/// \file vulkan_interop.h
/// Running Kiln on an application's own Vulkan device (a renderer that already owns a
/// VkInstance, VkDevice and queues). Needs the Vulkan headers; include/kiln/kiln.h does not
/// include this file.
///
///     kiln::vulkan::Handles h;
///     h.instance = instance;  h.physical_device = gpu;  h.device = device;
///     h.queue_family = compute_family;  h.queue_index = 0;
///     h.enabled_features = &features2;  // the pNext chain given to vkCreateDevice
///     kiln::Device dev = kiln::value_or_throw(kiln::vulkan::adopt(h));
///
/// Kiln then allocates memory, pipelines, command pools and descriptor pools on `device` and
/// submits to the queue; it destroys those objects when the last handle on the Device (tensors
/// and compiled entries included) is gone, and never destroys the instance, the device or the
/// queue. Release every Kiln object on the device before destroying the device. docs/runtime.md,
/// "Devices", has the rules.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "kiln/device.h"
#include "kiln/status.h"

namespace kiln::vulkan {

/// When the application also submits to the queue it hands to Kiln, Kiln calls lock() before
/// and unlock() after each of its vkQueueSubmit calls (Vulkan requires queue access to be
/// externally synchronised). Both null: the queue is Kiln's alone.
struct QueueLock {
  void (*lock)(void* user) = nullptr;
  void (*unlock)(void* user) = nullptr;
  void* user = nullptr;
};

struct Handles {
  VkInstance instance = VK_NULL_HANDLE;
  /// The apiVersion the instance was created with; Kiln needs Vulkan 1.2 (instance and device).
  uint32_t instance_api_version = VK_API_VERSION_1_2;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  /// A queue family with VK_QUEUE_COMPUTE_BIT, and a queue the device was created with.
  uint32_t queue_family = 0;
  uint32_t queue_index = 0;
  /// The features enabled on `device`: the pNext chain of its VkDeviceCreateInfo (a
  /// VkPhysicalDeviceFeatures2, VkPhysicalDeviceVulkan11Features / Vulkan12Features, or the
  /// 16-bit storage, 8-bit storage and float16/int8 feature structs). Kiln uses an optional
  /// feature (int64 and int16 arithmetic, 8/16-bit storage, float16) only when it appears
  /// here; null means none is enabled, and kernels needing one run on the interpreter.
  const void* enabled_features = nullptr;
  /// Also set when `enabled_features` is null but VkDeviceCreateInfo::pEnabledFeatures was
  /// used (shaderInt64, shaderInt16).
  const VkPhysicalDeviceFeatures* enabled_core_features = nullptr;
  QueueLock queue_lock;
  /// The persistent cache, as DeviceOpenOptions::cache_dir (null or "": the process's).
  const char* cache_dir = nullptr;
};

/// A kiln::Device on the application's Vulkan objects. Errors: invalid_argument for null
/// handles, a queue family without compute or a physical device not of `instance`;
/// unavailable when the device or instance is older than Vulkan 1.2.
Expected<Device> adopt(const Handles& handles);

}  // namespace kiln::vulkan
