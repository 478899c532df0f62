#include "vk/vk_check.h"

#include <string>
#include <string_view>

#include "vk/device.h"

namespace kiln::vk {

// Result codes present in every Vulkan 1.2/1.3 header Kiln builds against.
#define KILN_VK_RESULTS(X)                   \
  X(VK_SUCCESS)                              \
  X(VK_NOT_READY)                            \
  X(VK_TIMEOUT)                              \
  X(VK_EVENT_SET)                            \
  X(VK_EVENT_RESET)                          \
  X(VK_INCOMPLETE)                           \
  X(VK_ERROR_OUT_OF_HOST_MEMORY)             \
  X(VK_ERROR_OUT_OF_DEVICE_MEMORY)           \
  X(VK_ERROR_INITIALIZATION_FAILED)          \
  X(VK_ERROR_DEVICE_LOST)                    \
  X(VK_ERROR_MEMORY_MAP_FAILED)              \
  X(VK_ERROR_LAYER_NOT_PRESENT)              \
  X(VK_ERROR_EXTENSION_NOT_PRESENT)          \
  X(VK_ERROR_FEATURE_NOT_PRESENT)            \
  X(VK_ERROR_INCOMPATIBLE_DRIVER)            \
  X(VK_ERROR_TOO_MANY_OBJECTS)               \
  X(VK_ERROR_FORMAT_NOT_SUPPORTED)           \
  X(VK_ERROR_FRAGMENTED_POOL)                \
  X(VK_ERROR_UNKNOWN)                        \
  X(VK_ERROR_OUT_OF_POOL_MEMORY)             \
  X(VK_ERROR_INVALID_EXTERNAL_HANDLE)        \
  X(VK_ERROR_FRAGMENTATION)                  \
  X(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) \
  X(VK_PIPELINE_COMPILE_REQUIRED)            \
  X(VK_ERROR_SURFACE_LOST_KHR)               \
  X(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)       \
  X(VK_SUBOPTIMAL_KHR)                       \
  X(VK_ERROR_OUT_OF_DATE_KHR)                \
  X(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)       \
  X(VK_ERROR_VALIDATION_FAILED_EXT)          \
  X(VK_ERROR_INVALID_SHADER_NV)              \
  X(VK_ERROR_NOT_PERMITTED_KHR)              \
  X(VK_THREAD_IDLE_KHR)                      \
  X(VK_THREAD_DONE_KHR)                      \
  X(VK_OPERATION_DEFERRED_KHR)               \
  X(VK_OPERATION_NOT_DEFERRED_KHR)

const char* vk_result_name(int32_t result) {
  switch (static_cast<VkResult>(result)) {
#define KILN_VK_RESULT_CASE(name) \
  case name:                      \
    return #name;
    KILN_VK_RESULTS(KILN_VK_RESULT_CASE)
#undef KILN_VK_RESULT_CASE
    default:
      break;
  }
  return "VK_RESULT_UNKNOWN";
}

StatusCode vk_status_code(VkResult result) {
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return StatusCode::kResourceExhausted;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

namespace {

// Shortens an absolute __FILE__ to its path from the source tree ("runtime/vk/x.cpp").
std::string_view short_file(std::string_view file) {
  for (std::string_view root : {"/runtime/", "/tools/", "/tests/"}) {
    const size_t pos = file.rfind(root);
    if (pos != std::string_view::npos) return file.substr(pos + 1);
  }
  const size_t slash = file.rfind('/');
  return slash == std::string_view::npos ? file : file.substr(slash + 1);
}

}  // namespace

Status vk_status(VkResult result, const char* call, const char* file, int line) {
  std::string message = call;
  message += " failed with ";
  message += vk_result_name(static_cast<int32_t>(result));
  message += " (";
  message += short_file(file);
  message += ":";
  message += std::to_string(line);
  message += ")";
  return Status(vk_status_code(result), std::move(message));
}

}  // namespace kiln::vk
