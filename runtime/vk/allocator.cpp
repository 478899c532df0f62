#include "vk/allocator.h"

#include <algorithm>
#include <string>

#include "core/host_memory.h"
#include "vk/vk_check.h"

namespace kiln::vk {
namespace {

VkDeviceSize round_up(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// First fit inside one block: takes `size` bytes from the lowest free range that holds them.
bool take_range(MemoryBlock& block, VkDeviceSize size, VkDeviceSize* out_offset) {
  for (auto it = block.free_ranges.begin(); it != block.free_ranges.end(); ++it) {
    if (it->second < size) continue;
    const VkDeviceSize offset = it->first;
    const VkDeviceSize rest = it->second - size;
    block.free_ranges.erase(it);
    if (rest > 0) block.free_ranges.emplace(offset + size, rest);
    block.used += size;
    *out_offset = offset;
    return true;
  }
  return false;
}

/// Puts [offset, offset + size) back and merges it with the free neighbours on both sides.
void give_back_range(MemoryBlock& block, VkDeviceSize offset, VkDeviceSize size) {
  auto next = block.free_ranges.lower_bound(offset);
  if (next != block.free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      block.free_ranges.erase(prev);
    }
  }
  if (next != block.free_ranges.end() && offset + size == next->first) {
    size += next->second;
    block.free_ranges.erase(next);
  }
  block.free_ranges.emplace(offset, size);
}

}  // namespace

Expected<std::shared_ptr<Allocator>> Allocator::create(std::shared_ptr<DeviceCore> core,
                                                       const AllocatorConfig& config) {
  std::shared_ptr<Allocator> allocator(new Allocator(std::move(core), config));
  KILN_RETURN_IF_ERROR(allocator->choose_memory_type());
  return allocator;
}

Allocator::~Allocator() {
  // Every Buffer holds a reference to its allocator, so no block is in use any more; blocks left
  // here can only come from a bug in the accounting.
  for (auto& block : blocks_) destroy_block(*block);
}

Status Allocator::choose_memory_type() {
  // A small probe buffer with the blocks' usage tells which memory types such buffers accept.
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = config_.alignment;
  info.usage = config_.usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer probe = VK_NULL_HANDLE;
  KILN_VK_RETURN_IF_ERROR(vkCreateBuffer(core_->device, &info, nullptr, &probe));
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(core_->device, probe, &requirements);
  vkDestroyBuffer(core_->device, probe, nullptr);

  const VkPhysicalDeviceMemoryProperties& memory = core_->physical.memory;
  const int32_t type =
      find_memory_type(memory, requirements.memoryTypeBits, config_.required, config_.preferred);
  if (type < 0) {
    return unavailable(std::string("no Vulkan memory type suits the ") + config_.name +
                       " allocator on " + core_->physical.info.name);
  }
  memory_type_ = static_cast<uint32_t>(type);
  heap_size_ = memory.memoryHeaps[memory.memoryTypes[memory_type_].heapIndex].size;
  host_visible_ = config_.map && (memory.memoryTypes[memory_type_].propertyFlags &
                                  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  VkDeviceSize limit = heap_size_;
  if (core_->physical.max_memory_allocation_size > 0) {
    limit = std::min<VkDeviceSize>(limit, core_->physical.max_memory_allocation_size);
  }
  config_.block_size = round_up(std::min(config_.block_size, limit / 2), config_.alignment);
  config_.block_size = std::max(config_.block_size, config_.alignment);
  return Status::ok_status();
}

Expected<Allocation> Allocator::allocate(VkDeviceSize bytes) {
  if (bytes > heap_size_) {  // also keeps the rounding below from overflowing
    return resource_exhausted("cannot allocate " + std::to_string(bytes) + " bytes of " +
                              config_.name + " memory: the memory heap has " +
                              std::to_string(heap_size_) + " bytes");
  }
  const VkDeviceSize size = round_up(std::max<VkDeviceSize>(bytes, 1), config_.alignment);
  std::lock_guard<std::mutex> lock(mu_);
  Allocation allocation;
  allocation.size = size;
  for (auto& block : blocks_) {
    if (take_range(*block, size, &allocation.offset)) {
      allocation.block = block.get();
      note_allocation(size);
      return allocation;
    }
  }
  KILN_ASSIGN_OR_RETURN(MemoryBlock * block, create_block(size));
  const bool taken = take_range(*block, size, &allocation.offset);
  if (!taken) return internal_error("a new memory block could not hold its first allocation");
  allocation.block = block;
  note_allocation(size);
  return allocation;
}

void Allocator::free(const Allocation& allocation) {
  if (allocation.block == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  MemoryBlock& block = *allocation.block;
  give_back_range(block, allocation.offset, allocation.size);
  block.used -= allocation.size;
  bytes_allocated_ -= allocation.size;
  if (block.used != 0) return;
  uint64_t retained = 0;
  for (const auto& b : blocks_)
    if (b->used == 0 && b.get() != &block) retained += b->size;
  if (retained + block.size <= config_.retain_bytes) return;  // keep it for the next request
  destroy_block(block);
  std::erase_if(blocks_, [&](const std::unique_ptr<MemoryBlock>& b) { return b.get() == &block; });
}

void Allocator::note_allocation(VkDeviceSize size) {
  bytes_allocated_ += size;
  peak_bytes_ = std::max(peak_bytes_, bytes_allocated_);
  ++allocations_;
}

AllocatorCounters Allocator::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {allocations_, memory_allocations_, peak_bytes_};
}

void Allocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_bytes_ = bytes_allocated_;
}

uint64_t Allocator::bytes_allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_allocated_;
}

