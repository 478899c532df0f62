// KILN_DEVICE_LIMITS / DeviceOpenOptions::limits: parsing, and devices opened with lowered limits
// (int64 off, a small workgroup / shared memory / subgroup, the discrete-GPU memory path) running
// graphs with the CPU interpreter's results.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"
#include "kiln/kiln.h"
#include "vk/device.h"
#include "vk/device_limits.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

// ---- parsing ------------------------------------------------------------------------------------

TEST(DeviceLimitsParse, GoodStrings) {
  Expected<vk::DeviceLimits> l = vk::parse_device_limits(
      "invocations=128,shared=16384,subgroup=4,int64=0,float16=0,int8=0,storage16=0,unified=0",
      "KILN_DEVICE_LIMITS");
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  EXPECT_EQ(l->invocations, 128u);
  EXPECT_EQ(l->shared, 16384u);
  EXPECT_EQ(l->subgroup, 4u);
  EXPECT_EQ(l->int64, false);
  EXPECT_EQ(l->float16, false);
  EXPECT_EQ(l->int8, false);
  EXPECT_EQ(l->storage16, false);
  EXPECT_EQ(l->unified, false);
  EXPECT_FALSE(l->storage8.has_value());
  EXPECT_EQ(l->str(),
            "invocations=128,shared=16384,subgroup=4,int64=0,float16=0,storage16=0,int8=0,"
            "unified=0");

  Expected<vk::DeviceLimits> spaced = vk::parse_device_limits(" subgroup = 0 , int64=1 ", "x");
  ASSERT_TRUE(spaced.ok()) << spaced.status().to_string();
  EXPECT_EQ(spaced->str(), "subgroup=0,int64=1");
  for (const char* empty : {"", "   "}) {
    Expected<vk::DeviceLimits> none = vk::parse_device_limits(empty, "x");
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
  }
  // Merging keeps the lower value of each key.
  vk::DeviceLimits a = *vk::parse_device_limits("invocations=256,int64=1", "a");
  vk::DeviceLimits b = *vk::parse_device_limits("invocations=64,shared=1024,int64=0", "b");
  EXPECT_EQ(a.merged(b).str(), "invocations=64,shared=1024,int64=0");
}

TEST(DeviceLimitsParse, BadStringsNameTheProblem) {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c : std::vector<Case>{{"warps=32", "unknown key 'warps'"},
                                         {"invocations", "'invocations' is not key=value"},
                                         {"invocations=", "key 'invocations' takes"},
                                         {"invocations=12x", "key 'invocations' takes"},
                                         {"invocations=-1", "key 'invocations' takes"},
                                         {"invocations=0", "key 'invocations' must be"},
                                         {"shared=99999999999", "key 'shared' takes"},
                                         {"subgroup=12", "key 'subgroup' takes 0 or a power"},
                                         {"int64=2", "key 'int64' takes 0 or 1"},
                                         {"unified=no", "key 'unified' takes 0 or 1"},
                                         {"int64=0,int64=0", "key 'int64' repeats"},
                                         {"int64=0,,unified=0", "empty item"},
                                         {"int64=0,", "empty item"}}) {
    Expected<vk::DeviceLimits> l = vk::parse_device_limits(c.text, "KILN_DEVICE_LIMITS");
    ASSERT_FALSE(l.ok()) << c.text;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(l.status().message().find(c.names), std::string::npos) << l.status().message();
    EXPECT_NE(l.status().message().find("KILN_DEVICE_LIMITS"), std::string::npos);
  }
}

