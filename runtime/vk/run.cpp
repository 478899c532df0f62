// VulkanDevice::run: descriptor sets, command recording with barriers and timestamps, submission.
#include <algorithm>
#include <string>

#include "vk/vk_check.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

bool has_zero_groups(const Dispatch& d) {
  return d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0;
}

std::string dispatch_name(const Dispatch& d, size_t index) {
  std::string name = "dispatch " + std::to_string(index);
  if (d.pipeline != nullptr && !d.pipeline->label.empty()) name += " ('" + d.pipeline->label + "')";
  return name;
}

}  // namespace

Status VulkanDeviceImpl::check_dispatch(const Dispatch& d, size_t index) const {
  const DeviceInfo& info = core_->physical.info;
  const std::string name = dispatch_name(d, index);
  if (d.pipeline == nullptr) return invalid_argument(name + " has no pipeline");
  if (d.pipeline->device != device()) {
    return invalid_argument(name + " uses a pipeline of another device");
  }
  if (!d.windows.empty() && d.windows.size() != d.bindings.size())
    return invalid_argument(name + ": windows must be empty or one per binding");
  if (d.bindings.size() != d.pipeline->num_bindings) {
    return invalid_argument(name + " binds " + std::to_string(d.bindings.size()) +
                            " buffers; the pipeline has " +
                            std::to_string(d.pipeline->num_bindings) + " bindings");
  }
  if (d.push_constants.size() != d.pipeline->push_constant_bytes) {
    return invalid_argument(name + " passes " + std::to_string(d.push_constants.size()) +
                            " bytes of push constants; the pipeline takes " +
                            std::to_string(d.pipeline->push_constant_bytes));
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (d.groups[axis] > info.max_workgroup_count[axis]) {
      return invalid_argument(name + ": " + std::to_string(d.groups[axis]) +
                              " workgroups on axis " + std::to_string(axis) +
                              " exceed the device limit of " +
                              std::to_string(info.max_workgroup_count[axis]));
    }
  }
  for (size_t b = 0; b < d.bindings.size(); ++b) {
    const std::string what = name + " binding " + std::to_string(b);
    KILN_ASSIGN_OR_RETURN(const DeviceBuffer* buffer, own_buffer(d.bindings[b], what.c_str()));
    const BufferWindow w = b < d.windows.size() ? d.windows[b] : BufferWindow{};
    const uint64_t align = d.pipeline->texel[b]     ? info.min_texel_buffer_offset_alignment
                           : d.pipeline->uniform[b] ? info.min_uniform_buffer_offset_alignment
                                                    : info.min_storage_buffer_offset_alignment;
    if (w.offset % std::max<uint64_t>(align, 1) != 0 || w.offset > buffer->range() ||
        (w.range != 0 && w.range > buffer->range() - w.offset)) {
      return invalid_argument(what + ": window at " + std::to_string(w.offset) + " of " +
                              std::to_string(w.range) + " bytes does not fit the " +
                              std::to_string(buffer->size()) + "-byte buffer (or is misaligned)");
    }
    const uint64_t range = w.range != 0 ? w.range : buffer->range() - w.offset;
    if (d.pipeline->texel[b]) {
      const uint64_t texel = d.pipeline->r32f[b] ? 4 : 16;
      if (range % texel != 0 || range / texel > info.max_texel_buffer_elements)
        return invalid_argument(what + ": a texel buffer of " + std::to_string(range) +
                                " bytes (needs a multiple of " + std::to_string(texel) +
                                ", at most " + std::to_string(info.max_texel_buffer_elements) +
                                " texels)");
      continue;
    }
    if (d.pipeline->uniform[b]) {
      if (range > info.max_uniform_buffer_range)
        return invalid_argument(what + ": " + std::to_string(range) +
                                " bytes exceed maxUniformBufferRange (" +
                                std::to_string(info.max_uniform_buffer_range) + ")");
      continue;
    }
    if (range > info.max_storage_buffer_range) {
      return invalid_argument(what + ": " + std::to_string(range) +
                              " bytes exceed maxStorageBufferRange (" +
                              std::to_string(info.max_storage_buffer_range) + ")");
    }
  }
  return Status::ok_status();
}

