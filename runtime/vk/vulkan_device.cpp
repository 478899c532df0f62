#include "vk/vulkan_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cache/disk_cache.h"
#include "vk/device_limits.h"
#include "vk/vk_check.h"

namespace kiln::vk {
namespace {

constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
    VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;

Expected<std::vector<PhysicalDevice>> query_all(const Instance& instance) {
  KILN_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> handles, instance.physical_devices());
  std::vector<PhysicalDevice> devices;
  for (uint32_t i = 0; i < handles.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(PhysicalDevice pd, query_physical_device(handles[i], i));
    devices.push_back(std::move(pd));
  }
  return devices;
}

std::vector<DeviceInfo> infos_of(const std::vector<PhysicalDevice>& devices) {
  std::vector<DeviceInfo> infos;
  for (const PhysicalDevice& pd : devices) infos.push_back(pd.info);
  return infos;
}

/// Creates the VkDevice with one compute queue and every optional feature Kiln uses that the
/// device supports.
Status create_logical_device(DeviceCore& core) {
  const PhysicalDevice& pd = core.physical;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = pd.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.shaderFloat16 = pd.info.shader_float16;
  f12.shaderInt8 = pd.info.shader_int8;
  f12.storageBuffer8BitAccess = pd.info.storage_buffer_8bit;
  VkPhysicalDeviceVulkan11Features f11{};
  f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f11.pNext = &f12;
  f11.storageBuffer16BitAccess = pd.info.storage_buffer_16bit;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &f11;
  features.features.shaderInt16 = pd.info.shader_int16;
  features.features.shaderInt64 = pd.info.shader_int64;

  std::vector<const char*> extensions;
  if (pd.portability_subset) extensions.push_back("VK_KHR_portability_subset");

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  KILN_VK_RETURN_IF_ERROR(vkCreateDevice(pd.handle, &info, nullptr, &core.device));
  return Status::ok_status();
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

// --- VulkanDevice statics ---------------------------------------------------------------------

std::vector<std::string> VulkanDevice::all_validation_messages() {
  return vk::all_validation_messages();
}

VulkanDevice::VulkanDevice() {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1);
}

Expected<std::vector<DeviceInfo>> VulkanDevice::enumerate() {
  const cache::DriverCacheScope driver_cache;  // Mesa's shader cache dir (docs/cache.md)
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Instance> instance, Instance::create(ValidationMode::kOff));
  KILN_ASSIGN_OR_RETURN(std::vector<PhysicalDevice> devices, query_all(*instance));
  return infos_of(devices);
}

Expected<uint32_t> VulkanDevice::select_device(std::span<const DeviceInfo> devices,
                                               const std::string& selector) {
  return select_device_index(devices, selector.empty() ? env_or_empty("KILN_DEVICE") : selector);
}

Expected<std::shared_ptr<VulkanDevice>> VulkanDevice::create(const DeviceOptions& options) {
  ValidationMode mode = ValidationMode::kOff;
  if (options.validation) {
    mode = ValidationMode::kRequired;
  } else if (validation_env_level() > 0) {
    mode = ValidationMode::kFromEnv;
  }
  std::shared_ptr<cache::DiskCache> disk = options.disk_cache;
  if (!disk) disk = std::shared_ptr<cache::DiskCache>(&cache::DiskCache::global(), [](auto*) {});
  const cache::DriverCacheScope driver_cache(*disk);  // Mesa's shader cache dir (docs/cache.md)
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Instance> instance, Instance::create(mode));
  KILN_ASSIGN_OR_RETURN(std::vector<PhysicalDevice> devices, query_all(*instance));
  const std::vector<DeviceInfo> infos = infos_of(devices);
  KILN_ASSIGN_OR_RETURN(const uint32_t index, select_device(infos, options.selector));

  auto core = std::make_shared<DeviceCore>();
  core->instance = std::move(instance);
  core->disk = std::move(disk);
  core->prewarm = options.prewarm;
  core->physical = devices[index];
  // Before the VkDevice exists: a feature the limits take away is not enabled either.
  KILN_RETURN_IF_ERROR(apply_device_limits(options.limits, core->physical.info));
  if (core->physical.queue_family == kNoQueueFamily) {
    return unavailable("Vulkan device '" + core->physical.info.name + "' has no compute queue");
  }
  KILN_RETURN_IF_ERROR(create_logical_device(*core));
  return VulkanDeviceImpl::create_from_core(std::move(core));
}

