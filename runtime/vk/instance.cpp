#include "vk/instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "kiln/logging.h"
#include "vk/vk_check.h"

namespace kiln::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::atomic<uint64_t> g_total_validation_errors{0};

/// Every error message of every instance (all_validation_messages).
std::mutex& all_messages_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<std::string>& all_messages() {
  static auto* messages = new std::vector<std::string>();  // outlives static destructors
  return *messages;
}

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void* user) {
  auto* sink = static_cast<ValidationSink*>(user);
  if (sink != nullptr && data != nullptr) {
    sink->on_message(severity, data->pMessageIdName, data->pMessage);
  }
  return VK_FALSE;  // never abort the call that triggered the message
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(ValidationSink* sink) {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = debug_callback;
  info.pUserData = sink;
  return info;
}

Expected<bool> layer_available(const char* name) {
  uint32_t count = 0;
  KILN_VK_RETURN_IF_ERROR(vkEnumerateInstanceLayerProperties(&count, nullptr));
  std::vector<VkLayerProperties> layers(count);
  KILN_VK_RETURN_IF_ERROR(vkEnumerateInstanceLayerProperties(&count, layers.data()));
  for (uint32_t i = 0; i < count; ++i) {
    if (std::strcmp(layers[i].layerName, name) == 0) return true;
  }
  return false;
}

/// Instance extensions offered by the loader and implicit layers, plus those of `layer`.
Expected<std::vector<std::string>> instance_extensions(const char* layer) {
  std::vector<std::string> names;
  std::vector<const char*> sources = {nullptr};
  if (layer != nullptr) sources.push_back(layer);
  for (const char* source : sources) {
    uint32_t count = 0;
    KILN_VK_RETURN_IF_ERROR(vkEnumerateInstanceExtensionProperties(source, &count, nullptr));
    std::vector<VkExtensionProperties> props(count);
    KILN_VK_RETURN_IF_ERROR(vkEnumerateInstanceExtensionProperties(source, &count, props.data()));
    for (uint32_t i = 0; i < count; ++i) names.emplace_back(props[i].extensionName);
  }
  return names;
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

int validation_env_level() {
  const char* env = std::getenv("KILN_VALIDATE");
  if (env == nullptr || env[0] == '\0') return 0;
  const std::string_view value(env);
  if (value == "0" || value == "false" || value == "off" || value == "no") return 0;
  if (value[0] >= '0' && value[0] <= '9') return std::atoi(env);
  return 1;
}

void ValidationSink::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* id,
                                const char* text) {
  std::string message;
  if (id != nullptr && id[0] != '\0') {
    message += "[";
    message += id;
    message += "] ";
  }
  message += text != nullptr ? text : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    std::fprintf(stderr, "kiln: vulkan validation error: %s\n", message.c_str());
    error_count_.fetch_add(1);
    g_total_validation_errors.fetch_add(1);
    {
      std::lock_guard<std::mutex> all(all_messages_mu());
      all_messages().push_back(message);
    }
    std::lock_guard<std::mutex> lock(mu_);
    errors_.push_back(std::move(message));
  } else if (print_warnings_) {
    std::fprintf(stderr, "kiln: vulkan validation warning: %s\n", message.c_str());
  }
}

std::vector<std::string> ValidationSink::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

uint64_t total_validation_errors() {
  return g_total_validation_errors.load();
}

std::vector<std::string> all_validation_messages() {
  std::lock_guard<std::mutex> lock(all_messages_mu());
  return all_messages();
}

Expected<std::shared_ptr<Instance>> Instance::create(ValidationMode mode) {
  std::shared_ptr<Instance> instance(new Instance());
  KILN_RETURN_IF_ERROR(instance->init(mode));
  return instance;
}

std::shared_ptr<Instance> Instance::wrap(VkInstance instance) {
  std::shared_ptr<Instance> wrapped(new Instance());
  wrapped->instance_ = instance;
  wrapped->owned_ = false;
  wrapped->sink_ = std::make_unique<ValidationSink>(false);
  return wrapped;
}

Status Instance::init(ValidationMode mode) {
  sink_ = std::make_unique<ValidationSink>(validation_env_level() >= 2);

  bool validate = mode != ValidationMode::kOff;
  if (validate) {
    KILN_ASSIGN_OR_RETURN(const bool present, layer_available(kValidationLayer));
    if (!present) {
      const std::string why = std::string(kValidationLayer) +
                              " is not installed (Debian: apt install vulkan-validationlayers)";
      if (mode == ValidationMode::kRequired) {
        return unavailable("Vulkan validation was requested but " + why);
      }
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        log(LogTopic::kWarning, "KILN_VALIDATE is set but " + why + "; running without validation");
      }
      validate = false;
    }
  }
  KILN_ASSIGN_OR_RETURN(const std::vector<std::string> extensions,
                        instance_extensions(validate ? kValidationLayer : nullptr));
  if (validate && !contains(extensions, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
    if (mode == ValidationMode::kRequired) {
      return unavailable("Vulkan validation was requested but VK_EXT_debug_utils is missing");
    }
    validate = false;
  }

  std::vector<const char*> enabled_extensions;
  std::vector<const char*> enabled_layers;
  VkInstanceCreateFlags flags = 0;
#ifdef VK_KHR_portability_enumeration
  // Lists portability implementations (MoltenVK) too; Kiln uses nothing they lack.
  if (contains(extensions, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    enabled_extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
#endif
  const VkDebugUtilsMessengerCreateInfoEXT debug_info = messenger_info(sink_.get());
  if (validate) {
    enabled_layers.push_back(kValidationLayer);
    enabled_extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "kiln";
  app.pEngineName = "kiln";
  app.engineVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
  app.apiVersion = VK_API_VERSION_1_2;

  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  // Chaining the messenger info also reports messages from vkCreate/DestroyInstance itself.
  info.pNext = validate ? &debug_info : nullptr;
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(enabled_layers.size());
  info.ppEnabledLayerNames = enabled_layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(enabled_extensions.size());
  info.ppEnabledExtensionNames = enabled_extensions.data();
  const VkResult result = vkCreateInstance(&info, nullptr, &instance_);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return unavailable(
        "no Vulkan driver found, or none supports Vulkan 1.2 (vkCreateInstance: "
        "VK_ERROR_INCOMPATIBLE_DRIVER)");
  }
  KILN_VK_RETURN_IF_ERROR(result);

  if (validate) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    destroy_messenger_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (create_messenger == nullptr || destroy_messenger_ == nullptr) {
      return unavailable("VK_EXT_debug_utils entry points are missing");
    }
    KILN_VK_RETURN_IF_ERROR(create_messenger(instance_, &debug_info, nullptr, &messenger_));
  }
  return Status::ok_status();
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) destroy_messenger_(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE && owned_) vkDestroyInstance(instance_, nullptr);
}

Expected<std::vector<VkPhysicalDevice>> Instance::physical_devices() const {
  uint32_t count = 0;
  KILN_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance_, &count, nullptr));
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0) {
    KILN_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance_, &count, devices.data()));
    devices.resize(count);
  }
  if (devices.empty()) {
    return unavailable("no Vulkan physical device found (is a Vulkan driver installed?)");
  }
  return devices;
}

}  // namespace kiln::vk
