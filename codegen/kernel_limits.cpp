// kernel_resources / check_kernel_limits: a compiled kernel's workgroup size, shared memory and
// capabilities, read from its SPIR-V, against the target's limits.
#include "codegen/kernel_limits.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace kiln {
namespace {

// SPIR-V opcodes, capabilities and enumerants (SPIR-V 1.6 specification, section 3).
enum : uint32_t {
  kOpCapability = 17,
  kOpExecutionMode = 16,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeMatrix = 24,
  kOpTypeArray = 28,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstant = 43,
  kOpConstantComposite = 44,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpExecutionModeId = 331,
};
enum : uint32_t {
  kCapInt64 = 11,
  kCapGroupNonUniform = 61,
  kCapGroupNonUniformVote = 62,
  kCapGroupNonUniformShuffle = 65,
  kCapGroupNonUniformQuad = 68,
  kCapStorageBuffer16 = 4433,
  kCapUniformAndStorageBuffer16 = 4434,
  kCapStorageBuffer8 = 4448,
  kCapUniformAndStorageBuffer8 = 4449,
};
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kModeLocalSizeId = 38;
constexpr uint32_t kStorageWorkgroup = 4;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kBuiltInWorkgroupSize = 25;

}  // namespace

Expected<KernelResources> kernel_resources(std::span<const uint32_t> spirv) {
  if (spirv.size() < 5 || spirv[0] != 0x07230203u)
    return invalid_argument("kernel_resources: not a SPIR-V module");
  KernelResources r;
  std::unordered_map<uint32_t, uint64_t> type_bytes;  // id -> natural size
  std::unordered_map<uint32_t, uint32_t> pointee;     // Workgroup pointer type -> pointee
  std::unordered_map<uint32_t, uint32_t> constant;    // 32-bit integer constant values
  std::unordered_map<uint32_t, std::vector<uint32_t>> composite;
  std::vector<uint32_t> workgroup_vars;  // pointer types of Workgroup variables
  uint32_t workgroup_size_id = 0;        // decorated BuiltIn WorkgroupSize
  std::vector<uint32_t> local_size_ids;  // LocalSizeId operands
  uint64_t local[3] = {1, 1, 1};
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t count = spirv[i] >> 16, op = spirv[i] & 0xFFFFu;
    if (count == 0 || i + count > spirv.size())
      return invalid_argument("kernel_resources: truncated SPIR-V instruction");
    const uint32_t* w = &spirv[i];
    switch (op) {
      case kOpCapability:
        r.int64 |= w[1] == kCapInt64;
        r.storage16 |= w[1] == kCapStorageBuffer16 || w[1] == kCapUniformAndStorageBuffer16;
        r.storage8 |= w[1] == kCapStorageBuffer8 || w[1] == kCapUniformAndStorageBuffer8;
        r.subgroup_shuffle |= w[1] == kCapGroupNonUniformShuffle;
        r.subgroup_vote |= w[1] == kCapGroupNonUniformVote;
        r.subgroup_any |= w[1] >= kCapGroupNonUniform && w[1] <= kCapGroupNonUniformQuad;
        break;
      case kOpExecutionMode:
        if (count >= 6 && w[2] == kModeLocalSize)
          for (int d = 0; d < 3; ++d) local[d] = w[3 + d];
        break;
      case kOpExecutionModeId:
        if (count >= 6 && w[2] == kModeLocalSizeId) local_size_ids.assign(w + 3, w + 6);
        break;
      case kOpDecorate:
        if (count >= 4 && w[2] == kDecorationBuiltIn && w[3] == kBuiltInWorkgroupSize)
          workgroup_size_id = w[1];
        break;
      case kOpTypeBool:
        type_bytes[w[1]] = 4;
        break;
      case kOpTypeInt:
      case kOpTypeFloat:
        type_bytes[w[1]] = w[2] / 8;
        break;
      case kOpTypeVector:
      case kOpTypeMatrix:
        type_bytes[w[1]] = type_bytes[w[2]] * w[3];
        break;
      case kOpTypeArray:
        type_bytes[w[1]] = type_bytes[w[2]] * constant[w[3]];
        break;
      case kOpTypeStruct: {
        uint64_t bytes = 0;
        for (uint32_t m = 2; m < count; ++m) bytes += type_bytes[w[m]];
        type_bytes[w[1]] = bytes;
        break;
      }
      case kOpTypePointer:
        if (w[2] == kStorageWorkgroup) pointee[w[1]] = w[3];
        break;
      case kOpConstant:
      case kOpSpecConstant:
        if (count >= 4) constant[w[2]] = w[3];
        break;
      case kOpConstantComposite:
      case kOpSpecConstantComposite:
        composite[w[2]].assign(w + 3, w + count);
        break;
      case kOpVariable:
        if (count >= 4 && w[3] == kStorageWorkgroup) workgroup_vars.push_back(w[1]);
        break;
      default:
        break;
    }
    i += count;
  }
  if (!local_size_ids.empty())
    for (int d = 0; d < 3; ++d) local[d] = constant[local_size_ids[d]];
  if (workgroup_size_id != 0 && composite[workgroup_size_id].size() == 3)
    for (int d = 0; d < 3; ++d) local[d] = constant[composite[workgroup_size_id][d]];
  r.invocations = static_cast<uint32_t>(local[0] * local[1] * local[2]);
  for (uint32_t ptr : workgroup_vars) r.shared_bytes += type_bytes[pointee[ptr]];
  return r;
}

Status check_kernel_limits(const Kernel& kernel, const TargetCaps& caps) {
  KILN_ASSIGN_OR_RETURN(const KernelResources r, kernel_resources(kernel.spirv));
  auto fail = [&](const std::string& what) {
    return internal_error("kernel " + kernel.name + " " + what +
                          " (a codegen bug; KILN_DEVICE_LIMITS may have lowered the limit)");
  };
  if (r.invocations > caps.max_workgroup_invocations)
    return fail("has " + std::to_string(r.invocations) + " invocations per workgroup; the device " +
                "allows " + std::to_string(caps.max_workgroup_invocations));
  if (r.shared_bytes > caps.max_shared_memory)
    return fail("uses " + std::to_string(r.shared_bytes) + " bytes of shared memory; the device " +
                "allows " + std::to_string(caps.max_shared_memory));
  if (r.int64 && !caps.shader_int64) return fail("uses int64 arithmetic; the device has none");
  if (r.storage16 && !caps.storage_buffer_16bit)
    return fail("uses 16-bit storage buffers; the device has none");
  if (r.storage8 && !caps.storage_buffer_8bit)
    return fail("uses 8-bit storage buffers; the device has none");
  if (r.subgroup_shuffle && !caps.subgroup_shuffle)
    return fail("uses subgroup shuffles; the device has none");
  if (r.subgroup_vote && !caps.subgroup_vote)
    return fail("uses subgroup votes; the device has none");
  if (r.subgroup_any && caps.subgroup_size == 0)
    return fail("uses subgroup operations; the device has none");
  return Status::ok_status();
}

}  // namespace kiln
