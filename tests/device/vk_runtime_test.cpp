// Device tests of the Vulkan runtime (runtime/vk): enumeration, selection, the sub-allocator,
// transfers, pipelines from real SPIR-V, submission with barriers and timestamps, and error
// paths. Every test runs under the Khronos validation layer (ctest sets KILN_VALIDATE=1) and
// fails on any validation error. Without a Vulkan device the tests skip.
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "vk/device.h"
#include "vk/instance.h"  // Instance, total_validation_errors()

namespace kiln::vk {
namespace {

// y[i] = x[i] * kScale + pc.offset for i < pc.n; workgroup size and kScale are spec constants.
constexpr const char* kAffineShader = R"(#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const float kScale = 1.0;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PC { float offset; uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) y[i] = x[i] * kScale + pc.offset;
}
)";
constexpr uint32_t kLocalSize = 64;
constexpr float kScale = 2.0f;

struct AffinePush {
  float offset;
  uint32_t n;
};

/// GLSL compute shader -> SPIR-V 1.5 for Vulkan 1.2, with glslang (as codegen does).
std::vector<uint32_t> compile_glsl(const char* source) {
  static const bool initialized = glslang::InitializeProcess();
  EXPECT_TRUE(initialized);
  glslang::TShader shader(EShLangCompute);
  shader.setStrings(&source, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_2);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_5);
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  if (!shader.parse(GetDefaultResources(), 450, false, messages)) {
    ADD_FAILURE() << "glslang: " << shader.getInfoLog();
    return {};
  }
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) {
    ADD_FAILURE() << "glslang link: " << program.getInfoLog();
    return {};
  }
  std::vector<unsigned int> words;
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), words);
  return {words.begin(), words.end()};
}

const std::vector<uint32_t>& affine_spirv() {
  static const std::vector<uint32_t> words = compile_glsl(kAffineShader);
  return words;
}

PipelineDesc affine_desc(const std::string& cache_key) {
  PipelineDesc desc;
  desc.spirv = affine_spirv();
  desc.num_bindings = 2;
  desc.push_constant_bytes = sizeof(AffinePush);
  desc.spec_constants = {{0, kLocalSize}, {1, std::bit_cast<uint32_t>(kScale)}};
  desc.label = "affine";
  desc.cache_key = cache_key;
  return desc;
}

Dispatch affine_dispatch(const Pipeline* pipeline, BufferRef x, BufferRef y, uint32_t n,
                         float offset) {
  Dispatch d;
  d.pipeline = pipeline;
  d.bindings = {std::move(x), std::move(y)};
  const AffinePush push{offset, n};
  d.push_constants.resize(sizeof(push));
  std::memcpy(d.push_constants.data(), &push, sizeof(push));
  d.groups = {(n + kLocalSize - 1) / kLocalSize, 1, 1};
  return d;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

BufferRef must_allocate(VulkanDevice& device, size_t bytes) {
  auto buffer = device.allocate(bytes);
  EXPECT_TRUE(buffer.ok()) << buffer.status().to_string();
  return buffer.ok() ? *buffer : nullptr;
}

BufferRef upload_floats(VulkanDevice& device, const std::vector<float>& values) {
  BufferRef buffer = must_allocate(device, values.size() * sizeof(float));
  EXPECT_TRUE(device.upload(buffer, values.data(), values.size() * sizeof(float)).ok());
  return buffer;
}

/// A buffer of `n` floats whose bytes are all 0xFF (a NaN pattern no kernel writes by chance).
BufferRef poisoned_floats(VulkanDevice& device, uint32_t n) {
  std::vector<uint8_t> poison(n * sizeof(float), 0xFF);
  BufferRef buffer = must_allocate(device, poison.size());
  EXPECT_TRUE(device.upload(buffer, poison.data(), poison.size()).ok());
  return buffer;
}

std::vector<float> download_floats(VulkanDevice& device, const BufferRef& buffer, uint32_t n) {
  std::vector<float> values(n);
  const Status status = device.download(buffer, values.data(), n * sizeof(float));
  EXPECT_TRUE(status.ok()) << status.to_string();
  return values;
}

/// Upload/download round trip of `bytes` with a position-dependent pattern.
void expect_round_trip(VulkanDevice& device, size_t bytes) {
  SCOPED_TRACE("bytes = " + std::to_string(bytes));
  auto buffer = device.allocate(bytes);
  ASSERT_TRUE(buffer.ok()) << buffer.status().to_string();
  EXPECT_EQ((*buffer)->size(), bytes == 0 ? 4u : bytes);
  EXPECT_EQ((*buffer)->mapped() != nullptr, device.info().unified_memory);
  std::vector<uint8_t> data(bytes), back(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>((i * 131 + bytes) >> 1);
  ASSERT_TRUE(device.upload(*buffer, data.data(), bytes).ok());
  ASSERT_TRUE(device.download(*buffer, back.data(), bytes).ok());
  EXPECT_TRUE(data == back);
}

/// y = x*2+offset through run(), checked element by element against a poisoned output.
void expect_affine_kernel(VulkanDevice& device, const std::string& cache_key, uint32_t n) {
  auto pipeline = device.pipeline(affine_desc(cache_key));
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().to_string();
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = 0.5f * static_cast<float>(i) - 7.0f;
  BufferRef xb = upload_floats(device, x);
  BufferRef yb = poisoned_floats(device, n);
  const Dispatch dispatch = affine_dispatch(*pipeline, xb, yb, n, 3.0f);
  const Status status = device.run(std::span(&dispatch, 1));
  ASSERT_TRUE(status.ok()) << status.to_string();
  const std::vector<float> y = download_floats(device, yb, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], x[i] * kScale + 3.0f) << "at " << i;
  }
}

class VkRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = VulkanDevice::default_device();
    if (!device.ok()) GTEST_SKIP() << "no Vulkan device: " << device.status().to_string();
    device_ = *device;
  }
  void TearDown() override {
    if (device_ == nullptr) return;
    const std::vector<std::string> messages = device_->validation_messages();
    EXPECT_TRUE(messages.empty()) << join(messages);
    EXPECT_EQ(device_->stats().validation_errors, 0u);
  }
  VulkanDevice& device() { return *device_; }

  std::shared_ptr<VulkanDevice> device_;
};

TEST_F(VkRuntimeTest, EnumerateReportsSaneDevices) {
  auto devices = VulkanDevice::enumerate();
  ASSERT_TRUE(devices.ok()) << devices.status().to_string();
  ASSERT_GE(devices->size(), 1u);
  bool default_listed = false;
  for (uint32_t i = 0; i < devices->size(); ++i) {
    const DeviceInfo& d = (*devices)[i];
    SCOPED_TRACE(d.name);
    EXPECT_EQ(d.index, i);
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.vendor.empty());
    EXPECT_TRUE(d.type == "discrete" || d.type == "integrated" || d.type == "virtual" ||
                d.type == "cpu" || d.type == "other");
    EXPECT_EQ(d.api_version.rfind("1.", 0), 0u) << d.api_version;
    EXPECT_GT(d.subgroup_size, 0u);
    EXPECT_EQ(std::popcount(d.subgroup_size), 1);
    EXPECT_GE(d.max_workgroup_invocations, 128u);  // Vulkan minimums
    EXPECT_GE(d.max_workgroup_size[0], 128u);
    EXPECT_GE(d.max_shared_memory, 16384u);
    EXPECT_GE(d.max_storage_buffer_range, 1ull << 27);
    EXPECT_GE(d.max_push_constants_size, 128u);
    EXPECT_GT(d.min_storage_buffer_offset_alignment, 0u);
    EXPECT_TRUE(d.subgroup_basic);
    default_listed |= d.name == device().info().name;
  }
  EXPECT_TRUE(default_listed);
  auto chosen = VulkanDevice::select_device(*devices);
  ASSERT_TRUE(chosen.ok()) << chosen.status().to_string();
  EXPECT_EQ((*devices)[*chosen].name, device().info().name);
}

TEST_F(VkRuntimeTest, UploadDownloadRoundTrip) {
  const uint64_t blocks_before = device().stats().blocks_allocated;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{1000}, size_t{1} << 20}) {
    expect_round_trip(device(), bytes);
  }
  // Larger than the default 64 MiB block: gets a block of its own.
  expect_round_trip(device(), (size_t{64} << 20) + 4096);
  EXPECT_EQ(device().stats().blocks_allocated, blocks_before);
}