Expected<std::shared_ptr<VulkanDevice>> VulkanDevice::default_device() {
  // Created once (thread-safe static); a failure is cached and returned to every caller.
  static const Expected<std::shared_ptr<VulkanDevice>> device = create(DeviceOptions{});
  return device;
}

// --- VulkanDeviceImpl: lifetime ---------------------------------------------------------------

Expected<std::shared_ptr<VulkanDevice>> VulkanDeviceImpl::create_from_core(
    std::shared_ptr<DeviceCore> core) {
  std::shared_ptr<VulkanDeviceImpl> device(new VulkanDeviceImpl(std::move(core)));
  KILN_RETURN_IF_ERROR(device->init());
  return std::shared_ptr<VulkanDevice>(std::move(device));
}

Status VulkanDeviceImpl::init() {
  const PhysicalDevice& pd = core_->physical;
  vkGetDeviceQueue(device(), pd.queue_family, core_->queue_index, &queue_);

  KILN_RETURN_IF_ERROR(create_pipeline_cache());  // seeded from the persistent cache
  start_prewarm();

  // Sub-allocations may be bound as storage buffers or as texel buffers.
  const VkDeviceSize alignment = std::max<VkDeviceSize>(
      {pd.info.min_storage_buffer_offset_alignment, pd.info.min_texel_buffer_offset_alignment, 16});
  AllocatorConfig buffers;
  buffers.name = "device";
  buffers.usage = kBufferUsage;
  buffers.alignment = alignment;
  buffers.retain_bytes = 256ull << 20;  // a model's working set stays mapped between calls
  if (pd.info.unified_memory) {
    buffers.required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    buffers.map = true;
  } else {
    buffers.required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  }
  KILN_ASSIGN_OR_RETURN(allocator_, Allocator::create(core_, buffers));

  if (!pd.info.unified_memory) {
    AllocatorConfig staging;
    staging.name = "staging";
    staging.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    staging.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    staging.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;  // fast host reads on download
    staging.block_size = 16ull << 20;
    staging.retain_bytes = 16ull << 20;  // one staging block stays for the next transfer
    staging.alignment = 16;
    staging.map = true;
    KILN_ASSIGN_OR_RETURN(staging_, Allocator::create(core_, staging));
    AllocatorConfig params;  // sizes and workgroup counts of recordings, rewritten per replay
    params.name = "host-writable";
    params.usage = kBufferUsage;
    params.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    params.preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    params.block_size = 1ull << 20;
    params.retain_bytes = 1ull << 20;
    params.alignment = alignment;
    params.map = true;
    KILN_ASSIGN_OR_RETURN(params_, Allocator::create(core_, params));
  } else {
    params_ = allocator_;
  }
  return Status::ok_status();
}

VulkanDeviceImpl::~VulkanDeviceImpl() {
  if (prewarm_.joinable()) prewarm_.join();
  if (device() == VK_NULL_HANDLE) return;
  save_pipeline_set();
  // Every submission was waited for before its call returned. An adopted device is not
  // waited on: the application may be using it (vkDeviceWaitIdle needs every queue to itself).
  if (core_->owns_device) {
    std::lock_guard<std::mutex> lock(queue_mu_);  // the queue is externally synchronised
    vkDeviceWaitIdle(device());
  }
  for (auto& [key, pipeline] : pipelines_) destroy_pipeline(*pipeline);
  pipelines_.clear();
  for (auto& slot : slots_) destroy_slot(*slot);
  slots_.clear();
  idle_slots_.clear();
  if (pipeline_cache_ != VK_NULL_HANDLE) {
    save_pipeline_cache();
    vkDestroyPipelineCache(device(), pipeline_cache_, nullptr);
  }
  // Blocks still used by live Buffers stay: those buffers keep the allocator and core alive.
  staging_.reset();
  params_.reset();
  allocator_.reset();
}

