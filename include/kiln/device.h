/// \file device.h
/// kiln::Device: where a tensor's data lives and where its ops run.
///
/// `Device::cpu()` is the interpreter. `Device::vulkan()` is the process's default Vulkan
/// device, created on first use (KILN_DEVICE and KILN_VALIDATE choose it; docs/runtime.md).
/// `Device::open(selector)` opens a Vulkan device of its own, by index or name, so several can
/// be used at once (two GPUs, or a GPU and lavapipe); each opened device has its own VkDevice,
/// memory, pipelines and queue, and is released when the last Device, Tensor or compiled entry
/// that uses it is gone. An application that already owns a VkDevice hands it to Kiln with
/// `kiln::vulkan::adopt` (include/kiln/vulkan_interop.h).
///
/// Ops need all their tensors on one device; `Tensor::to(device)` moves data between any two.
/// A compiled function compiles separately for each device it is called on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

namespace vk {
class VulkanDevice;
}

/// One physical Vulkan device as `Device::list()` reports it.
struct DeviceDescription {
  uint32_t index = 0;  // what Device::open(std::to_string(index)) opens
  std::string name;    // "NVIDIA GeForce RTX 4070", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;  // "NVIDIA", "AMD", "Intel", "Mesa", ...
  std::string type;    // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver;  // driver name and version
  std::string api_version;
  bool is_default = false;  // the device Device::vulkan() picks
};

/// Options of Device::open.
struct DeviceOpenOptions {
  /// The Khronos validation layer (fails with `unavailable` when it is not installed). Off:
  /// KILN_VALIDATE still turns it on, as for the default device.
  bool validation = false;
  /// The persistent cache for this device's kernels, compiled graphs and driver caches
  /// (docs/cache.md): empty uses the process's (KILN_CACHE_DIR, else ~/.cache/kiln); "off"
  /// uses none; anything else is a directory of its own, e.g. one an application ships.
  std::string cache_dir;
  /// Create, on a thread of the device's own while the application loads its model, every
  /// pipeline the cache's earlier processes created (`kiln precompile` fills it), so that the
  /// first call does not create pipelines itself (KILN_PREWARM=1 does it for every device;
  /// docs/cache.md, "Shipping a warm cache"). Calls needing a pipeline meanwhile wait for it.
  bool prewarm = false;
  /// Lowers (never raises) what Kiln believes about the device, to emulate a smaller GPU:
  /// "invocations=128,shared=16384,subgroup=4,int64=0,float16=0,int8=0,storage16=0,unified=0"
  /// (docs/runtime.md, "Device limits"). Applied together with KILN_DEVICE_LIMITS, the lower
  /// value winning. Bad syntax or an unknown key makes open() fail with invalid_argument.
  std::string limits;
};

class Device {
 public:
  enum class Kind : uint8_t { kCpu, kVulkan };

  /// The CPU interpreter.
  static Device cpu() { return Device(Kind::kCpu, nullptr); }
  /// The default Vulkan device (created on first use; KILN_DEVICE selects it).
  static Device vulkan() { return Device(Kind::kVulkan, nullptr); }
  /// Opens a new Vulkan device: `selector` is an index into list() or a case-insensitive
  /// substring of a device name ("nvidia", "llvmpipe"); empty picks as Device::vulkan() does.
  /// Errors: invalid_argument naming the devices when nothing matches, unavailable without
  /// a Vulkan driver.
  static Expected<Device> open(const std::string& selector, const DeviceOpenOptions& options = {});
  /// The physical Vulkan devices of this machine (empty list without a driver).
  static Expected<std::vector<DeviceDescription>> list();
  /// The device expected to run models fastest here: the default Vulkan device when it is a
  /// GPU (discrete, integrated or virtual) or KILN_DEVICE chose it; otherwise the CPU
  /// interpreter, since a Vulkan device of type "cpu" (lavapipe, SwiftShader) computes on the
  /// same cores through a shader JIT, and the interpreter (OpenBLAS, loops over every core)
  /// outran it on every model measured (docs/perf.md, "Which device"). Never fails: without a
  /// usable Vulkan device it is the CPU. `reason`, when given, says why in one sentence.
  static Device best(std::string* reason = nullptr);

  Kind kind() const { return kind_; }
  bool is_cpu() const { return kind_ == Kind::kCpu; }
  /// "cpu", "vulkan" (the default device) or "vulkan:N" (an opened or adopted one; N = id()).
  std::string str() const;
  /// The device's name ("cpu", or the Vulkan device name); throws when it cannot be created.
  std::string name() const;
  /// A number unique to this device in the process: 0 for the CPU, distinct for every Vulkan
  /// device. Device::vulkan()'s is that of the default device (throws when none can be made).
  uint64_t id() const;
  /// The same device: equal kinds and, for Vulkan, the same VkDevice. Device::vulkan() equals
  /// the default device however it was obtained.
  bool operator==(const Device& other) const;

  /// Releases an opened or adopted Vulkan device now: drops Kiln's cached eager kernels for
  /// it and this handle; the device's Vulkan objects are destroyed when this was the last use.
  /// Fails with failed_precondition, changing nothing, while tensors, compiled functions
  /// (their entries for this device), models or other Device copies still use it. Needed
  /// before an application destroys a VkDevice it adopted; optional otherwise. The CPU and
  /// the default device cannot be closed (invalid_argument).
  Status close();

  /// The Vulkan device behind this handle (the default one created if needed); throws
  /// kiln::Error when it cannot be created. Not for applications: runtime/vk is internal.
  std::shared_ptr<vk::VulkanDevice> vulkan_device() const;
  /// A handle on an existing runtime device (Kiln's runtime and kiln::vulkan::adopt).
  static Device from_vulkan_device(std::shared_ptr<vk::VulkanDevice> device);

 private:
  Device(Kind kind, std::shared_ptr<vk::VulkanDevice> vk) : kind_(kind), vk_(std::move(vk)) {}
  Kind kind_;
  std::shared_ptr<vk::VulkanDevice> vk_;  // null: cpu, or the default Vulkan device
};

/// True if the default Vulkan device can be created (the error is available from
/// vulkan_status()).
bool vulkan_available();
Status vulkan_status();

}  // namespace kiln