TEST(DeviceLimitsParse, ApplyLowersAndNeverRaises) {
  vk::DeviceInfo info;
  info.max_workgroup_invocations = 1024;
  info.max_workgroup_size = {1024, 1024, 64};
  info.max_shared_memory = 8192;  // already below the limit: stays
  info.subgroup_size = 8;
  info.subgroup_basic = info.subgroup_shuffle = info.subgroup_vote = true;
  info.shader_int64 = info.shader_float16 = info.storage_buffer_16bit = true;
  info.shader_int8 = info.storage_buffer_8bit = info.unified_memory = true;
  vk::apply_device_limits(*vk::parse_device_limits("invocations=128,shared=16384,subgroup=16,"
                                                   "int64=0,float16=1,int8=0,unified=0",
                                                   "x"),
                          info);
  EXPECT_EQ(info.max_workgroup_invocations, 128u);
  EXPECT_EQ(info.max_workgroup_size, (std::array<uint32_t, 3>{128, 128, 64}));
  EXPECT_EQ(info.max_shared_memory, 8192u);
  EXPECT_EQ(info.subgroup_size, 8u);
  EXPECT_TRUE(info.subgroup_shuffle);
  EXPECT_FALSE(info.shader_int64);
  EXPECT_TRUE(info.shader_float16);
  EXPECT_TRUE(info.storage_buffer_16bit);
  EXPECT_FALSE(info.shader_int8);
  EXPECT_FALSE(info.storage_buffer_8bit);
  EXPECT_FALSE(info.unified_memory);
  EXPECT_FALSE(info.limits.empty());

  vk::apply_device_limits(*vk::parse_device_limits("subgroup=0,float16=0", "x"), info);
  EXPECT_EQ(info.subgroup_size, 0u);
  EXPECT_FALSE(info.subgroup_basic || info.subgroup_shuffle || info.subgroup_vote);
  EXPECT_FALSE(info.shader_float16 || info.storage_buffer_16bit);
}

// ---- devices opened with limits -----------------------------------------------------------------

class DeviceLimits : public test::DeviceTest {
 protected:
  Device open(const std::string& limits) {
    DeviceOpenOptions o;
    o.limits = limits;
    Expected<Device> d = Device::open("", o);
    if (!d.ok()) ADD_FAILURE() << "open(" << limits << "): " << d.status().to_string();
    return d.ok() ? *d : Device::cpu();
  }
  const vk::DeviceInfo& info(const Device& d) { return d.vulkan_device()->info(); }

  /// fn on CPU copies (the reference) and, compiled, on `dev`: equal within `tol`, and on the
  /// device unless `on_device` is false.
  template <typename Fn, typename... T>
  void check(const Device& dev, const std::string& label, Tol tol, bool on_device, const Fn& fn,
             const T&... cpu) {
    SCOPED_TRACE(label);
    const Tensor want = fn(cpu...);
    CompileOptions co;
    co.name = label;
    auto compiled = compile(fn, co);
    const Tensor got = compiled(cpu.to(dev)...);
    EXPECT_EQ(got.device(), dev);
    const std::vector<EntryInfo> entries = compiled.entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].on_device, on_device) << entries[0].graph;
    test::expect_close(got, want, tol, label);
    const Tensor eager = fn(cpu.to(dev)...);
    test::expect_close(eager, want, tol, label + " [eager]");
  }

  std::mt19937 rng_{1234};
  Tensor rnd(DType t, const Shape& s, const Dist& d = {}) {
    return test::random_tensor(t, s, rng_, d);
  }
};

TEST_F(DeviceLimits, BadOptionIsAnErrorWhenOpening) {
  DeviceOpenOptions o;
  o.limits = "invocations=128,wavefront=64";
  Expected<Device> d = Device::open("", o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("unknown key 'wavefront'"), std::string::npos)
      << d.status().message();
  EXPECT_NE(d.status().message().find("DeviceOpenOptions::limits"), std::string::npos);
}

TEST_F(DeviceLimits, Int64OffRunsInt64GraphsOnTheDevice) {
  // int64 is computed as pairs of 32-bit words (tests/device/emulated_types_test.cpp has the ops).
  Device dev = open("int64=0");
  if (dev.is_cpu()) return;
  EXPECT_FALSE(info(dev).shader_int64);
  EXPECT_NE(info(dev).limits.find("int64=0"), std::string::npos) << info(dev).limits;
  const Tensor a = rnd(DType::kI64, {7, 13}, Dist{-1000, 1000});
  const Tensor b = rnd(DType::kI64, {7, 13}, Dist{-1000, 1000});
  check(
      dev, "i64_mul_add_sum", Tol{0, 0}, true,
      [](const Tensor& x, const Tensor& y) { return sum(x * y + x, {1}); }, a, b);
  const Tensor f = rnd(DType::kF32, {5, 9});
  check(
      dev, "f32_relu", Tol{0, 0}, true, [](const Tensor& x) { return relu(x) * x; }, f);
}

