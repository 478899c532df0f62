/// \file kernel_limits.h
/// What a compiled kernel asks of its device, read from its SPIR-V: workgroup size, shared
/// (Workgroup storage class) memory and capabilities; and the check of those against the
/// target's limits. The runtime runs the check on every compiled kernel, so a kernel that
/// exceeds a device's limits (real, or lowered by KILN_DEVICE_LIMITS) is an error rather
/// than undefined behaviour on the device.
#pragma once

#include <cstdint>
#include <span>

#include "codegen/kernel.h"
#include "kiln/status.h"

namespace kiln {

struct KernelResources {
  uint32_t invocations = 1;       // local size x * y * z
  uint64_t shared_bytes = 0;      // all Workgroup variables (natural sizes, no padding)
  bool int64 = false;             // Int64 capability
  bool storage16 = false;         // StorageBuffer16BitAccess (or UniformAndStorage...)
  bool storage8 = false;          // StorageBuffer8BitAccess (or UniformAndStorage...)
  bool subgroup_shuffle = false;  // GroupNonUniformShuffle
  bool subgroup_vote = false;     // GroupNonUniformVote
  bool subgroup_any = false;      // any GroupNonUniform* capability
};

/// Reads `spirv`. invalid_argument when it is not a SPIR-V module Kiln can read.
Expected<KernelResources> kernel_resources(std::span<const uint32_t> spirv);

/// internal_error naming the kernel and the first limit it exceeds; ok when it fits `caps`.
Status check_kernel_limits(const Kernel& kernel, const TargetCaps& caps);

}  // namespace kiln
