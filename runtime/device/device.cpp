// kiln::Device: the CPU, the default Vulkan device, opened and adopted devices.
#include "kiln/device.h"

#include <optional>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "cache/disk_cache.h"
#include "exec/executable_cache.h"
#include "kiln/vulkan_interop.h"
#include "vk/device.h"

namespace kiln {
namespace {

/// The default device, or null when it cannot be created.
std::shared_ptr<vk::VulkanDevice> default_or_null() {
  auto dev = vk::VulkanDevice::default_device();
  return dev.ok() ? *dev : nullptr;
}

/// The cache `dir` names (DeviceOpenOptions::cache_dir); null for the process's own.
std::shared_ptr<cache::DiskCache> cache_for(const std::string& dir) {
  if (dir.empty()) return nullptr;
  if (dir == "off" || dir == "none" || dir == "0")
    return std::make_shared<cache::DiskCache>(std::filesystem::path());
  auto disk = std::make_shared<cache::DiskCache>(std::filesystem::path(dir));
  disk->sweep(cache::cache_size_limit(), std::chrono::hours(1));
  return disk;
}

}  // namespace

Expected<Device> Device::open(const std::string& selector, const DeviceOpenOptions& options) {
  vk::DeviceOptions o;
  o.validation = options.validation;
  // An empty selector picks as the default device does (KILN_DEVICE, else the best by type);
  // select_device() reads KILN_DEVICE itself, so pass the selector through unchanged.
  o.selector = selector;
  o.disk_cache = cache_for(options.cache_dir);
  o.prewarm = options.prewarm;
  o.limits = options.limits;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<vk::VulkanDevice> dev, vk::VulkanDevice::create(o));
  return Device(Kind::kVulkan, std::move(dev));
}

Expected<std::vector<DeviceDescription>> Device::list() {
  auto infos = vk::VulkanDevice::enumerate();
  if (!infos.ok()) {
    if (infos.status().code() == StatusCode::kUnavailable) return std::vector<DeviceDescription>{};
    return infos.status();
  }
  std::optional<uint32_t> chosen;
  if (auto pick = vk::VulkanDevice::select_device(*infos); pick.ok()) chosen = *pick;
  std::vector<DeviceDescription> out;
  for (const vk::DeviceInfo& info : *infos) {
    DeviceDescription d;
    d.index = info.index;
    d.name = info.name;
    d.vendor = info.vendor;
    d.type = info.type;
    d.driver =
        info.driver_name.empty() ? info.driver_info : info.driver_name + " " + info.driver_info;
    d.api_version = info.api_version;
    d.is_default = chosen && *chosen == info.index;
    out.push_back(std::move(d));
  }
  return out;
}

Device Device::best(std::string* reason) {
  const auto say = [&](std::string why) {
    if (reason != nullptr) *reason = std::move(why);
  };
  auto devices = Device::list();
  if (!devices.ok() || devices->empty()) {
    say("no Vulkan device" +
        (devices.ok() ? std::string() : " (" + devices.status().to_string() + ")") +
        ": the CPU interpreter");
    return Device::cpu();
  }
  const DeviceDescription* chosen = nullptr;
  std::string names;
  for (const DeviceDescription& d : *devices) {
    if (d.is_default) chosen = &d;
    names += (names.empty() ? "" : ", ") + d.name + " (" + d.type + ")";
  }
  if (chosen == nullptr || !vulkan_available()) {
    say("the default Vulkan device cannot be used (" + vulkan_status().to_string() +
        "): the CPU interpreter");
    return Device::cpu();
  }
  const char* env = std::getenv("KILN_DEVICE");
  if (env != nullptr && *env != '\0') {
    say("KILN_DEVICE selects " + chosen->name);
    return Device::vulkan();
  }
  if (chosen->type != "cpu") {
    say(chosen->name + " is a " + chosen->type + " GPU");
    return Device::vulkan();
  }
  say("the Vulkan devices here run on the CPU (" + names +
      "): the interpreter uses the same cores faster (docs/perf.md, \"Which device\")");
  return Device::cpu();
}

std::shared_ptr<vk::VulkanDevice> Device::vulkan_device() const {
  if (kind_ == Kind::kCpu) throw Error(invalid_argument("the CPU device has no Vulkan device"));
  if (vk_) return vk_;
  return value_or_throw(vk::VulkanDevice::default_device());
}

Device Device::from_vulkan_device(std::shared_ptr<vk::VulkanDevice> device) {
  if (!device) throw Error(invalid_argument("Device::from_vulkan_device: null device"));
  // The default device keeps its plain handle, so it prints and compares as Device::vulkan().
  if (device == default_or_null()) return Device::vulkan();
  return Device(Kind::kVulkan, std::move(device));
}

std::string Device::str() const {
  if (kind_ == Kind::kCpu) return "cpu";
  if (!vk_ || vk_ == default_or_null()) return "vulkan";
  return "vulkan:" + std::to_string(vk_->id());
}

std::string Device::name() const {
  if (kind_ == Kind::kCpu) return "cpu";
  return vulkan_device()->info().name;
}

uint64_t Device::id() const {
  if (kind_ == Kind::kCpu) return 0;
  if (vk_) return vk_->id();
  // The default device never changes once made: its id is read once (guards and eager-op keys
  // ask for it on every call). 0 when it cannot be made; vulkan_device() then throws why.
  static const uint64_t default_id = [] {
    auto dev = vk::VulkanDevice::default_device();
    return dev.ok() ? (*dev)->id() : 0;
  }();
  return default_id != 0 ? default_id : vulkan_device()->id();
}

bool Device::operator==(const Device& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == Kind::kCpu || vk_ == other.vk_) return true;
  // One side is the default device's plain handle.
  const std::shared_ptr<vk::VulkanDevice> def = default_or_null();
  return (vk_ ? vk_ : def) == (other.vk_ ? other.vk_ : def);
}

Status Device::close() {
  if (kind_ == Kind::kCpu || !vk_ || vk_ == default_or_null())
    return invalid_argument("Device::close: only an opened or adopted Vulkan device can be closed");
  drop_eager_executable_cache(vk_->id());
  const long others = vk_.use_count() - 1;
  if (others > 0)
    return failed_precondition("Device::close: " + str() + " is still used by " +
                               std::to_string(others) +
                               " other handles (tensors, compiled entries, models or Device "
                               "copies); release them first");
  vk_.reset();
  kind_ = Kind::kCpu;  // a closed handle is inert
  return Status::ok_status();
}

bool vulkan_available() {
  return vk::VulkanDevice::default_device().ok();
}

Status vulkan_status() {
  return vk::VulkanDevice::default_device().status();
}

namespace vulkan {

Expected<Device> adopt(const Handles& handles) {
  KILN_ASSIGN_OR_RETURN(
      std::shared_ptr<vk::VulkanDevice> dev,
      vk::VulkanDevice::adopt(handles, cache_for(handles.cache_dir ? handles.cache_dir : "")));
  return Device::from_vulkan_device(std::move(dev));
}

}  // namespace vulkan
}  // namespace kiln
