// kernel_resources reads a compiled kernel's workgroup size, shared memory and capabilities from
// its SPIR-V; check_kernel_limits compares them with a target's limits (the runtime checks every
// compiled kernel, so KILN_DEVICE_LIMITS catches kernels over a lowered limit).
#include "codegen/kernel_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "codegen/spirv.h"

namespace kiln {
namespace {

Kernel compiled(const std::string& name, const std::string& glsl) {
  Kernel k;
  k.name = name;
  Expected<std::vector<uint32_t>> spirv = compile_glsl(glsl, name);
  EXPECT_TRUE(spirv.ok()) << spirv.status().to_string();
  if (spirv.ok()) k.spirv = *spirv;
  return k;
}

const char* kShared = R"(#version 450
layout(local_size_x = 96, local_size_y = 2) in;
layout(std430, binding = 0) buffer Out { float o[]; };
shared float a[100];
shared vec4 b[8];
struct Pair { float x; uint y; };
shared Pair c[3];
void main() {
  a[gl_LocalInvocationIndex % 100u] = 1.0;
  b[gl_LocalInvocationIndex % 8u] = vec4(2.0);
  c[gl_LocalInvocationIndex % 3u].x = 3.0;
  barrier();
  o[gl_GlobalInvocationID.x] = a[0] + b[1].y + c[2].x;
}
)";

const char* kInt64Shuffle = R"(#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { int64_t o[]; };
void main() {
  const float f = subgroupShuffle(float(gl_GlobalInvocationID.x), 0u);
  o[gl_GlobalInvocationID.x] = int64_t(f) * 3l;
}
)";

TEST(KernelLimits, ReadsWorkgroupSizeAndSharedMemory) {
  const Kernel k = compiled("k_shared", kShared);
  Expected<KernelResources> r = kernel_resources(k.spirv);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->invocations, 192u);
  EXPECT_EQ(r->shared_bytes, 100u * 4 + 8 * 16 + 3 * 8);
  EXPECT_FALSE(r->int64);
  EXPECT_FALSE(r->subgroup_any);

  TargetCaps caps = TargetCaps::generic();
  EXPECT_TRUE(check_kernel_limits(k, caps).ok());
  caps.max_workgroup_invocations = 128;
  Status st = check_kernel_limits(k, caps);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("k_shared has 192 invocations"), std::string::npos) << st.message();
  caps = TargetCaps::generic();
  caps.max_shared_memory = 512;
  st = check_kernel_limits(k, caps);
  EXPECT_NE(st.message().find("552 bytes of shared memory"), std::string::npos) << st.message();
}

TEST(KernelLimits, ReadsCapabilities) {
  const Kernel k = compiled("k_i64", kInt64Shuffle);
  Expected<KernelResources> r = kernel_resources(k.spirv);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->invocations, 32u);
  EXPECT_EQ(r->shared_bytes, 0u);
  EXPECT_TRUE(r->int64);
  EXPECT_TRUE(r->subgroup_shuffle);
  EXPECT_TRUE(r->subgroup_any);

  TargetCaps caps = TargetCaps::generic();
  caps.shader_int64 = true;
  caps.subgroup_shuffle = true;
  EXPECT_TRUE(check_kernel_limits(k, caps).ok());
  caps.shader_int64 = false;
  EXPECT_NE(check_kernel_limits(k, caps).message().find("int64"), std::string::npos);
  caps.shader_int64 = true;
  caps.subgroup_shuffle = false;
  EXPECT_NE(check_kernel_limits(k, caps).message().find("subgroup shuffles"), std::string::npos);
}

TEST(KernelLimits, RejectsWhatIsNotSpirv) {
  const std::vector<uint32_t> junk = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(kernel_resources(junk).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