TEST_F(VkRuntimeTest, SmallAllocationsReuseMemory) {
  const DeviceStats before = device().stats();
  std::vector<BufferRef> buffers;
  for (int i = 0; i < 500; ++i) buffers.push_back(must_allocate(device(), 1 + (i * 37) % 3000));
  EXPECT_GT(device().stats().bytes_allocated, before.bytes_allocated);
  EXPECT_EQ(device().stats().blocks_allocated, before.blocks_allocated + 1);

  // Every buffer is a separate range: write a distinct pattern to each, then read all back.
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::vector<uint8_t> fill(buffers[i]->size(), static_cast<uint8_t>(i));
    ASSERT_TRUE(device().upload(buffers[i], fill.data(), fill.size()).ok());
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::vector<uint8_t> back(buffers[i]->size());
    ASSERT_TRUE(device().download(buffers[i], back.data(), back.size()).ok());
    EXPECT_TRUE(std::all_of(back.begin(), back.end(),
                            [&](uint8_t b) { return b == static_cast<uint8_t>(i); }))
        << "buffer " << i << " was overwritten";
  }

  // Free every other buffer and allocate again: the holes are reused, no new block.
  for (size_t i = 0; i < buffers.size(); i += 2) buffers[i].reset();
  const uint64_t after_free = device().stats().bytes_allocated;
  for (size_t i = 0; i < buffers.size(); i += 2) buffers[i] = must_allocate(device(), 64);
  EXPECT_GT(device().stats().bytes_allocated, after_free);
  EXPECT_EQ(device().stats().blocks_allocated, before.blocks_allocated + 1);

  buffers.clear();
  EXPECT_EQ(device().stats().bytes_allocated, before.bytes_allocated);
  EXPECT_EQ(device().stats().blocks_allocated, before.blocks_allocated);

  // After coalescing, one buffer of nearly a whole block fits again.
  std::vector<BufferRef> small;
  for (int i = 0; i < 100; ++i) small.push_back(must_allocate(device(), 4096));
  for (size_t i = 0; i < small.size(); i += 2) small[i].reset();
  for (size_t i = 1; i < small.size(); i += 2) small[i].reset();
  BufferRef big = must_allocate(device(), 32u << 20);
  EXPECT_EQ(device().stats().blocks_allocated, before.blocks_allocated + 1);
  big.reset();
  EXPECT_EQ(device().stats().bytes_allocated, before.bytes_allocated);
}

TEST_F(VkRuntimeTest, HugeAllocationIsResourceExhausted) {
  auto buffer = device().allocate(size_t{1} << 46);  // 64 TiB
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted) << buffer.status().to_string();
}

TEST_F(VkRuntimeTest, ComputePipelineRuns) {
  expect_affine_kernel(device(), "affine-compute-test", 1000);
  expect_affine_kernel(device(), "affine-compute-test", 1);
}

TEST_F(VkRuntimeTest, SameCacheKeyCreatesOnePipeline) {
  const DeviceStats before = device().stats();
  auto first = device().pipeline(affine_desc("affine-cache-test"));
  auto second = device().pipeline(affine_desc("affine-cache-test"));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(device().stats().pipelines_created, before.pipelines_created + 1);
  EXPECT_EQ(device().stats().pipeline_cache_hits, before.pipeline_cache_hits + 1);

  // Same key but a different interface is a caller bug, reported rather than reused.
  PipelineDesc other = affine_desc("affine-cache-test");
  other.num_bindings = 3;
  auto mismatch = device().pipeline(other);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(VkRuntimeTest, DependentDispatchesSeeEachOthersWrites) {
  auto pipeline = device().pipeline(affine_desc("affine-chain-test"));
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().to_string();
  const uint32_t n = 1 << 18;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000);
  BufferRef xb = upload_floats(device(), x);
  BufferRef yb = poisoned_floats(device(), n);
  BufferRef zb = poisoned_floats(device(), n);
  const DeviceStats before = device().stats();
  const std::vector<Dispatch> dispatches = {affine_dispatch(*pipeline, xb, yb, n, 1.0f),
                                            affine_dispatch(*pipeline, yb, zb, n, -5.0f)};
  const Status status = device().run(dispatches);
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(device().stats().dispatches, before.dispatches + 2);
  EXPECT_EQ(device().stats().submissions, before.submissions + 1);
  const std::vector<float> z = download_floats(device(), zb, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(z[i], (x[i] * kScale + 1.0f) * kScale - 5.0f) << "at " << i;
  }
}