Status create_descriptor_pool(VkDevice device, uint32_t sets, uint32_t descriptors,
                              VkDescriptorPool* pool) {
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors},
                                        {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, descriptors},
                                        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptors}};
  VkDescriptorPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  info.maxSets = sets;
  info.poolSizeCount = 3;
  info.pPoolSizes = sizes;
  KILN_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(device, &info, nullptr, pool));
  return Status::ok_status();
}

Status VulkanDeviceImpl::prepare_descriptor_pool(CommandSlot& slot, uint32_t sets,
                                                 uint32_t descriptors) {
  if (sets <= slot.pool_sets && descriptors <= slot.pool_descriptors) {
    KILN_VK_RETURN_IF_ERROR(vkResetDescriptorPool(device(), slot.descriptor_pool, 0));
    return Status::ok_status();
  }
  if (slot.descriptor_pool != VK_NULL_HANDLE) {
    vkDestroyDescriptorPool(device(), slot.descriptor_pool, nullptr);
    slot.descriptor_pool = VK_NULL_HANDLE;
    slot.pool_sets = slot.pool_descriptors = 0;
  }
  // Grow geometrically so that a sequence of growing batches recreates the pool rarely.
  const uint32_t new_sets = std::max({sets, 2 * slot.pool_sets, 64u});
  const uint32_t new_descriptors = std::max({descriptors, 2 * slot.pool_descriptors, 256u});
  KILN_RETURN_IF_ERROR(
      create_descriptor_pool(device(), new_sets, new_descriptors, &slot.descriptor_pool));
  slot.pool_sets = new_sets;
  slot.pool_descriptors = new_descriptors;
  return Status::ok_status();
}

Status VulkanDeviceImpl::prepare_query_pool(CommandSlot& slot, uint32_t queries) {
  if (queries <= slot.query_capacity) return Status::ok_status();
  if (slot.query_pool != VK_NULL_HANDLE) {
    vkDestroyQueryPool(device(), slot.query_pool, nullptr);
    slot.query_pool = VK_NULL_HANDLE;
    slot.query_capacity = 0;
  }
  const uint32_t capacity = std::max(queries, 128u);
  VkQueryPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = capacity;
  KILN_VK_RETURN_IF_ERROR(vkCreateQueryPool(device(), &info, nullptr, &slot.query_pool));
  slot.query_capacity = capacity;
  return Status::ok_status();
}

