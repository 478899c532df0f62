/// \file vulkan_device.h
/// The Vulkan implementation of VulkanDevice (private to runtime/vk). Split over
/// vulkan_device.cpp (creation, memory, transfers), pipeline.cpp and run.cpp.
///
/// Threads: the queue is used under queue_mu_ (vkQueueSubmit only; the wait on the fence is
/// outside it). Every submission records into a CommandSlot of its own, taken from an idle
/// list, so no command pool, descriptor pool, query pool or fence is used by two threads at
/// once. The pipeline map has its own mutex; counters are atomic.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "vk/allocator.h"
#include "vk/device.h"
#include "vk/device_core.h"

namespace kiln::vk {

/// A compute pipeline and the objects it was built from. Owned by the device's pipeline map;
/// Dispatch refers to it by pointer.
struct Pipeline {
  VkDevice device = VK_NULL_HANDLE;  // the device it belongs to (checked in run())
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t num_bindings = 0;
  uint32_t push_constant_bytes = 0;
  std::vector<bool> texel;    // per binding: a storage texel buffer (rgba32f, or r32f below)
  std::vector<bool> r32f;     // per binding: the texel buffer's format is r32f
  std::vector<bool> uniform;  // per binding: a uniform buffer
  std::string label;
};

/// What one submission in flight needs for itself: a command pool with one command buffer, a
/// fence, and the descriptor and query pools of run(). Used by one thread at a time.
struct CommandSlot {
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  uint32_t pool_sets = 0;
  uint32_t pool_descriptors = 0;
  VkQueryPool query_pool = VK_NULL_HANDLE;
  uint32_t query_capacity = 0;
};

/// A descriptor pool for `sets` sets of up to `descriptors` storage, texel and uniform buffers
/// each kind (run.cpp).
Status create_descriptor_pool(VkDevice device, uint32_t sets, uint32_t descriptors,
                              VkDescriptorPool* pool);

/// Records a global VkMemoryBarrier.
void cmd_memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                        VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
                        VkAccessFlags dst_access);