TEST_F(VkRuntimeTest, TimingsAreReported) {
  auto pipeline = device().pipeline(affine_desc("affine-timing-test"));
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().to_string();
  const uint32_t n = 4096;
  BufferRef xb = upload_floats(device(), std::vector<float>(n, 1.0f));
  BufferRef yb = poisoned_floats(device(), n);
  std::vector<Dispatch> dispatches = {affine_dispatch(*pipeline, xb, yb, n, 0.0f),
                                      affine_dispatch(*pipeline, xb, yb, n, 0.0f),
                                      affine_dispatch(*pipeline, yb, xb, n, 0.0f)};
  dispatches[1].groups = {0, 1, 1};  // empty grid: skipped, not counted
  const DeviceStats before = device().stats();
  std::vector<DispatchTiming> timings;
  const Status status = device().run(dispatches, &timings);
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(device().stats().dispatches, before.dispatches + 2);
  if (device().info().timestamp_period_ns == 0) {
    EXPECT_TRUE(timings.empty());
    GTEST_SKIP() << "no timestamps on this queue";
  }
  ASSERT_EQ(timings.size(), dispatches.size());
  for (const DispatchTiming& t : timings) {
    EXPECT_EQ(t.label, "affine");
    EXPECT_GE(t.gpu_ms, 0.0);
    EXPECT_LT(t.gpu_ms, 60e3);
  }
  EXPECT_EQ(timings[1].gpu_ms, 0.0);
  const std::vector<float> x = download_floats(device(), xb, n);
  EXPECT_EQ(x[n - 1], 4.0f);  // (1*2+0)*2+0
}

