#include "vk/physical_device.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "vk/vk_check.h"

namespace kiln::vk {
namespace {

const char* type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

/// Lower is better: discrete > integrated > virtual > cpu > other.
int type_rank(std::string_view type) {
  constexpr std::string_view kOrder[] = {"discrete", "integrated", "virtual", "cpu"};
  for (int i = 0; i < 4; ++i) {
    if (type == kOrder[i]) return i;
  }
  return 4;
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

/// True when api_version ("1.3.230") is at least 1.2.
bool supports_vulkan_1_2(const std::string& api_version) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(api_version.c_str(), "%u.%u", &major, &minor) != 2) return false;
  return major > 1 || (major == 1 && minor >= 2);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string device_list(std::span<const DeviceInfo> devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    out += out.empty() ? "" : "; ";
    out += "[" + std::to_string(d.index) + "] " + d.name + " (" + d.type + ", Vulkan " +
           d.api_version + ")";
  }
  return out.empty() ? "none" : out;
}

/// The compute family: a compute-only family if there is one (no graphics work competes with
/// it), else the first family with compute.
void choose_queue_family(PhysicalDevice& pd) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd.handle, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(pd.handle, &count, families.data());
  for (int pass = 0; pass < 2 && pd.queue_family == kNoQueueFamily; ++pass) {
    for (uint32_t i = 0; i < count; ++i) {
      const VkQueueFlags flags = families[i].queueFlags;
      if (!(flags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
      if (pass == 0 && (flags & VK_QUEUE_GRAPHICS_BIT)) continue;
      pd.queue_family = i;
      pd.timestamp_valid_bits = families[i].timestampValidBits;
      break;
    }
  }
}

Status query_extensions(PhysicalDevice& pd) {
  uint32_t count = 0;
  KILN_VK_RETURN_IF_ERROR(
      vkEnumerateDeviceExtensionProperties(pd.handle, nullptr, &count, nullptr));
  std::vector<VkExtensionProperties> extensions(count);
  KILN_VK_RETURN_IF_ERROR(
      vkEnumerateDeviceExtensionProperties(pd.handle, nullptr, &count, extensions.data()));
  for (uint32_t i = 0; i < count; ++i) {
    if (std::strcmp(extensions[i].extensionName, "VK_KHR_portability_subset") == 0) {
      pd.portability_subset = true;
    }
  }
  return Status::ok_status();
}

/// Unified memory: a DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT type on the largest device-local
/// heap. A small host-visible window (the 256 MiB BAR of a discrete GPU without resizable BAR)
/// does not count: buffers would run out of it long before device memory.
bool has_unified_memory(const VkPhysicalDeviceMemoryProperties& memory) {
  VkDeviceSize largest_local = 0;
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h) {
    if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      largest_local = std::max(largest_local, memory.memoryHeaps[h].size);
    }
  }
  constexpr VkMemoryPropertyFlags kUnified = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                             VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
    const VkMemoryType& type = memory.memoryTypes[t];
    if ((type.propertyFlags & kUnified) == kUnified &&
        memory.memoryHeaps[type.heapIndex].size >= largest_local) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x10005:
      return "Mesa";
    default:
      break;
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%X", vendor_id);
  return buf;
}

bool unified_memory_disabled_by_env() {
  const char* env = std::getenv("KILN_DISABLE_UNIFIED_MEMORY");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
}

int32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                         VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  int32_t fallback = -1;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
    if (!(type_bits & (1u << t))) continue;
    const VkMemoryPropertyFlags flags = memory.memoryTypes[t].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int32_t>(t);
    if (fallback < 0) fallback = static_cast<int32_t>(t);
  }
  return fallback;
}