/// A sub-allocated range of one of the allocator's blocks.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::shared_ptr<Allocator> allocator, const Allocation& allocation, size_t size)
      : allocator_(std::move(allocator)), allocation_(allocation), size_(size) {}
  /// A slice of `of` at `offset`; `parent` is `of` itself, kept alive by the slice.
  DeviceBuffer(BufferRef parent, const DeviceBuffer& of, VkDeviceSize offset, size_t size)
      : allocator_(of.allocator_),
        allocation_{of.allocation_.block, of.allocation_.offset + offset, (size + 3) / 4 * 4},
        size_(size),
        parent_(std::move(parent)) {}
  ~DeviceBuffer() override {
    if (parent_ == nullptr) allocator_->free(allocation_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  size_t size() const override { return size_; }
  void* mapped() const override {
    uint8_t* base = allocation_.block->mapped;
    return base == nullptr ? nullptr : base + allocation_.offset;
  }
  std::pair<uint64_t, uint64_t> location() const override {
    return {reinterpret_cast<uint64_t>(allocation_.block), allocation_.offset};
  }
  const Allocator* allocator() const { return allocator_.get(); }
  VkBuffer vk_buffer() const { return allocation_.block->buffer; }
  VkDeviceSize offset() const { return allocation_.offset; }
  /// The descriptor range: the size rounded up to 4 bytes (never 0, and within the reservation).
  VkDeviceSize range() const { return (static_cast<VkDeviceSize>(size_) + 3) / 4 * 4; }
  bool is_slice() const { return parent_ != nullptr; }
  /// A slice takes over `allocation` (of its allocator, already holding its contents).
  void adopt(const Allocation& allocation) {
    allocation_ = allocation;
    parent_.reset();
  }
  /// Gives up the allocation (the caller hands it to another owner).
  Allocation release() {
    const Allocation a = allocation_;
    allocation_.block = nullptr;
    return a;
  }

 private:
  std::shared_ptr<Allocator> allocator_;
  Allocation allocation_;
  size_t size_;
  BufferRef parent_;  // set for a slice
};

class VulkanDeviceImpl final : public VulkanDevice {
 public:
  /// Builds the device around an already created VkDevice.
  static Expected<std::shared_ptr<VulkanDevice>> create_from_core(std::shared_ptr<DeviceCore> core);
  ~VulkanDeviceImpl() override;

  const DeviceInfo& info() const override { return core_->physical.info; }
  bool owns_vulkan_objects() const override { return core_->owns_device; }
  cache::DiskCache* disk_cache() const override { return core_->disk.get(); }
  Expected<BufferRef> allocate(size_t bytes, MemoryUse use) override;
  Expected<BufferRef> slice(const BufferRef& parent, size_t offset, size_t bytes) override;
  Status make_private(const BufferRef& buffer) override;
  Status copy(const BufferRef& src, const BufferRef& dst, size_t bytes) override;
  Expected<std::shared_ptr<Recording>> record(std::span<const Dispatch> dispatches,
                                              const BufferRef& indirect, bool timestamps) override;
  Status replay(Recording& recording, std::span<const CopyIn> copies,
                std::vector<DispatchTiming>* timings) override;
  Status upload(const BufferRef& dst, const void* src, size_t bytes) override;
  Status download(const BufferRef& src, void* dst, size_t bytes, size_t offset) override;
  Expected<const Pipeline*> pipeline(const PipelineDesc& desc) override;
  Expected<std::vector<const Pipeline*>> pipelines(std::span<const PipelineDesc> descs) override;
  Status run(std::span<const Dispatch> dispatches, std::vector<DispatchTiming>* timings) override;
  DeviceStats stats() const override;
  void reset_peak() override;
  std::vector<std::string> validation_messages() const override;
  void save_pipeline_cache() override;  // pipeline_cache.cpp

 private:
  explicit VulkanDeviceImpl(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {}
  Status init();
  VkDevice device() const { return core_->device; }

  /// `buffer` as one of this device's buffers; invalid_argument otherwise.
  Expected<const DeviceBuffer*> own_buffer(const BufferRef& buffer, const char* what) const;

  /// Hands a CommandSlot back to the idle list when the lease ends.
  struct SlotReturn {
    VulkanDeviceImpl* device = nullptr;
    void operator()(CommandSlot* slot) const;
  };
  using SlotLease = std::unique_ptr<CommandSlot, SlotReturn>;
  /// An idle CommandSlot (a new one when every slot is in use), for one submission.
  Expected<SlotLease> acquire_slot();
  Status init_slot(CommandSlot& slot) const;
  void destroy_slot(CommandSlot& slot) const;
  /// Resets and begins the slot's command buffer.
  Status begin_commands(CommandSlot& slot);
  /// Ends the slot's command buffer, submits it and waits for it to finish.
  Status submit_and_wait(CommandSlot& slot);
  /// Submits ended command buffers, in order, with the slot's fence and waits for them.
  Status submit_and_wait(CommandSlot& slot, std::span<const VkCommandBuffer> cmds);
  /// Staging ranges of one submission, returned to the staging allocator when it is over (or
  /// has failed).
  struct StagingRanges {
    Allocator* allocator;
    std::vector<Allocation> ranges;
    ~StagingRanges() {
      for (const Allocation& a : ranges) allocator->free(a);
    }
  };
  /// Copies into device buffers (upload, copy, replay's copies in): those the host can make are
  /// made now; the rest are recorded into the slot's command buffer (begun and ended here; false
  /// when none was), their staging ranges added to `staging`. `what` names them in errors.
  Expected<bool> record_copies_in(CommandSlot& slot, std::span<const CopyIn> copies,
                                  StagingRanges& staging, const std::string& what);
  /// record_copies_in, then submits the commands (if any) and waits for them.
  Status submit_copies(std::span<const CopyIn> copies, const std::string& what);

  // pipeline_cache.cpp: pipeline_cache_ seeded from the persistent cache
  Status create_pipeline_cache();
  std::string pipeline_cache_key() const;
  std::string pipeline_cache_identity() const;

  // pipeline_prewarm.cpp: the set of pipelines this device created, persisted and recreated
  // on a worker when the device opens (KILN_PREWARM)
  void start_prewarm();
  void save_pipeline_set();
  /// Notes a pipeline built by a caller (not by the prewarm), with pipelines_mu_ held.
  void remember_created(const PipelineDesc& desc);
  /// A caller's pipeline request during the prewarm waits for it rather than building the same
  /// pipelines a second time.
  bool wait_for_prewarm();  // true when it waited
  /// Binds each pipeline to a scratch buffer and dispatches an empty grid, so that a driver
  /// that compiles a pipeline's code at its first dispatch (lavapipe) does so now.
  Status warm_pipelines(std::span<const Pipeline* const> pipelines);

  // pipeline.cpp
  Status check_pipeline_desc(const PipelineDesc& desc) const;
  std::string pipeline_key(const PipelineDesc& desc) const;
  /// The pipeline stored under `key` (nullptr if none; counted as a hit), checked against
  /// `desc`'s interface. With pipelines_mu_ held.
  Expected<const Pipeline*> find_pipeline_locked(const std::string& key, const PipelineDesc& desc);
  Status build_pipeline(const PipelineDesc& desc, Pipeline& out) const;
  void destroy_pipeline(Pipeline& pipeline) const;

  // run.cpp
  /// run(); `keep_empty` records dispatches with an empty grid too (warm_pipelines).
  Status run_dispatches(std::span<const Dispatch> dispatches, std::vector<DispatchTiming>* timings,
                        bool keep_empty);
  Status check_dispatch(const Dispatch& dispatch, size_t index) const;
  Status prepare_descriptor_pool(CommandSlot& slot, uint32_t sets, uint32_t descriptors);
  Status prepare_query_pool(CommandSlot& slot, uint32_t queries);
  /// Writes one descriptor set per dispatch with bindings (sets[k] for dispatches[active[k]]);
  /// texel bindings get buffer views appended to `views`, which the caller destroys.
  Status write_descriptor_sets(std::span<const Dispatch> dispatches,
                               const std::vector<size_t>& active, VkDescriptorPool pool,
                               std::vector<VkDescriptorSet>& sets,
                               std::vector<VkBufferView>& views);
  /// Records the dispatches' commands (and timestamps into `queries` when non-null).
  void record_commands(VkCommandBuffer cmd, std::span<const Dispatch> dispatches,
                       const std::vector<size_t>& active, const std::vector<VkDescriptorSet>& sets,
                       VkQueryPool queries, const DeviceBuffer* indirect) const;
  /// Per-dispatch GPU times from the 2 timestamps per active dispatch in `pool`.
  Status read_timings(VkQueryPool pool, std::span<const Dispatch> dispatches,
                      const std::vector<size_t>& active,
                      std::vector<DispatchTiming>& timings) const;

  std::shared_ptr<DeviceCore> core_;
  std::shared_ptr<Allocator> allocator_;  // buffers
  std::shared_ptr<Allocator> staging_;    // host-visible staging; null on unified memory
  std::shared_ptr<Allocator> params_;     // MemoryUse::kHostWritable; allocator_ on unified memory
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mu_;  // vkQueueSubmit (the queue is externally synchronised)
  std::mutex slots_mu_;  // guards the two below
  std::vector<std::unique_ptr<CommandSlot>> slots_;
  std::vector<CommandSlot*> idle_slots_;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;  // internally synchronised by the driver
  std::mutex pipeline_cache_mu_;                     // guards the three below (saving)
  bool pipeline_cache_loaded_ = false;               // pipeline_cache_ matches the file on disk
  uint64_t pipelines_at_save_ = 0;                   // pipelines_created when it last did
  uint64_t pipeline_cache_hash_ = 0;                 // checksum of the data on disk
  mutable std::mutex pipelines_mu_;                  // guards pipelines_
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::vector<PipelineDesc> created_descs_;  // pipelines built here, for the pipeline set
  std::thread prewarm_;                      // recreates the persisted set (joined first)
  std::atomic<bool> prewarming_{false};
  std::mutex prewarm_mu_;  // with prewarm_cv_: the end of the prewarm
  std::condition_variable prewarm_cv_;
  /// The DeviceStats counters kept here (memory and validation figures are read live).
  struct Counters {
    std::atomic<uint64_t> pipelines_created{0};
    std::atomic<uint64_t> pipeline_cache_hits{0};
    std::atomic<uint64_t> dispatches{0};
    std::atomic<uint64_t> submissions{0};
    std::atomic<uint64_t> replays{0};
    std::atomic<uint64_t> command_buffers_recorded{0};
    std::atomic<uint64_t> staged_uploads{0};
    std::atomic<uint64_t> staged_downloads{0};
  };
  Counters stats_;
};

}  // namespace kiln::vk