Status VulkanDeviceImpl::write_descriptor_sets(std::span<const Dispatch> dispatches,
                                               const std::vector<size_t>& active,
                                               VkDescriptorPool pool,
                                               std::vector<VkDescriptorSet>& sets,
                                               std::vector<VkBufferView>& views) {
  sets.assign(active.size(), VK_NULL_HANDLE);
  std::vector<VkDescriptorSetLayout> layouts;
  size_t descriptors = 0;
  for (size_t i : active) {
    if (dispatches[i].pipeline->num_bindings > 0) {
      layouts.push_back(dispatches[i].pipeline->set_layout);
      descriptors += dispatches[i].pipeline->num_bindings;
    }
  }
  if (layouts.empty()) return Status::ok_status();
  std::vector<VkDescriptorSet> allocated(layouts.size());
  VkDescriptorSetAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  alloc.descriptorPool = pool;
  alloc.descriptorSetCount = static_cast<uint32_t>(layouts.size());
  alloc.pSetLayouts = layouts.data();
  KILN_VK_RETURN_IF_ERROR(vkAllocateDescriptorSets(device(), &alloc, allocated.data()));

  std::vector<VkDescriptorBufferInfo> buffer_infos;
  buffer_infos.reserve(descriptors);  // stable addresses for the writes below
  views.reserve(views.size() + descriptors);
  std::vector<VkWriteDescriptorSet> writes;
  size_t next_set = 0;
  for (size_t k = 0; k < active.size(); ++k) {
    const Dispatch& d = dispatches[active[k]];
    if (d.pipeline->num_bindings == 0) continue;
    sets[k] = allocated[next_set++];
    for (uint32_t b = 0; b < d.pipeline->num_bindings; ++b) {
      const auto* buffer = static_cast<const DeviceBuffer*>(d.bindings[b].get());
      const BufferWindow w = b < d.windows.size() ? d.windows[b] : BufferWindow{};
      const VkDeviceSize offset = buffer->offset() + w.offset;
      const VkDeviceSize range = w.range != 0 ? w.range : buffer->range() - w.offset;
      VkWriteDescriptorSet write{};
      write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      write.dstSet = sets[k];
      write.dstBinding = b;
      write.descriptorCount = 1;
      if (d.pipeline->texel[b]) {
        VkBufferViewCreateInfo view{};
        view.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
        view.buffer = buffer->vk_buffer();
        view.format = d.pipeline->r32f[b] ? VK_FORMAT_R32_SFLOAT : VK_FORMAT_R32G32B32A32_SFLOAT;
        view.offset = offset;
        view.range = range;
        VkBufferView handle = VK_NULL_HANDLE;
        KILN_VK_RETURN_IF_ERROR(vkCreateBufferView(device(), &view, nullptr, &handle));
        views.push_back(handle);
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
        write.pTexelBufferView = &views.back();
      } else {
        buffer_infos.push_back({buffer->vk_buffer(), offset, range});
        write.descriptorType = d.pipeline->uniform[b] ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                      : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &buffer_infos.back();
      }
      writes.push_back(write);
    }
  }
  vkUpdateDescriptorSets(device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return Status::ok_status();
}

void VulkanDeviceImpl::record_commands(VkCommandBuffer cmd, std::span<const Dispatch> dispatches,
                                       const std::vector<size_t>& active,
                                       const std::vector<VkDescriptorSet>& sets,
                                       VkQueryPool queries, const DeviceBuffer* indirect) const {
  if (queries != VK_NULL_HANDLE)
    vkCmdResetQueryPool(cmd, queries, 0, static_cast<uint32_t>(2 * active.size()));
  for (size_t k = 0; k < active.size(); ++k) {
    const Dispatch& d = dispatches[active[k]];
    if (k > 0) {  // the next dispatch may read (or overwrite) what the previous one wrote
      cmd_memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    const auto query = static_cast<uint32_t>(2 * k);
    if (queries != VK_NULL_HANDLE)
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries, query);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->pipeline);
    if (sets[k] != VK_NULL_HANDLE) {
      vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->layout, 0, 1,
                              &sets[k], 0, nullptr);
    }
    if (!d.push_constants.empty()) {
      vkCmdPushConstants(cmd, d.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         static_cast<uint32_t>(d.push_constants.size()), d.push_constants.data());
    }
    if (d.indirect_offset >= 0 && indirect != nullptr) {
      vkCmdDispatchIndirect(cmd, indirect->vk_buffer(),
                            indirect->offset() + static_cast<VkDeviceSize>(d.indirect_offset));
    } else {
      vkCmdDispatch(cmd, d.groups[0], d.groups[1], d.groups[2]);
    }
    if (queries != VK_NULL_HANDLE)
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries, query + 1);
  }
  // Results are read next by the host (mapped memory) or by a staging copy.
  cmd_memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
}

