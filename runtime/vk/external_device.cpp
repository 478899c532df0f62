// VulkanDevice::adopt: a Kiln device on an application's VkInstance, VkDevice and queue.
#include <vulkan/vulkan.h>

#include <string>
#include <vector>

#include "kiln/vulkan_interop.h"
#include "vk/device_limits.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

bool at_least_1_2(uint32_t version) {
  return VK_API_VERSION_MAJOR(version) > 1 || VK_API_VERSION_MINOR(version) >= 2;
}

/// The optional features the application enabled, read from its VkDeviceCreateInfo chain.
struct Enabled {
  bool int64 = false, int16 = false, float16 = false, int8 = false;
  bool storage16 = false, storage8 = false;
};

void read_core(const VkPhysicalDeviceFeatures& f, Enabled& e) {
  e.int64 = e.int64 || f.shaderInt64;
  e.int16 = e.int16 || f.shaderInt16;
}

Enabled enabled_features(const vulkan::Handles& h) {
  Enabled e;
  if (h.enabled_core_features != nullptr) read_core(*h.enabled_core_features, e);
  for (auto* s = static_cast<const VkBaseInStructure*>(h.enabled_features); s != nullptr;
       s = s->pNext) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        read_core(reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features, e);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        e.storage16 =
            e.storage16 ||
            reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        e.float16 = e.float16 || f->shaderFloat16;
        e.int8 = e.int8 || f->shaderInt8;
        e.storage8 = e.storage8 || f->storageBuffer8BitAccess;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        e.storage16 =
            e.storage16 || reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)
                               ->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        e.storage8 = e.storage8 || reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)
                                       ->storageBuffer8BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES: {
        const auto* f = reinterpret_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(s);
        e.float16 = e.float16 || f->shaderFloat16;
        e.int8 = e.int8 || f->shaderInt8;
        break;
      }
      default:
        break;  // features Kiln does not use
    }
  }
  return e;
}

}  // namespace

Expected<std::shared_ptr<VulkanDevice>> VulkanDevice::adopt(
    const vulkan::Handles& h, std::shared_ptr<cache::DiskCache> disk) {
  if (h.instance == VK_NULL_HANDLE || h.physical_device == VK_NULL_HANDLE ||
      h.device == VK_NULL_HANDLE)
    return invalid_argument(
        "kiln::vulkan::adopt: instance, physical_device and device must be set");
  if (!at_least_1_2(h.instance_api_version))
    return unavailable(
        "kiln::vulkan::adopt: Kiln needs an instance created for Vulkan 1.2 or "
        "later (instance_api_version)");
  std::shared_ptr<Instance> instance = Instance::wrap(h.instance);
  KILN_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> handles, instance->physical_devices());
  uint32_t index = 0;
  while (index < handles.size() && handles[index] != h.physical_device) ++index;
  if (index == handles.size())
    return invalid_argument("kiln::vulkan::adopt: physical_device is not a device of instance");
  KILN_ASSIGN_OR_RETURN(PhysicalDevice pd, query_physical_device(h.physical_device, index));
  if (!at_least_1_2(pd.api_version))
    return unavailable("kiln::vulkan::adopt: '" + pd.info.name + "' supports Vulkan " +
                       pd.info.api_version + "; Kiln needs 1.2");

  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(h.physical_device, &families, nullptr);
  std::vector<VkQueueFamilyProperties> props(families);
  vkGetPhysicalDeviceQueueFamilyProperties(h.physical_device, &families, props.data());
  if (h.queue_family >= families || !(props[h.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return invalid_argument("kiln::vulkan::adopt: queue family " + std::to_string(h.queue_family) +
                            " of '" + pd.info.name + "' has no compute queues");
  if (h.queue_index >= props[h.queue_family].queueCount)
    return invalid_argument("kiln::vulkan::adopt: queue family " + std::to_string(h.queue_family) +
                            " has " + std::to_string(props[h.queue_family].queueCount) +
                            " queues; queue_index " + std::to_string(h.queue_index) +
                            " is out of range");
  if ((h.queue_lock.lock == nullptr) != (h.queue_lock.unlock == nullptr))
    return invalid_argument("kiln::vulkan::adopt: queue_lock needs both lock and unlock");

  pd.queue_family = h.queue_family;
  pd.timestamp_valid_bits = props[h.queue_family].timestampValidBits;
  if (pd.timestamp_valid_bits == 0) pd.info.timestamp_period_ns = 0;
  // Only what the application enabled (and the device supports) may be used.
  const Enabled e = enabled_features(h);
  pd.info.shader_int64 = pd.info.shader_int64 && e.int64;
  pd.info.shader_int16 = pd.info.shader_int16 && e.int16;
  pd.info.shader_float16 = pd.info.shader_float16 && e.float16;
  pd.info.shader_int8 = pd.info.shader_int8 && e.int8;
  pd.info.storage_buffer_16bit = pd.info.storage_buffer_16bit && e.storage16;
  pd.info.storage_buffer_8bit = pd.info.storage_buffer_8bit && e.storage8;
  KILN_RETURN_IF_ERROR(apply_device_limits("", pd.info));  // KILN_DEVICE_LIMITS

  auto core = std::make_shared<DeviceCore>();
  core->instance = std::move(instance);
  core->physical = std::move(pd);
  core->device = h.device;
  core->queue_index = h.queue_index;
  core->owns_device = false;
  core->queue_lock = h.queue_lock;
  core->disk = disk ? std::move(disk)
                    : std::shared_ptr<cache::DiskCache>(&cache::DiskCache::global(), [](auto*) {});
  return VulkanDeviceImpl::create_from_core(std::move(core));
}

}  // namespace kiln::vk
