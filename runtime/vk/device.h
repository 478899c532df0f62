/// \file device.h
/// The Vulkan device seam. Everything above runtime/vk talks to the GPU only through this
/// header; no Vulkan type appears in it, so codegen and capture build without Vulkan headers.
///
/// Thread safety: every VulkanDevice method may be called from any number of threads at once.
/// The device synchronises what Vulkan requires the application to (the queue, command,
/// descriptor and query pools, fences, the pipeline map and cache). Exceptions: one Recording
/// must not be replayed by two threads at once, and make_private must not race with other
/// uses of the buffer it moves (docs/runtime.md, "Threads").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/status.h"

namespace kiln::vulkan {
struct Handles;  // include/kiln/vulkan_interop.h
}
namespace kiln::cache {
class DiskCache;  // runtime/cache/disk_cache.h
}

namespace kiln::vk {

/// What `kiln devices` prints and what codegen reads to choose kernel variants.
struct DeviceInfo {
  uint32_t index = 0;  // position in the instance's physical-device list
  std::string name;
  std::string vendor;  // "NVIDIA", "AMD", "Intel", "Mesa", ... (from the vendor id)
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string type;         // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver_name;  // VkPhysicalDeviceDriverProperties
  std::string driver_info;
  std::string api_version;  // "1.3.230"
  std::array<uint8_t, 16> device_uuid{};
  std::array<uint8_t, 16> driver_uuid{};
  uint32_t subgroup_size = 0;
  uint32_t max_shared_memory = 0;  // bytes per workgroup
  std::array<uint32_t, 3> max_workgroup_size{};
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_count{};
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_push_constants_size = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t min_uniform_buffer_offset_alignment = 0;
  uint64_t max_uniform_buffer_range = 0;
  uint64_t min_texel_buffer_offset_alignment = 0;
  uint64_t max_texel_buffer_elements = 0;
  /// rgba32f storage texel buffers (read through imageLoad; cheaper than storage-buffer loads
  /// on some drivers, see codegen's matmul_rowblock).
  bool texel_rgba32f = false;
  /// r32f storage texel buffers (scalar imageLoad: on lavapipe a gather, where a storage-buffer
  /// load of a lane-varying address is a loop over the lanes).
  bool texel_r32f = false;
  float timestamp_period_ns = 0;  // 0: no timestamps on the compute queue
  bool unified_memory = false;    // a device-local memory type is also host-visible
  // Features (enabled on the logical device when present).
  bool shader_float16 = false;  // shaderFloat16 arithmetic
  bool shader_int8 = false;
  bool shader_int16 = false;
  bool shader_int64 = false;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool subgroup_basic = false;
  bool subgroup_arithmetic = false;
  bool subgroup_shuffle = false;
  bool subgroup_ballot = false;
  bool subgroup_vote = false;
  /// VkPhysicalDeviceFloatControlsProperties (Vulkan 1.2): 32-bit float shaders may declare
  /// SignedZeroInfNanPreserve (codegen does, keeping IEEE NaN / inf / -0.0 arithmetic).
  bool signed_zero_inf_nan_preserve_f32 = false;
  /// The KILN_DEVICE_LIMITS / DeviceOptions::limits override applied to the values above, in
  /// canonical form ("invocations=128,int64=0"); empty when the device is as the driver says.
  std::string limits;
};

/// A sub-allocated range of a device memory block. Freed (returned to its block) when the last
/// reference goes away; it keeps its device alive.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t size() const = 0;
  /// Host pointer when the memory is host-visible (unified memory), else nullptr.
  virtual void* mapped() const = 0;
  /// Where the bytes live now (memory object and offset): equal for two references to the
  /// same memory, and changed when make_private moves a slice.
  virtual std::pair<uint64_t, uint64_t> location() const = 0;
};
using BufferRef = std::shared_ptr<Buffer>;

/// A compute pipeline built from SPIR-V. Owned by the device's pipeline cache.
struct Pipeline;

/// What a kernel needs from the runtime to become a pipeline.
struct PipelineDesc {
  std::vector<uint32_t> spirv;
  std::string entry = "main";
  uint32_t num_bindings = 0;         // storage buffers at set 0, bindings 0..n-1
  uint32_t push_constant_bytes = 0;  // <= 128
  /// Bindings that are read-only rgba32f storage texel buffers (imageBuffer) instead of storage
  /// buffers; the runtime creates their buffer views.
  std::vector<uint32_t> texel_bindings;
  /// Bindings that are read-only r32f storage texel buffers (scalar loads).
  std::vector<uint32_t> texel_r32f_bindings;
  /// Bindings that are uniform buffers (small read-only data such as a kernel's sizes).
  std::vector<uint32_t> uniform_bindings;
  std::vector<std::pair<uint32_t, uint32_t>> spec_constants;  // (constant_id, 32-bit value)
  std::string label;                                          // for logs and profiles
  /// Complete cache key (source hash, spec constants, workgroup size, compiler options);
  /// the device adds its own identity. Equal keys must mean interchangeable pipelines.
  std::string cache_key;
};