Expected<PhysicalDevice> query_physical_device(VkPhysicalDevice handle, uint32_t index) {
  PhysicalDevice pd;
  pd.handle = handle;
  DeviceInfo& info = pd.info;
  info.index = index;

  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(handle, &base);
  pd.api_version = base.apiVersion;
  const bool v12 =
      VK_API_VERSION_MAJOR(base.apiVersion) > 1 || VK_API_VERSION_MINOR(base.apiVersion) >= 2;

  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  subgroup.pNext = &maintenance3;
  VkPhysicalDeviceIDProperties ids{};
  ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  maintenance3.pNext = &ids;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceFloatControlsProperties float_controls{};
  float_controls.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  if (v12) ids.pNext = &driver;
  if (v12) driver.pNext = &float_controls;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(handle, &props);
  const VkPhysicalDeviceLimits& limits = props.properties.limits;

  info.name = props.properties.deviceName;
  info.vendor_id = props.properties.vendorID;
  info.vendor = vendor_name(info.vendor_id);
  info.device_id = props.properties.deviceID;
  info.type = type_name(props.properties.deviceType);
  info.driver_name = v12 ? driver.driverName : "";
  info.driver_info = v12 ? driver.driverInfo : "";
  info.api_version = version_string(props.properties.apiVersion);
  std::copy_n(ids.deviceUUID, VK_UUID_SIZE, info.device_uuid.begin());
  std::copy_n(ids.driverUUID, VK_UUID_SIZE, info.driver_uuid.begin());

  info.subgroup_size = subgroup.subgroupSize;
  info.max_shared_memory = limits.maxComputeSharedMemorySize;
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
  }
  info.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  info.max_storage_buffer_range = limits.maxStorageBufferRange;
  info.max_push_constants_size = limits.maxPushConstantsSize;
  info.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  info.min_uniform_buffer_offset_alignment = limits.minUniformBufferOffsetAlignment;
  info.max_uniform_buffer_range = limits.maxUniformBufferRange;
  info.min_texel_buffer_offset_alignment = limits.minTexelBufferOffsetAlignment;
  info.max_texel_buffer_elements = limits.maxTexelBufferElements;
  {
    VkFormatProperties fp{};
    vkGetPhysicalDeviceFormatProperties(pd.handle, VK_FORMAT_R32G32B32A32_SFLOAT, &fp);
    info.texel_rgba32f = fp.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT;
    fp = {};
    vkGetPhysicalDeviceFormatProperties(pd.handle, VK_FORMAT_R32_SFLOAT, &fp);
    info.texel_r32f = fp.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT;
  }
  pd.max_memory_allocation_size = maintenance3.maxMemoryAllocationSize;
  pd.max_storage_buffers_per_stage = limits.maxPerStageDescriptorStorageBuffers;

  const bool compute_subgroups = subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT;
  const VkSubgroupFeatureFlags ops = compute_subgroups ? subgroup.supportedOperations : 0;
  info.subgroup_basic = ops & VK_SUBGROUP_FEATURE_BASIC_BIT;
  info.subgroup_arithmetic = ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  info.subgroup_shuffle = ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  info.subgroup_ballot = ops & VK_SUBGROUP_FEATURE_BALLOT_BIT;
  info.subgroup_vote = ops & VK_SUBGROUP_FEATURE_VOTE_BIT;
  info.signed_zero_inf_nan_preserve_f32 =
      v12 && float_controls.shaderSignedZeroInfNanPreserveFloat32;

  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceVulkan11Features f11{};
  f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = v12 ? &f11 : nullptr;
  vkGetPhysicalDeviceFeatures2(handle, &features);
  info.shader_int16 = features.features.shaderInt16;
  info.shader_int64 = features.features.shaderInt64;
  info.shader_float16 = f12.shaderFloat16;
  info.shader_int8 = f12.shaderInt8;
  info.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  info.storage_buffer_8bit = f12.storageBuffer8BitAccess;

  choose_queue_family(pd);
  info.timestamp_period_ns = pd.timestamp_valid_bits > 0 ? limits.timestampPeriod : 0.0f;

  vkGetPhysicalDeviceMemoryProperties(handle, &pd.memory);
  info.unified_memory = has_unified_memory(pd.memory) && !unified_memory_disabled_by_env();
  KILN_RETURN_IF_ERROR(query_extensions(pd));
  return pd;
}

Expected<uint32_t> select_device_index(std::span<const DeviceInfo> devices,
                                       const std::string& selector) {
  if (devices.empty()) return unavailable("no Vulkan physical device found");
  // Candidates in preference order: type rank, then index.
  std::vector<const DeviceInfo*> ranked;
  for (const DeviceInfo& d : devices) ranked.push_back(&d);
  std::stable_sort(ranked.begin(), ranked.end(), [](const DeviceInfo* a, const DeviceInfo* b) {
    return type_rank(a->type) < type_rank(b->type);
  });

  const DeviceInfo* chosen = nullptr;
  if (selector.empty()) {
    for (const DeviceInfo* d : ranked) {
      if (supports_vulkan_1_2(d->api_version)) {
        chosen = d;
        break;
      }
    }
    if (chosen == nullptr) {
      return unavailable("Kiln needs Vulkan 1.2; no device supports it. Devices: " +
                         device_list(devices));
    }
    return chosen->index;
  }

  const bool numeric =
      std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (numeric) {
    const unsigned long index = std::strtoul(selector.c_str(), nullptr, 10);
    for (const DeviceInfo& d : devices) {
      if (d.index == index) chosen = &d;
    }
  } else {
    const std::string needle = lower(selector);
    for (const DeviceInfo* d : ranked) {
      if (lower(d->name).find(needle) != std::string::npos) {
        chosen = d;
        break;
      }
    }
  }
  if (chosen == nullptr) {
    return invalid_argument(
        "device selector '" + selector +
        "' (KILN_DEVICE or DeviceOptions::selector) matches no Vulkan device; " +
        "devices: " + device_list(devices));
  }
  if (!supports_vulkan_1_2(chosen->api_version)) {
    return unavailable("device '" + chosen->name + "' supports Vulkan " + chosen->api_version +
                       " but Kiln needs Vulkan 1.2");
  }
  return chosen->index;
}

}  // namespace kiln::vk
