// The device's VkPipelineCache, seeded from and saved to the persistent cache (docs/cache.md).
// The file is checked twice: Kiln's header (format, Kiln version, device + driver identity,
// checksum) and then Vulkan's own VkPipelineCacheHeaderVersionOne against this device.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "cache/disk_cache.h"
#include "kiln/logging.h"
#include "vk/vk_check.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

std::string hex(const uint8_t* bytes, size_t n) {
  std::string s;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    s += buf;
  }
  return s;
}

uint32_t read_u32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);  // VkPipelineCacheHeaderVersionOne is host-endian
  return v;
}

/// Checks the driver's own header at the start of vkGetPipelineCacheData output; the reason if
/// it is not for this device.
std::optional<std::string> vulkan_header_mismatch(const std::string& data,
                                                  const VkPhysicalDeviceProperties& p) {
  if (data.size() < 16 + VK_UUID_SIZE) return "data shorter than Vulkan's cache header";
  const uint32_t header_size = read_u32(data, 0), version = read_u32(data, 4);
  if (header_size < 16 + VK_UUID_SIZE || header_size > data.size())
    return "Vulkan header size " + std::to_string(header_size);
  if (version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
    return "Vulkan header version " + std::to_string(version);
  if (read_u32(data, 8) != p.vendorID || read_u32(data, 12) != p.deviceID)
    return "Vulkan header is for vendor/device " + std::to_string(read_u32(data, 8)) + "/" +
           std::to_string(read_u32(data, 12));
  if (std::memcmp(data.data() + 16, p.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return "Vulkan header pipelineCacheUUID " +
           hex(reinterpret_cast<const uint8_t*>(data.data()) + 16, VK_UUID_SIZE) + ", device has " +
           hex(p.pipelineCacheUUID, VK_UUID_SIZE);
  return std::nullopt;
}

}  // namespace

std::string VulkanDeviceImpl::pipeline_cache_key() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "vk-%04x-%04x", core_->physical.info.vendor_id,
                core_->physical.info.device_id);
  return buf;
}

std::string VulkanDeviceImpl::pipeline_cache_identity() const {
  VkPhysicalDeviceProperties p{};
  vkGetPhysicalDeviceProperties(core_->physical.handle, &p);
  const DeviceInfo& info = core_->physical.info;
  char ids[64];
  std::snprintf(ids, sizeof ids, "vendor 0x%x device 0x%x driverVersion 0x%x", p.vendorID,
                p.deviceID, p.driverVersion);
  return info.name + "; " + info.driver_name + " " + info.driver_info + "; " + ids +
         "; driverUUID " + hex(info.driver_uuid.data(), info.driver_uuid.size()) +
         "; pipelineCacheUUID " + hex(p.pipelineCacheUUID, VK_UUID_SIZE);
}

Status VulkanDeviceImpl::create_pipeline_cache() {
  cache::DiskCache& disk = cache::DiskCache::global();
  std::optional<std::string> data;
  if (disk.enabled()) {
    data = disk.load(cache::EntryKind::kPipelineCache, pipeline_cache_key(),
                     pipeline_cache_identity(), "");
    if (data) {
      VkPhysicalDeviceProperties p{};
      vkGetPhysicalDeviceProperties(core_->physical.handle, &p);
      if (std::optional<std::string> why = vulkan_header_mismatch(*data, p)) {
        log(LogTopic::kCache, "pipeline cache: rejected (" + *why + ") - rebuilding");
        data.reset();
      }
    }
  }
  VkPipelineCacheCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  if (data) {
    info.initialDataSize = data->size();
    info.pInitialData = data->data();
  }
  KILN_VK_RETURN_IF_ERROR(vkCreatePipelineCache(device(), &info, nullptr, &pipeline_cache_));
  pipeline_cache_loaded_ = data.has_value();
  pipeline_cache_hash_ = data ? cache::fnv1a64(*data) : 0;
  pipelines_at_save_ = stats_.pipelines_created.load();
  return Status::ok_status();
}

void VulkanDeviceImpl::save_pipeline_cache() {
  if (pipeline_cache_ == VK_NULL_HANDLE) return;
  cache::DiskCache& disk = cache::DiskCache::global();
  if (!disk.enabled()) return;
  std::lock_guard<std::mutex> lock(pipeline_cache_mu_);  // one save at a time
  const uint64_t created = stats_.pipelines_created.load();
  // Nothing new since the file was read or written.
  if (pipeline_cache_loaded_ && created == pipelines_at_save_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device(), pipeline_cache_, &size, nullptr) != VK_SUCCESS) return;
  std::string data(size, '\0');
  if (vkGetPipelineCacheData(device(), pipeline_cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  // Drivers that keep nothing in it (lavapipe: the 32-byte header) return the same bytes.
  const uint64_t hash = cache::fnv1a64(data);
  if (pipeline_cache_loaded_ && hash == pipeline_cache_hash_) {
    pipelines_at_save_ = created;
    return;
  }
  if (disk.store(cache::EntryKind::kPipelineCache, pipeline_cache_key(), pipeline_cache_identity(),
                 "", data)) {
    pipeline_cache_loaded_ = true;
    pipeline_cache_hash_ = hash;
    pipelines_at_save_ = created;
  }
}

}  // namespace kiln::vk