Status VulkanDeviceImpl::read_timings(VkQueryPool pool, std::span<const Dispatch> dispatches,
                                      const std::vector<size_t>& active,
                                      std::vector<DispatchTiming>& timings) const {
  const auto queries = static_cast<uint32_t>(2 * active.size());
  std::vector<uint64_t> ticks(queries);
  if (queries > 0) {
    KILN_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(
        device(), pool, 0, queries, ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  }
  const uint32_t bits = core_->physical.timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  const double ns_per_tick = core_->physical.info.timestamp_period_ns;
  timings.assign(dispatches.size(), DispatchTiming{});
  for (size_t i = 0; i < dispatches.size(); ++i) {
    if (dispatches[i].pipeline != nullptr) timings[i].label = dispatches[i].pipeline->label;
  }
  for (size_t k = 0; k < active.size(); ++k) {
    const uint64_t elapsed = (ticks[2 * k + 1] - ticks[2 * k]) & mask;  // survives wrap-around
    timings[active[k]].gpu_ms = static_cast<double>(elapsed) * ns_per_tick * 1e-6;
  }
  return Status::ok_status();
}

Status VulkanDeviceImpl::run(std::span<const Dispatch> dispatches,
                             std::vector<DispatchTiming>* timings) {
  return run_dispatches(dispatches, timings, false);
}

Status VulkanDeviceImpl::run_dispatches(std::span<const Dispatch> dispatches,
                                        std::vector<DispatchTiming>* timings, bool keep_empty) {
  if (timings != nullptr) timings->clear();
  // Buffer views of texel bindings live until this (synchronous) run returns.
  struct ViewHolder {
    VkDevice device;
    std::vector<VkBufferView> views;
    ~ViewHolder() {
      for (VkBufferView v : views) vkDestroyBufferView(device, v, nullptr);
    }
  } view_holder{device(), {}};

  // Dispatches with an empty grid record nothing and are not counted (unless kept to warm).
  std::vector<size_t> active;
  uint32_t sets = 0;
  uint32_t descriptors = 0;
  for (size_t i = 0; i < dispatches.size(); ++i) {
    if (dispatches[i].indirect_offset >= 0)
      return invalid_argument(dispatch_name(dispatches[i], i) +
                              ": indirect dispatches exist only in recordings");
    if (has_zero_groups(dispatches[i]) && !keep_empty) continue;
    KILN_RETURN_IF_ERROR(check_dispatch(dispatches[i], i));
    active.push_back(i);
    if (dispatches[i].pipeline->num_bindings > 0) {
      ++sets;
      descriptors += dispatches[i].pipeline->num_bindings;
    }
  }
  const bool timed = timings != nullptr && core_->physical.info.timestamp_period_ns > 0;
  if (active.empty()) {
    if (timed) {
      for (const Dispatch& d : dispatches) {
        timings->push_back({d.pipeline != nullptr ? d.pipeline->label : std::string(), 0.0});
      }
    }
    return Status::ok_status();
  }

  // One descriptor set per dispatch that has bindings, all allocated and written up front,
  // from the descriptor pool of a command slot this call has to itself.
  KILN_ASSIGN_OR_RETURN(SlotLease slot, acquire_slot());
  std::vector<VkDescriptorSet> descriptor_sets;
  if (sets > 0) KILN_RETURN_IF_ERROR(prepare_descriptor_pool(*slot, sets, descriptors));
  KILN_RETURN_IF_ERROR(write_descriptor_sets(dispatches, active, slot->descriptor_pool,
                                             descriptor_sets, view_holder.views));
  if (timed)
    KILN_RETURN_IF_ERROR(prepare_query_pool(*slot, static_cast<uint32_t>(2 * active.size())));

  KILN_RETURN_IF_ERROR(begin_commands(*slot));
  record_commands(slot->cmd, dispatches, active, descriptor_sets,
                  timed ? slot->query_pool : VK_NULL_HANDLE, nullptr);
  KILN_RETURN_IF_ERROR(submit_and_wait(*slot));
  if (!keep_empty) stats_.dispatches += active.size();
  if (timed) KILN_RETURN_IF_ERROR(read_timings(slot->query_pool, dispatches, active, *timings));
  return Status::ok_status();
}

}  // namespace kiln::vk