void VulkanDeviceImpl::reset_peak() {
  allocator_->reset_peak();
}

DeviceStats VulkanDeviceImpl::stats() const {
  DeviceStats stats;
  stats.pipelines_created = stats_.pipelines_created.load();
  stats.pipeline_cache_hits = stats_.pipeline_cache_hits.load();
  stats.dispatches = stats_.dispatches.load();
  stats.submissions = stats_.submissions.load();
  stats.replays = stats_.replays.load();
  stats.command_buffers_recorded = stats_.command_buffers_recorded.load();
  stats.staged_uploads = stats_.staged_uploads.load();
  stats.staged_downloads = stats_.staged_downloads.load();
  stats.bytes_allocated = allocator_->bytes_allocated();
  stats.blocks_allocated = allocator_->blocks_allocated();
  stats.bytes_retained = allocator_->bytes_retained();
  const AllocatorCounters device = allocator_->counters();
  stats.buffer_allocations = device.allocations;
  stats.memory_allocations = device.memory_allocations;
  stats.peak_bytes = device.peak_bytes;
  if (staging_) {
    const AllocatorCounters staging = staging_->counters();
    stats.buffer_allocations += staging.allocations;
    stats.memory_allocations += staging.memory_allocations;
    const AllocatorCounters params = params_->counters();
    stats.buffer_allocations += params.allocations;
    stats.memory_allocations += params.memory_allocations;
  }
  stats.validation_errors = core_->instance->validation_errors();
  return stats;
}

std::vector<std::string> VulkanDeviceImpl::validation_messages() const {
  return core_->instance->validation_messages();
}

// --- memory and transfers ---------------------------------------------------------------------

Expected<const DeviceBuffer*> VulkanDeviceImpl::own_buffer(const BufferRef& buffer,
                                                           const char* what) const {
  const auto* device_buffer = dynamic_cast<const DeviceBuffer*>(buffer.get());
  if (device_buffer == nullptr || (device_buffer->allocator() != allocator_.get() &&
                                   device_buffer->allocator() != params_.get())) {
    return invalid_argument(std::string(what) + " is " +
                            (buffer == nullptr ? "null" : "not a buffer of this device"));
  }
  return device_buffer;
}

void VulkanDeviceImpl::SlotReturn::operator()(CommandSlot* slot) const {
  std::lock_guard<std::mutex> lock(device->slots_mu_);
  device->idle_slots_.push_back(slot);
}

Expected<VulkanDeviceImpl::SlotLease> VulkanDeviceImpl::acquire_slot() {
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    if (!idle_slots_.empty()) {
      CommandSlot* slot = idle_slots_.back();
      idle_slots_.pop_back();
      return SlotLease(slot, SlotReturn{this});
    }
  }
  // Every slot is in use by another thread: a new one (kept for later submissions).
  auto slot = std::make_unique<CommandSlot>();
  if (Status st = init_slot(*slot); !st.ok()) {
    destroy_slot(*slot);
    return st;
  }
  std::lock_guard<std::mutex> lock(slots_mu_);
  slots_.push_back(std::move(slot));
  return SlotLease(slots_.back().get(), SlotReturn{this});
}

Status VulkanDeviceImpl::init_slot(CommandSlot& slot) const {
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = core_->physical.queue_family;
  KILN_VK_RETURN_IF_ERROR(vkCreateCommandPool(device(), &pool, nullptr, &slot.command_pool));
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = slot.command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  KILN_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(device(), &alloc, &slot.cmd));
  VkFenceCreateInfo fence{};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  KILN_VK_RETURN_IF_ERROR(vkCreateFence(device(), &fence, nullptr, &slot.fence));
  return Status::ok_status();
}