TEST_F(DeviceLimits, SmallWorkgroupsSharedMemoryAndSubgroups) {
  Device dev = open("invocations=128,shared=16384,subgroup=4");
  if (dev.is_cpu()) return;
  const vk::DeviceInfo& i = info(dev);
  EXPECT_LE(i.max_workgroup_invocations, 128u);
  EXPECT_LE(i.max_shared_memory, 16384u);
  EXPECT_LE(i.subgroup_size, 4u);
  for (uint32_t size : i.max_workgroup_size) EXPECT_LE(size, 128u);
  // The runtime checks every compiled kernel's workgroup size and shared memory against these
  // limits (an error otherwise), so running on the device means the kernels fit.
  const Tensor a = rnd(DType::kF32, {67, 131}), b = rnd(DType::kF32, {131, 45});
  check(
      dev, "matmul", Tol{1e-4, 1e-4}, true,
      [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b);
  const Tensor ba = rnd(DType::kF32, {3, 33, 70}), bb = rnd(DType::kF32, {3, 70, 19});
  check(
      dev, "batched_matmul_relu", Tol{1e-4, 1e-4}, true,
      [](const Tensor& x, const Tensor& y) { return relu(matmul(x, y)); }, ba, bb);
  const Tensor r = rnd(DType::kF32, {5, 3001});
  check(
      dev, "row_sum", Tol{2e-4, 1e-5}, true, [](const Tensor& x) { return sum(x, {1}); }, r);
  const Tensor big = rnd(DType::kF32, {100003});
  check(
      dev, "full_sum", Tol{2e-3, 1e-5}, true, [](const Tensor& x) { return sum(x, {0}); }, big);
  const Tensor s = rnd(DType::kF32, {7, 1037}, Dist{-6, 6});
  check(
      dev, "softmax", Tol{2e-6, 1e-5}, true, [](const Tensor& x) { return softmax(x, -1); }, s);
  const Tensor x = rnd(DType::kF32, {9, 777}, Dist{-3, 3});
  const Tensor w = rnd(DType::kF32, {777}, Dist{0.5, 1.5}), bias = rnd(DType::kF32, {777});
  check(
      dev, "layer_norm", Tol{2e-5, 1e-5}, true,
      [](const Tensor& t, const Tensor& wt, const Tensor& bt) {
        return layer_norm(t, wt, bt, 1, 1e-5);
      },
      x, w, bias);
}

// A texel limit as small as SwiftShader's (65536 texels; here 4096): vec4 loads of an operand
// whose size is symbolic must not be texel buffers, since a later call may pass the limit
// (formerly: "a texel buffer of N bytes ... at most 4096 texels" at the larger call). Static
// operands within the limit may still be.
TEST_F(DeviceLimits, SymbolicOperandsOutgrowASmallTexelLimit) {
  Device dev = open("texels=4096");
  if (dev.is_cpu()) return;
  EXPECT_EQ(info(dev).max_texel_buffer_elements, 4096u);
  EXPECT_NE(info(dev).limits.find("texels=4096"), std::string::npos) << info(dev).limits;
  auto body = [](const Tensor& x, const Tensor& y) { return relu(x * 2.0 + y) - y; };
  CompileOptions co;
  co.name = "texel_limit";
  co.dynamic = Dynamic::kTrue;
  auto fn = compile(body, co);
  for (int64_t rows : {8, 40, 300}) {  // 300 x 64 floats = 4800 texels
    const Tensor x = rnd(DType::kF32, {rows, 64}), y = rnd(DType::kF32, {rows, 64});
    test::expect_close(fn(x.to(dev), y.to(dev)), body(x, y), Tol{1e-6, 1e-6},
                       "rows " + std::to_string(rows));
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  for (const EntryInfo& e : fn.entries()) EXPECT_TRUE(e.on_device) << e.graph;
  // Row-block matmuls read A and B through texel buffers on devices with 8-lane subgroups.
  auto mm = compile([](const Tensor& a, const Tensor& b) { return matmul(a, b); }, co);
  for (int64_t rows : {8, 300}) {
    const Tensor a = rnd(DType::kF32, {rows, 64}), b = rnd(DType::kF32, {64, 64});
    test::expect_close(mm(a.to(dev), b.to(dev)), matmul(a, b), Tol{1e-4, 1e-4},
                       "matmul rows " + std::to_string(rows));
  }
}

TEST_F(DeviceLimits, NoSubgroupOperations) {
  Device dev = open("subgroup=0");
  if (dev.is_cpu()) return;
  EXPECT_EQ(info(dev).subgroup_size, 0u);
  EXPECT_FALSE(info(dev).subgroup_shuffle || info(dev).subgroup_vote);
  const Tensor a = rnd(DType::kF32, {64, 96}), b = rnd(DType::kF32, {96, 80});
  check(
      dev, "matmul_no_subgroups", Tol{1e-4, 1e-4}, true,
      [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b);
}

TEST_F(DeviceLimits, UnifiedOffTakesTheStagingPath) {
  Device dev = open("unified=0");
  if (dev.is_cpu()) return;
  std::shared_ptr<vk::VulkanDevice> vkd = dev.vulkan_device();
  EXPECT_FALSE(vkd->info().unified_memory);
  Expected<vk::BufferRef> buffer = vkd->allocate(256);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ((*buffer)->mapped(), nullptr) << "device buffers must not be host-mapped";
  const vk::DeviceStats before = vkd->stats();

  const Tensor a = rnd(DType::kF32, {37, 53}), b = rnd(DType::kF32, {53, 29});
  const Tensor da = a.to(dev), db = b.to(dev);
  EXPECT_GE(vkd->stats().staged_uploads, before.staged_uploads + 2);
  // Eager ops, then a compiled function, then downloads.
  test::expect_close(relu(da) * scalar(2.0) + da, relu(a) * scalar(2.0) + a, Tol{0, 0}, "eager");
  test::expect_close(sum(da, {1}), sum(a, {1}), Tol{1e-5, 1e-6}, "eager sum");
  check(
      dev, "staged_matmul", Tol{1e-4, 1e-4}, true,
      [](const Tensor& x, const Tensor& y) { return relu(matmul(x, y)) + scalar(1.0); }, a, b);
  const vk::DeviceStats after = vkd->stats();
  EXPECT_GT(after.staged_downloads, before.staged_downloads);
  EXPECT_GT(after.dispatches, before.dispatches);
  std::vector<float> back = da.to_vector<float>();
  EXPECT_EQ(back, a.to_vector<float>());
}

// A cached call copies its inputs in within the replay's own submission, on the staging path
// too (host data through staging, device tensors by a transfer command): one submission.
TEST_F(DeviceLimits, ACachedCallIsOneSubmissionOnEitherMemoryPath) {
  for (const char* limits : {"", "unified=0"}) {
    SCOPED_TRACE(limits);
    Device dev = open(limits);
    if (dev.is_cpu()) return;
    std::shared_ptr<vk::VulkanDevice> vkd = dev.vulkan_device();
    const Tensor bias = rnd(DType::kF32, {7});  // captured on the host: uploaded by every call
    auto fn = [bias](const Tensor& x, const Tensor& w) {
      return relu(matmul(x, w)) * scalar(0.5) + bias + sum(x, {1}, true);
    };
    CompileOptions co;
    co.name = "copies_in";
    co.dynamic = Dynamic::kFalse;
    auto compiled = compile(fn, co);
    const Tensor w = rnd(DType::kF32, {19, 7}).to(dev);
    for (uint32_t call = 0; call < 4; ++call) {
      const Tensor x = rnd(DType::kF32, {13, 19}).to(dev);
      const vk::DeviceStats before = vkd->stats();
      const Tensor got = compiled(x, w);
      const vk::DeviceStats after = vkd->stats();
      if (call >= 2) {  // compiled and recorded by now
        EXPECT_EQ(after.submissions - before.submissions, 1u) << "call " << call;
        EXPECT_EQ(after.replays - before.replays, 1u);
        if (!vkd->info().unified_memory) {
          EXPECT_EQ(after.staged_uploads - before.staged_uploads, 1u);
        }
      }
      test::expect_close(got, fn(x.to(Device::cpu()), w.to(Device::cpu())), Tol{1e-5, 1e-5},
                         "call " + std::to_string(call));
    }
    ASSERT_EQ(compiled.entries().size(), 1u) << compiled.explain().to_string();
    EXPECT_TRUE(compiled.entries()[0].on_device);
  }
}

}  // namespace
}  // namespace kiln