TEST_F(VkRuntimeTest, BogusSelectorIsInvalidArgumentNamingDevices) {
  DeviceOptions options;
  options.selector = "no-such-gpu-anywhere";
  auto created = VulkanDevice::create(options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find(device().info().name), std::string::npos)
      << created.status().message();
  EXPECT_NE(created.status().message().find("no-such-gpu-anywhere"), std::string::npos);

  options.selector = "999";
  created = VulkanDevice::create(options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(VkRuntimeTest, PipelineBatchBuildsMissesConcurrentlyAndAllOrNothing) {
  const DeviceStats before = device().stats();
  const std::vector<PipelineDesc> descs = {affine_desc("batch-a"), affine_desc("batch-b"),
                                           affine_desc("batch-a"), affine_desc("batch-c")};
  auto built = device().pipelines(descs);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  ASSERT_EQ(built->size(), 4u);
  EXPECT_EQ((*built)[0], (*built)[2]);  // one pipeline per key, within a batch too
  EXPECT_NE((*built)[0], (*built)[1]);
  EXPECT_EQ(device().stats().pipelines_created, before.pipelines_created + 3);
  auto again = device().pipeline(affine_desc("batch-c"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, (*built)[3]);

  // Every pipeline of a batch works.
  auto x = device().allocate(4 * 64);
  auto y = device().allocate(4 * 64);
  ASSERT_TRUE(x.ok() && y.ok());
  std::vector<Dispatch> ds;
  for (const Pipeline* p : *built) ds.push_back(affine_dispatch(p, *x, *y, 64, 1.f));
  EXPECT_TRUE(device().run(ds).ok());

  // A bad desc fails the batch and keeps none of its misses.
  PipelineDesc bad = affine_desc("batch-bad");
  bad.spirv = {1, 2, 3, 4, 5, 6};
  bad.label = "batch-bad";
  const DeviceStats mid = device().stats();
  auto failed = device().pipelines(std::vector<PipelineDesc>{affine_desc("batch-d"), bad});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("batch-bad"), std::string::npos)
      << failed.status().to_string();
  EXPECT_EQ(device().stats().pipelines_created, mid.pipelines_created);
}

TEST_F(VkRuntimeTest, InvalidSpirvIsAnError) {
  PipelineDesc desc = affine_desc("bogus-spirv-test");
  desc.spirv = {1, 2, 3, 4, 5, 6, 7, 8};
  auto bogus = device().pipeline(desc);
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.status().code(), StatusCode::kInvalidArgument) << bogus.status().to_string();

  desc.spirv.clear();
  EXPECT_FALSE(device().pipeline(desc).ok());

  desc.spirv = affine_spirv();
  desc.spirv.back() |= 0xFFFF0000u;  // last instruction claims more words than there are
  EXPECT_FALSE(device().pipeline(desc).ok());

  desc.spirv = affine_spirv();
  desc.entry = "not_main";
  auto no_entry = device().pipeline(desc);
  ASSERT_FALSE(no_entry.ok());
  EXPECT_NE(no_entry.status().message().find("not_main"), std::string::npos);
}

TEST_F(VkRuntimeTest, MalformedDispatchIsAnError) {
  auto pipeline = device().pipeline(affine_desc("affine-malformed-test"));
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().to_string();
  BufferRef xb = must_allocate(device(), 64);
  Dispatch d = affine_dispatch(*pipeline, xb, xb, 16, 0.0f);
  d.bindings.pop_back();
  EXPECT_EQ(device().run(std::span(&d, 1)).code(), StatusCode::kInvalidArgument);
  d = affine_dispatch(*pipeline, xb, xb, 16, 0.0f);
  d.push_constants.pop_back();
  EXPECT_EQ(device().run(std::span(&d, 1)).code(), StatusCode::kInvalidArgument);
  d = affine_dispatch(*pipeline, xb, nullptr, 16, 0.0f);
  EXPECT_EQ(device().run(std::span(&d, 1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device().upload(xb, nullptr, 65).code(), StatusCode::kInvalidArgument);
}

/// A separate device's whole life, destruction included, must be free of validation errors
/// (leaked objects are reported when the VkDevice is destroyed).
void expect_clean_device_lifecycle(bool disable_unified_memory) {
  const uint64_t errors_before = total_validation_errors();
  if (disable_unified_memory) setenv("KILN_DISABLE_UNIFIED_MEMORY", "1", 1);
  auto created = VulkanDevice::create(DeviceOptions{});
  unsetenv("KILN_DISABLE_UNIFIED_MEMORY");
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  std::shared_ptr<VulkanDevice> device = std::move(*created);  // the only reference
  if (disable_unified_memory) {
    EXPECT_FALSE(device->info().unified_memory);
  }
  for (size_t bytes : {size_t{0}, size_t{3}, size_t{1} << 20}) expect_round_trip(*device, bytes);
  expect_affine_kernel(*device, "affine-lifecycle", 777);
  BufferRef survivor = must_allocate(*device, 1024);  // outlives the device handle below
  EXPECT_TRUE(device->validation_messages().empty()) << join(device->validation_messages());
  device.reset();
  survivor.reset();  // the VkDevice is destroyed here, after its last block
  EXPECT_EQ(total_validation_errors(), errors_before);
}

TEST_F(VkRuntimeTest, SeparateDeviceLifecycleIsClean) {
  expect_clean_device_lifecycle(false);
}

TEST_F(VkRuntimeTest, StagingPathWithoutUnifiedMemory) {
  expect_clean_device_lifecycle(true);
}

TEST_F(VkRuntimeTest, ValidationErrorsAreCaptured) {
  // A private validating instance and a deliberately invalid call (an undefined VkFormat): the
  // messenger must record it. The default device is not involved, so TearDown stays clean.
  auto instance = Instance::create(ValidationMode::kRequired);
  if (!instance.ok() && instance.status().code() == StatusCode::kUnavailable) {
    GTEST_SKIP() << instance.status().to_string();  // no validation layer installed
  }
  ASSERT_TRUE(instance.ok()) << instance.status().to_string();
  auto physical = (*instance)->physical_devices();
  ASSERT_TRUE(physical.ok()) << physical.status().to_string();
  const uint64_t total_before = total_validation_errors();
  VkFormatProperties properties{};
  vkGetPhysicalDeviceFormatProperties((*physical)[0], static_cast<VkFormat>(0x7FFFFFF0),
                                      &properties);
  EXPECT_GE((*instance)->validation_errors(), 1u);
  ASSERT_FALSE((*instance)->validation_messages().empty());
  EXPECT_NE((*instance)->validation_messages()[0].find("format"), std::string::npos);
  EXPECT_GT(total_validation_errors(), total_before);
}

TEST_F(VkRuntimeTest, ExplicitValidationWorks) {
  DeviceOptions options;
  options.validation = true;
  auto created = VulkanDevice::create(options);
  if (!created.ok() && created.status().code() == StatusCode::kUnavailable) {
    // Only a missing layer may fail here, and it must say so.
    EXPECT_NE(created.status().message().find("VK_LAYER_KHRONOS_validation"), std::string::npos);
    GTEST_SKIP() << created.status().to_string();
  }
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  EXPECT_EQ((*created)->info().name, device().info().name);
  EXPECT_EQ((*created)->stats().validation_errors, 0u);
}

}  // namespace
}  // namespace kiln::vk