uint64_t Allocator::blocks_allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& b : blocks_) n += b->used != 0;
  return n;
}

uint64_t Allocator::bytes_retained() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t bytes = 0;
  for (const auto& b : blocks_)
    if (b->used == 0) bytes += b->size;
  return bytes;
}

Expected<MemoryBlock*> Allocator::create_block(VkDeviceSize size) {
  // A default-size block, or one of exactly `size` when that is larger or the default one does
  // not fit in what memory is left.
  std::vector<VkDeviceSize> attempts = {std::max(size, config_.block_size)};
  if (attempts[0] != size) attempts.push_back(size);
  Status status;
  for (VkDeviceSize block_size : attempts) {
    auto block = std::make_unique<MemoryBlock>();
    status = try_create_block(block_size, *block);
    if (status.ok()) {
      block->free_ranges.emplace(0, block->size);
      blocks_.push_back(std::move(block));
      return blocks_.back().get();
    }
    destroy_block(*block);
    if (status.code() != StatusCode::kResourceExhausted) break;
  }
  return status.with_context(std::string("allocating ") + std::to_string(size) + " bytes of " +
                             config_.name + " memory");
}

Status Allocator::try_create_block(VkDeviceSize size, MemoryBlock& block) {
  const VkDeviceSize max_allocation = core_->physical.max_memory_allocation_size;
  if (size > heap_size_ || (max_allocation > 0 && size > max_allocation)) {
    return resource_exhausted("request exceeds the memory heap (" + std::to_string(heap_size_) +
                              " bytes) or the device's maximum allocation (" +
                              std::to_string(max_allocation) + " bytes)");
  }
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = config_.usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  KILN_VK_RETURN_IF_ERROR(vkCreateBuffer(core_->device, &info, nullptr, &block.buffer));
  block.size = size;

  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(core_->device, block.buffer, &requirements);
  if (!(requirements.memoryTypeBits & (1u << memory_type_))) {
    return internal_error("a block buffer does not accept the allocator's memory type");
  }
  if (requirements.size > heap_size_) {
    return resource_exhausted("block of " + std::to_string(requirements.size) +
                              " bytes exceeds the memory heap");
  }
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = requirements.size;
  alloc.memoryTypeIndex = memory_type_;
  KILN_VK_RETURN_IF_ERROR(vkAllocateMemory(core_->device, &alloc, nullptr, &block.memory));
  ++memory_allocations_;
  KILN_VK_RETURN_IF_ERROR(vkBindBufferMemory(core_->device, block.buffer, block.memory, 0));
  if (host_visible_) {  // mapped once, for the block's lifetime
    void* mapped = nullptr;
    KILN_VK_RETURN_IF_ERROR(vkMapMemory(core_->device, block.memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    block.mapped = static_cast<uint8_t*>(mapped);
    // On a CPU driver device memory is the process's own memory: huge pages spare the first
    // touch of a fresh block (the first replay's arena and outputs) one fault per 4 KiB.
    if (core_->physical.info.type == "cpu") host_memory::advise_huge(mapped, size);
  }
  return Status::ok_status();
}

void Allocator::destroy_block(MemoryBlock& block) {
  if (block.mapped != nullptr) vkUnmapMemory(core_->device, block.memory);
  if (block.buffer != VK_NULL_HANDLE) vkDestroyBuffer(core_->device, block.buffer, nullptr);
  if (block.memory != VK_NULL_HANDLE) vkFreeMemory(core_->device, block.memory, nullptr);
  block.mapped = nullptr;
  block.buffer = VK_NULL_HANDLE;
  block.memory = VK_NULL_HANDLE;
}

}  // namespace kiln::vk
