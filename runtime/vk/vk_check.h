/// \file vk_check.h
/// Turns VkResult codes into kiln::Status. Every Vulkan call that returns a VkResult goes through
/// KILN_VK_RETURN_IF_ERROR, so a failure names the call, the source line and the result code.
#pragma once

#include <vulkan/vulkan.h>

#include "kiln/status.h"

namespace kiln::vk {

/// The StatusCode a failing VkResult maps to: out-of-memory codes are resource_exhausted,
/// missing drivers/layers/extensions are unavailable, everything else is internal.
StatusCode vk_status_code(VkResult result);

/// "vkCreateDevice(...) failed with VK_ERROR_OUT_OF_HOST_MEMORY (runtime/vk/x.cpp:12)".
Status vk_status(VkResult result, const char* call, const char* file, int line);

}  // namespace kiln::vk

/// Returns a Status from the enclosing function when `call` yields a negative (error) VkResult.
/// Positive codes (VK_INCOMPLETE, VK_TIMEOUT, ...) are success codes and pass through.
#define KILN_VK_RETURN_IF_ERROR(call)                                           \
  do {                                                                          \
    const VkResult kiln_vk_result_ = (call);                                    \
    if (kiln_vk_result_ < 0) {                                                  \
      return ::kiln::vk::vk_status(kiln_vk_result_, #call, __FILE__, __LINE__); \
    }                                                                           \
  } while (0)