void VulkanDeviceImpl::destroy_slot(CommandSlot& slot) const {
  if (slot.query_pool != VK_NULL_HANDLE) vkDestroyQueryPool(device(), slot.query_pool, nullptr);
  if (slot.descriptor_pool != VK_NULL_HANDLE)
    vkDestroyDescriptorPool(device(), slot.descriptor_pool, nullptr);
  if (slot.fence != VK_NULL_HANDLE) vkDestroyFence(device(), slot.fence, nullptr);
  if (slot.command_pool != VK_NULL_HANDLE)  // frees its command buffer
    vkDestroyCommandPool(device(), slot.command_pool, nullptr);
  slot = CommandSlot{};
}

Status VulkanDeviceImpl::begin_commands(CommandSlot& slot) {
  KILN_VK_RETURN_IF_ERROR(vkResetCommandBuffer(slot.cmd, 0));
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  KILN_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(slot.cmd, &begin));
  ++stats_.command_buffers_recorded;
  return Status::ok_status();
}

Status VulkanDeviceImpl::submit_and_wait(CommandSlot& slot) {
  KILN_VK_RETURN_IF_ERROR(vkEndCommandBuffer(slot.cmd));
  const VkCommandBuffer cmds[] = {slot.cmd};
  return submit_and_wait(slot, cmds);
}

Status VulkanDeviceImpl::submit_and_wait(CommandSlot& slot, std::span<const VkCommandBuffer> cmds) {
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = static_cast<uint32_t>(cmds.size());
  submit.pCommandBuffers = cmds.data();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    const vulkan::QueueLock& external = core_->queue_lock;
    if (external.lock != nullptr) external.lock(external.user);
    const VkResult result = vkQueueSubmit(queue_, 1, &submit, slot.fence);
    if (external.unlock != nullptr) external.unlock(external.user);
    KILN_VK_RETURN_IF_ERROR(result);
  }
  ++stats_.submissions;
  KILN_VK_RETURN_IF_ERROR(vkWaitForFences(device(), 1, &slot.fence, VK_TRUE, UINT64_MAX));
  KILN_VK_RETURN_IF_ERROR(vkResetFences(device(), 1, &slot.fence));
  return Status::ok_status();
}

void cmd_memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                        VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
                        VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

Status VulkanDeviceImpl::upload(const BufferRef& dst, const void* src, size_t bytes) {
  const CopyIn c{.dst = dst, .host = src, .bytes = bytes};
  return submit_copies({&c, 1}, "upload");
}

Status VulkanDeviceImpl::download(const BufferRef& src, void* dst, size_t bytes, size_t offset) {
  KILN_ASSIGN_OR_RETURN(const DeviceBuffer* buffer, own_buffer(src, "download source"));
  if (offset > buffer->size() || bytes > buffer->size() - offset) {
    return invalid_argument("download of " + std::to_string(bytes) + " bytes at " +
                            std::to_string(offset) + " from a buffer of " +
                            std::to_string(buffer->size()));
  }
  if (bytes == 0) return Status::ok_status();
  if (dst == nullptr) return invalid_argument("download destination is null");
  if (const auto* mapped = static_cast<const uint8_t*>(buffer->mapped())) {
    std::memcpy(dst, mapped + offset, bytes);
    return Status::ok_status();
  }
  KILN_ASSIGN_OR_RETURN(const Allocation range, staging_->allocate(bytes));
  const StagingRanges staging{staging_.get(), {range}};
  ++stats_.staged_downloads;

  KILN_ASSIGN_OR_RETURN(SlotLease slot, acquire_slot());
  KILN_RETURN_IF_ERROR(begin_commands(*slot));
  cmd_memory_barrier(slot->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  const VkBufferCopy region{buffer->offset() + offset, range.offset, bytes};
  vkCmdCopyBuffer(slot->cmd, buffer->vk_buffer(), range.block->buffer, 1, &region);
  cmd_memory_barrier(slot->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  KILN_RETURN_IF_ERROR(submit_and_wait(*slot));
  std::memcpy(dst, range.block->mapped + range.offset, bytes);
  return Status::ok_status();
}

}  // namespace kiln::vk