/// One dispatch in a submission. Bindings are whole buffers, in binding order.
/// A part of a buffer bound to one binding: `offset` bytes in (a multiple of
/// minStorageBufferOffsetAlignment), `range` bytes long (0: to the end of the buffer).
struct BufferWindow {
  uint64_t offset = 0;
  uint64_t range = 0;
};

struct Dispatch {
  const Pipeline* pipeline = nullptr;
  std::vector<BufferRef> bindings;
  /// Empty, or one window per binding: lets a kernel whose buffers exceed maxStorageBufferRange
  /// run as several dispatches over parts of them.
  std::vector<BufferWindow> windows;
  std::vector<uint8_t> push_constants;
  std::array<uint32_t, 3> groups{1, 1, 1};
  /// Recordings only (VulkanDevice::record): >= 0 reads the workgroup counts (three uint32)
  /// at this byte offset of the recording's indirect buffer when the dispatch runs, so a replay
  /// can change them; `groups` is then ignored.
  int64_t indirect_offset = -1;
};

/// A command buffer recorded once by VulkanDevice::record and submitted by replay(), with its
/// descriptor sets; it keeps every buffer it binds alive.
class Recording {
 public:
  virtual ~Recording() = default;
  virtual size_t dispatch_count() const = 0;
};

/// A copy that replay() makes before a recording's dispatches, in the same submission: into
/// `dst` from another buffer of the device (`src`), or from host memory (`host`, read before
/// replay() returns). On unified memory it is a host copy; otherwise a transfer command (host
/// bytes through the staging allocator).
struct CopyIn {
  BufferRef dst;
  BufferRef src;  // null: copy from `host`
  const void* host = nullptr;
  size_t bytes = 0;
};

/// Where an allocation lives.
enum class MemoryUse {
  kDevice,        // device-local (host-visible too on unified memory)
  kHostWritable,  // host-visible and coherent: data the host rewrites before each submission
};

/// Per-dispatch GPU time from timestamp queries (when the queue supports them).
struct DispatchTiming {
  std::string label;
  double gpu_ms = 0;
};

struct DeviceStats {
  uint64_t pipelines_created = 0;
  uint64_t pipeline_cache_hits = 0;
  uint64_t dispatches = 0;
  uint64_t submissions = 0;
  uint64_t replays = 0;                   // submissions of recordings (also counted in submissions)
  uint64_t bytes_allocated = 0;           // live sub-allocations
  uint64_t blocks_allocated = 0;          // VkDeviceMemory blocks holding allocations
  uint64_t bytes_retained = 0;            // empty blocks kept for reuse
  uint64_t buffer_allocations = 0;        // allocate() calls, device and staging (sub-allocations)
  uint64_t memory_allocations = 0;        // vkAllocateMemory calls (new blocks)
  uint64_t peak_bytes = 0;                // most device-buffer bytes live at once (see reset_peak)
  uint64_t command_buffers_recorded = 0;  // vkBeginCommandBuffer for dispatches or a recording
  uint64_t validation_errors = 0;
  uint64_t staged_uploads = 0;    // upload() calls that copied through a staging buffer
  uint64_t staged_downloads = 0;  // download() calls that copied through a staging buffer
};

struct DeviceOptions {
  /// Khronos validation layer + a debug messenger that counts (and prints) every error.
  /// Default: on when KILN_VALIDATE=1.
  bool validation = false;
  /// Device selector: index or case-insensitive name substring. Empty: KILN_DEVICE, else the
  /// best device by type (discrete > integrated > virtual > cpu).
  std::string selector;
  /// The persistent cache this device's kernels, compiled graphs and pipeline cache go to
  /// (null: cache::DiskCache::global(), KILN_CACHE_DIR's).
  std::shared_ptr<cache::DiskCache> disk_cache;
  /// Recreate the pipelines stored in the cache's pipeline set on a thread of the device's own
  /// as it opens (also KILN_PREWARM=1; pipeline_prewarm.cpp).
  bool prewarm = false;
  /// Lowers what Kiln believes about the device, as KILN_DEVICE_LIMITS does (both apply; the
  /// lower value wins): "invocations=128,shared=16384,subgroup=4,int64=0,unified=0"
  /// (vk/device_limits.h). Bad text is an invalid_argument error from create().
  std::string limits;
};

class VulkanDevice {
 public:
  /// Lists physical devices. Creates (and destroys) a temporary instance.
  static Expected<std::vector<DeviceInfo>> enumerate();
  /// Creates the device chosen by `options`.
  static Expected<std::shared_ptr<VulkanDevice>> create(const DeviceOptions& options);
  /// The process-wide default device, created on first use with KILN_VALIDATE / KILN_DEVICE.
  static Expected<std::shared_ptr<VulkanDevice>> default_device();
  /// A device on the application's own VkDevice and queue (external_device.cpp). Kiln checks
  /// what it needs, uses only the features the application enabled, and destroys none of the
  /// handles it was given.
  static Expected<std::shared_ptr<VulkanDevice>> adopt(const vulkan::Handles& handles,
                                                       std::shared_ptr<cache::DiskCache> disk = {});
  /// Validation-layer error messages of every device Kiln created in this process, in order.
  static std::vector<std::string> all_validation_messages();
  /// The DeviceInfo::index of the device `selector` picks among `devices` (an index or a
  /// case-insensitive name substring; empty: KILN_DEVICE, else the best by type). This is the
  /// choice create() and default_device() make; invalid_argument lists the devices on no match.
  static Expected<uint32_t> select_device(std::span<const DeviceInfo> devices,
                                          const std::string& selector = "");

