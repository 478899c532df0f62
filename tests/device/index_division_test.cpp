// kiln_udiv / kiln_umod (shaders/common/kiln_udiv.glsl), the division of an index by a size
// known at dispatch only that generated kernels use for symbolic shapes (Emitter::udiv), run on
// the device against the host's / and %: the edges of the 32-bit range (n at 0, 1, 2^31 and
// 2^32 - 1, d at 1, 2^31 and 2^32 - 1, n just below, at and above multiples of d, d = n and
// d > n) and random pairs at every magnitude, with the reciprocal floor((2^32 - 1) / d) that
// the sizes buffer passes (a divisor is never 0: Emitter::udiv's reciprocal is taken of at
// least 1, and an empty dim divides no index).
// Runs under the validation layer like every device test; skips without a Vulkan device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codegen/spirv.h"
#include "vk/device.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;

/// Each invocation divides one (n, d) pair: quotient and remainder to q and r (0xFFFFFFFF
/// beforehand: the host poisons them).
std::string division_shader() {
  Expected<std::string> helpers = embedded_shader("common/kiln_udiv.glsl");
  EXPECT_TRUE(helpers.ok()) << helpers.status().to_string();
  return "#version 450\nlayout(local_size_x = " + std::to_string(kLocalSize) +
         ") in;\n"
         "layout(std430, set = 0, binding = 0) readonly buffer In { uvec2 nd[]; };\n"
         "layout(std430, set = 0, binding = 1) buffer Out { uvec2 qr[]; };\n"
         "layout(push_constant) uniform PC { uint count; } pc;\n" +
         (helpers.ok() ? *helpers : std::string()) +
         "void main() {\n"
         "  const uint i = gl_GlobalInvocationID.x;\n"
         "  if (i >= pc.count) return;\n"
         "  const uint n = nd[i].x, d = nd[i].y, m = 0xFFFFFFFFu / d;\n"
         "  qr[i] = uvec2(kiln_udiv(n, d, m), kiln_umod(n, d, m));\n"
         "}\n";
}

std::vector<std::pair<uint32_t, uint32_t>> division_cases() {
  std::vector<std::pair<uint32_t, uint32_t>> cases;
  const uint32_t top = 0xFFFFFFFFu;
  const std::vector<uint32_t> divisors = {1u,          2u,          3u,          7u,       10u,
                                          64u,         65535u,      65536u,      65537u,   1000003u,
                                          0x7FFFFFFFu, 0x80000000u, 0x80000001u, top - 1u, top};
  for (uint32_t d : divisors) {
    for (uint32_t n : {0u, 1u, d - 1u, d, d + 1u, top, top - 1u, top - d, 0x80000000u})
      cases.emplace_back(n, d);
    for (uint32_t k : {2u, 3u, 1000u, 65535u}) {  // n around the multiples k * d that fit
      const uint64_t kd = uint64_t{k} * d;
      if (kd > top) continue;
      for (int64_t delta : {-1, 0, 1})
        if (int64_t(kd) + delta >= 0 && int64_t(kd) + delta <= int64_t(top))
          cases.emplace_back(static_cast<uint32_t>(int64_t(kd) + delta), d);
    }
  }
  std::mt19937 rng(20261207);
  for (int i = 0; i < 20000; ++i) {  // every magnitude of n and d
    const uint32_t n_bits = static_cast<uint32_t>(rng()), n_shift = rng() % 32;
    const uint32_t d_bits = static_cast<uint32_t>(rng()), d_shift = rng() % 32;
    const uint32_t n = n_bits >> n_shift, d = std::max(1u, d_bits >> d_shift);
    cases.emplace_back(n, d);
  }
  return cases;
}

TEST(DeviceIndexDivision, MatchesTheHostsDivisionAcrossTheRange) {
  auto device = vk::VulkanDevice::default_device();
  if (!device.ok()) GTEST_SKIP() << "no Vulkan device: " << device.status().to_string();
  vk::VulkanDevice& dev = **device;
  Expected<std::vector<uint32_t>> spirv = compile_glsl(division_shader(), "index_division");
  ASSERT_TRUE(spirv.ok()) << spirv.status().to_string();
  vk::PipelineDesc desc;
  desc.spirv = *spirv;
  desc.num_bindings = 2;
  desc.push_constant_bytes = sizeof(uint32_t);
  desc.label = "index_division";
  auto pipeline = dev.pipeline(desc);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().to_string();

  const std::vector<std::pair<uint32_t, uint32_t>> cases = division_cases();
  const auto count = static_cast<uint32_t>(cases.size());
  std::vector<uint32_t> nd, poison(2 * cases.size(), 0xFFFFFFFFu), qr(2 * cases.size());
  for (const auto& [n, d] : cases) nd.insert(nd.end(), {n, d});
  auto in = dev.allocate(nd.size() * sizeof(uint32_t));
  auto out = dev.allocate(poison.size() * sizeof(uint32_t));
  ASSERT_TRUE(in.ok() && out.ok());
  ASSERT_TRUE(dev.upload(*in, nd.data(), nd.size() * sizeof(uint32_t)).ok());
  ASSERT_TRUE(dev.upload(*out, poison.data(), poison.size() * sizeof(uint32_t)).ok());
  vk::Dispatch dispatch;
  dispatch.pipeline = *pipeline;
  dispatch.bindings = {*in, *out};
  dispatch.push_constants.resize(sizeof(count));
  std::memcpy(dispatch.push_constants.data(), &count, sizeof(count));
  dispatch.groups = {(count + kLocalSize - 1) / kLocalSize, 1, 1};
  const Status ran = dev.run(std::span(&dispatch, 1));
  ASSERT_TRUE(ran.ok()) << ran.to_string();
  ASSERT_TRUE(dev.download(*out, qr.data(), qr.size() * sizeof(uint32_t)).ok());
  int wrong = 0;
  for (size_t i = 0; i < cases.size() && wrong < 10; ++i) {
    const auto [n, d] = cases[i];
    if (qr[2 * i] == n / d && qr[2 * i + 1] == n % d) continue;
    ++wrong;
    ADD_FAILURE() << n << " / " << d << ": got " << qr[2 * i] << " rem " << qr[2 * i + 1]
                  << ", expected " << n / d << " rem " << n % d;
  }
  EXPECT_TRUE(dev.validation_messages().empty());
}

}  // namespace
}  // namespace kiln
