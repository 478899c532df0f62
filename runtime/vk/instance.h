/// \file instance.h
/// The VkInstance wrapper: optional Khronos validation layer and a VK_EXT_debug_utils messenger
/// that records every error-severity message. Private to runtime/vk.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::vk {

/// How validation was asked for. kRequired (DeviceOptions::validation) fails with unavailable when
/// the layer is missing; kFromEnv (KILN_VALIDATE) only warns and continues without it.
enum class ValidationMode { kOff, kFromEnv, kRequired };

/// KILN_VALIDATE as a level: 0 off, 1 errors, 2 errors and printed warnings.
int validation_env_level();

/// Where the debug messenger stores what it sees. Outlives the VkInstance it listens to.
class ValidationSink {
 public:
  explicit ValidationSink(bool print_warnings) : print_warnings_(print_warnings) {}
  void on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* id,
                  const char* text);
  std::vector<std::string> errors() const;
  uint64_t error_count() const { return error_count_.load(); }

 private:
  bool print_warnings_;
  mutable std::mutex mu_;
  std::vector<std::string> errors_;
  std::atomic<uint64_t> error_count_{0};
};

/// Owns a VkInstance (Vulkan 1.2) and, with validation, the layer's messenger.
class Instance {
 public:
  static Expected<std::shared_ptr<Instance>> create(ValidationMode mode);
  /// The application's VkInstance, which this object never destroys (no messenger: the
  /// application's own validation setup reports).
  static std::shared_ptr<Instance> wrap(VkInstance instance);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }
  Expected<std::vector<VkPhysicalDevice>> physical_devices() const;

  std::vector<std::string> validation_messages() const { return sink_->errors(); }
  uint64_t validation_errors() const { return sink_->error_count(); }

 private:
  Instance() = default;
  Status init(ValidationMode mode);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool owned_ = true;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;
  std::unique_ptr<ValidationSink> sink_;
};

/// Validation errors seen by every instance of this process, including messages emitted while
/// devices and instances are destroyed (leak reports). For tests.
uint64_t total_validation_errors();
/// Their messages, in order.
std::vector<std::string> all_validation_messages();

}  // namespace kiln::vk
