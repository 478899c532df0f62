/// \file allocator.h
/// A sub-allocator over large VkDeviceMemory blocks. Each block has one VkBuffer spanning it;
/// an allocation is a (block, offset, size) range of that buffer, aligned to the device's
/// minStorageBufferOffsetAlignment. Free ranges are kept per block in offset order (first fit),
/// neighbours coalesce on free, and an empty block is kept for reuse while the empty blocks
/// total at most AllocatorConfig::retain_bytes, else released.
///
/// Thread safety: allocate/free may be called from any thread (Buffers die anywhere).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/status.h"
#include "vk/device_core.h"

namespace kiln::vk {

struct AllocatorConfig {
  const char* name = "device";            // for error messages
  VkMemoryPropertyFlags required = 0;     // the memory type must have these
  VkMemoryPropertyFlags preferred = 0;    // and preferably these
  VkBufferUsageFlags usage = 0;           // of each block's VkBuffer
  VkDeviceSize block_size = 64ull << 20;  // default block; larger requests get their own
  VkDeviceSize alignment = 4;             // offset and size granularity (power of two)
  bool map = false;                       // persistently map blocks (host-visible types)
  /// Empty blocks are kept for reuse up to this many bytes in all; beyond it they are released.
  /// Re-creating a block costs a fresh mapping whose pages fault in on first touch.
  VkDeviceSize retain_bytes = 0;
};

/// Lifetime counters of one allocator.
struct AllocatorCounters {
  uint64_t allocations = 0;         // ranges handed out (allocate() calls that succeeded)
  uint64_t memory_allocations = 0;  // vkAllocateMemory calls (new blocks)
  uint64_t peak_bytes = 0;          // most bytes allocated at once since creation or reset_peak()
};

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  uint8_t* mapped = nullptr;  // persistently mapped when host-visible
  VkDeviceSize used = 0;
  std::map<VkDeviceSize, VkDeviceSize> free_ranges;  // offset -> size
};

struct Allocation {
  MemoryBlock* block = nullptr;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;  // reserved bytes (a multiple of the alignment, never 0)
};

class Allocator {
 public:
  /// Picks the memory type from `config`; unavailable when the device has none that fits.
  static Expected<std::shared_ptr<Allocator>> create(std::shared_ptr<DeviceCore> core,
                                                     const AllocatorConfig& config);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  /// Reserves at least max(bytes, 1) bytes. resource_exhausted when memory runs out.
  Expected<Allocation> allocate(VkDeviceSize bytes);
  /// Returns the range to its block; an emptied block is retained or released (see config).
  void free(const Allocation& allocation);

  /// Blocks are host-visible and mapped (config.map and a host-visible memory type).
  bool host_visible() const { return host_visible_; }
  VkDeviceSize alignment() const { return config_.alignment; }
  uint64_t bytes_allocated() const;
  /// Blocks holding at least one allocation.
  uint64_t blocks_allocated() const;
  /// Empty blocks kept for reuse, in bytes.
  uint64_t bytes_retained() const;
  AllocatorCounters counters() const;
  /// Restarts the peak at the bytes allocated now.
  void reset_peak();

 private:
  Allocator(std::shared_ptr<DeviceCore> core, const AllocatorConfig& config)
      : core_(std::move(core)), config_(config) {}
  Status choose_memory_type();
  Expected<MemoryBlock*> create_block(VkDeviceSize size);
  Status try_create_block(VkDeviceSize size, MemoryBlock& block);
  void destroy_block(MemoryBlock& block);
  void note_allocation(VkDeviceSize size);  // with mu_ held

  std::shared_ptr<DeviceCore> core_;
  AllocatorConfig config_;
  uint32_t memory_type_ = 0;
  VkDeviceSize heap_size_ = 0;
  bool host_visible_ = false;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  uint64_t bytes_allocated_ = 0;
  uint64_t peak_bytes_ = 0;
  uint64_t allocations_ = 0;
  uint64_t memory_allocations_ = 0;
};

}  // namespace kiln::vk
