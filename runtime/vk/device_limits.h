/// \file device_limits.h
/// KILN_DEVICE_LIMITS (and DeviceOptions::limits): lowers what Kiln believes about the device it
/// opens, to emulate a smaller GPU on any driver. No Vulkan types here.
///
/// Syntax: comma-separated `key=value` pairs, e.g.
///   invocations=128,shared=16384,subgroup=4,int64=0,float16=0,int8=0,storage16=0,unified=0
/// Keys: invocations (maxComputeWorkGroupInvocations, also caps each workgroup dimension),
/// shared (bytes of shared memory per workgroup), subgroup (the subgroup size Kiln assumes, a
/// power of two; 0: no subgroup operations), int64, float16 (shaderFloat16 and 16-bit storage),
/// storage16, int8 (shaderInt8 and 8-bit storage), storage8 and unified (0: the discrete-GPU
/// memory path, with device-local buffers and staging copies). Feature keys take 0 or 1; 1
/// keeps what the device has. A limit never raises a value: where the device's own is lower,
/// it stays. Bad syntax, an unknown or repeated key is an invalid_argument error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/status.h"
#include "vk/device.h"

namespace kiln::vk {

struct DeviceLimits {
  std::optional<uint32_t> invocations;
  std::optional<uint32_t> shared;
  std::optional<uint32_t> subgroup;
  std::optional<uint32_t> texels;  // maxTexelBufferElements (SwiftShader: 65536)
  std::optional<bool> int64;
  std::optional<bool> float16;
  std::optional<bool> storage16;
  std::optional<bool> int8;
  std::optional<bool> storage8;
  std::optional<bool> unified;

  bool empty() const;
  /// The canonical text: every set key in the order above ("invocations=128,int64=0").
  std::string str() const;
  /// Both sets of limits: the lower value where both set a key.
  DeviceLimits merged(const DeviceLimits& other) const;
};

/// Parses `text` (empty: no limits). `source` names where the text came from in errors
/// ("KILN_DEVICE_LIMITS").
Expected<DeviceLimits> parse_device_limits(std::string_view text, std::string_view source);

/// KILN_DEVICE_LIMITS parsed (no limits when unset or empty).
Expected<DeviceLimits> device_limits_from_env();

/// Lowers `info` to `limits` and records what was applied in DeviceInfo::limits (appended to
/// any earlier override). Values the device already has lower stay.
void apply_device_limits(const DeviceLimits& limits, DeviceInfo& info);

}  // namespace kiln::vk