  virtual ~VulkanDevice() = default;
  /// A number unique to this device among those of the process, from 1.
  uint64_t id() const { return id_; }
  /// Whether Kiln created the VkDevice (false for adopt()).
  virtual bool owns_vulkan_objects() const { return true; }
  /// The persistent cache of this device (DeviceOptions::disk_cache); never null.
  virtual cache::DiskCache* disk_cache() const = 0;
  virtual const DeviceInfo& info() const = 0;

  /// Sub-allocates `bytes` (a zero-size request returns a valid 4-byte buffer). kHostWritable
  /// buffers have mapped() memory and may also serve as indirect-dispatch arguments.
  virtual Expected<BufferRef> allocate(size_t bytes, MemoryUse use = MemoryUse::kDevice) = 0;
  /// `bytes` bytes of `parent` from `offset` (a multiple of the allocation alignment, 256
  /// suffices) as a buffer of its own: it shares the parent's memory and keeps it alive.
  virtual Expected<BufferRef> slice(const BufferRef& parent, size_t offset, size_t bytes) = 0;
  /// Moves a slice into memory of its own, contents included; every holder of `buffer` sees the
  /// move (it is the same object). A buffer that is not a slice is left alone. Not safe while
  /// another thread uses `buffer` (its memory changes under it).
  virtual Status make_private(const BufferRef& buffer) = 0;
  /// Copies `bytes` bytes between two buffers of this device (after earlier work finished).
  virtual Status copy(const BufferRef& src, const BufferRef& dst, size_t bytes) = 0;
  /// Host -> device. `bytes` <= buffer size. Maps directly on unified memory, else stages.
  virtual Status upload(const BufferRef& dst, const void* src, size_t bytes) = 0;
  /// Device -> host: `bytes` bytes from byte `offset` of `src`.
  virtual Status download(const BufferRef& src, void* dst, size_t bytes, size_t offset = 0) = 0;

  /// Returns the cached pipeline for desc.cache_key, creating it on a miss (counted in stats).
  virtual Expected<const Pipeline*> pipeline(const PipelineDesc& desc) = 0;
  /// pipeline() for each desc, in order; the misses are created concurrently (one thread per
  /// core, at most 8). On any failure none of the misses is kept and the first error returns.
  virtual Expected<std::vector<const Pipeline*>> pipelines(std::span<const PipelineDesc> descs) = 0;

  /// Records the dispatches into one command buffer, with a compute->compute memory barrier
  /// between consecutive dispatches, submits it and waits on a fence. When `timings` is non-null
  /// and timestamps are supported, fills one entry per dispatch.
  virtual Status run(std::span<const Dispatch> dispatches,
                     std::vector<DispatchTiming>* timings = nullptr) = 0;

  /// Records `dispatches` as run() would (barriers between them) into a command buffer of their
  /// own, for replay(). `indirect` holds the workgroup counts of dispatches with an
  /// indirect_offset (null when none has one). With `timestamps`, replay() can report timings.
  virtual Expected<std::shared_ptr<Recording>> record(std::span<const Dispatch> dispatches,
                                                      const BufferRef& indirect,
                                                      bool timestamps) = 0;
  /// Makes `copies` (their destinations must not overlap each other's sources: host copies are
  /// made at once, transfer commands at the submission), then runs the recording, in one
  /// submission, and waits for it.
  /// Host writes to kHostWritable buffers made before the call are visible to it. One thread at
  /// a time per recording. `timings` as in run() (empty unless recorded with timestamps).
  virtual Status replay(Recording& recording, std::span<const CopyIn> copies = {},
                        std::vector<DispatchTiming>* timings = nullptr) = 0;

  virtual DeviceStats stats() const = 0;
  /// Restarts DeviceStats::peak_bytes at the bytes allocated now.
  virtual void reset_peak() = 0;
  /// Validation-layer messages of severity error seen so far (text), for tests.
  virtual std::vector<std::string> validation_messages() const = 0;
  /// Writes the VkPipelineCache to the persistent cache if pipelines were created since it was
  /// read or last written (also done when the device is destroyed; docs/cache.md).
  virtual void save_pipeline_cache() {}

 protected:
  VulkanDevice();

 private:
  uint64_t id_;
};

/// Lowers `info` as create() does for a device it opens: KILN_DEVICE_LIMITS merged with
/// `limits` (DeviceOptions::limits syntax; vk/device_limits.h). invalid_argument naming the key
/// on bad text.
Status apply_device_limits(const std::string& limits, DeviceInfo& info);

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* vk_result_name(int32_t result);

}  // namespace kiln::vk
