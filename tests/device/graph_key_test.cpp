// Compiled graphs are found by their structure and target, never by their printed text:
// graphs that print alike but differ compile separately and give their own answers, and a
// compiled function called on one device and then on another runs on each.
#include <random>

#include "device/test_util.h"
#include "exec/executable_cache.h"

namespace kiln {
namespace {

class GraphKeyDevice : public test::DeviceTest {};

std::vector<int64_t> random_ints(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(-1000000, 1000000);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = u(rng);
  return v;
}

std::vector<int64_t> plus(const std::vector<int64_t>& x, int64_t c) {
  std::vector<int64_t> out = x;
  for (int64_t& v : out) v += c;
  return out;
}

// 1234567891 and 1234567892 print alike with %.9g ("1.23456789e+09").
constexpr int64_t kC1 = 1234567891;
constexpr int64_t kC2 = 1234567892;

TEST_F(GraphKeyDevice, EagerOpsWhoseConstantsPrintAlikeCompileSeparately) {
  for (size_t n : {1u, 7u, 33u}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<int64_t> xs = random_ints(n, static_cast<uint32_t>(n));
    const Tensor x = Tensor::from_vector(xs, {static_cast<Dim>(n)}, Device::vulkan());
    const ExecutableCache::Stats before = eager_executable_cache(Device::vulkan().id())->stats();
    const Tensor y1 = x + kC1;
    const Tensor y2 = x + kC2;
    const ExecutableCache::Stats after = eager_executable_cache(Device::vulkan().id())->stats();
    EXPECT_EQ(y1.device(), Device::vulkan());
    EXPECT_EQ(y2.device(), Device::vulkan());
    EXPECT_EQ(y1.to_vector<int64_t>(), plus(xs, kC1));
    EXPECT_EQ(y2.to_vector<int64_t>(), plus(xs, kC2));
    EXPECT_EQ(after.misses - before.misses, 2u) << "each constant compiles its own kernel";
    // The same op again is a hit and still right.
    EXPECT_EQ((x + kC1).to_vector<int64_t>(), plus(xs, kC1));
    EXPECT_EQ(eager_executable_cache(Device::vulkan().id())->stats().hits - after.hits, 1u);
  }
  EXPECT_LE(eager_executable_cache(Device::vulkan().id())->stats().size, kEagerCacheCapacity);
}

TEST_F(GraphKeyDevice, RetracedSegmentsWhoseConstantsPrintAlikeCompileSeparately) {
  for (Device dev : {Device::vulkan(), Device::cpu()}) {
    SCOPED_TRACE(dev.str());
    auto f = compile([](const Tensor& x, int64_t c) { return x + c; }, {.name = "add_c"});
    const std::vector<int64_t> xs = random_ints(9, 5);
    const Tensor x = Tensor::from_vector(xs, {9}, dev);
    const Tensor y1 = f(x, kC1);
    const Tensor y2 = f(x, kC2);  // the scalar guard fails: a re-trace of an alike-printing graph
    EXPECT_EQ(f.stats().compiles, 2u);
    EXPECT_EQ(y1.device(), dev);
    EXPECT_EQ(y2.device(), dev);
    EXPECT_EQ(y1.to_vector<int64_t>(), plus(xs, kC1));
    EXPECT_EQ(y2.to_vector<int64_t>(), plus(xs, kC2));
    EXPECT_EQ(f(x, kC1).to_vector<int64_t>(), plus(xs, kC1));  // replays the first entry
    EXPECT_EQ(f.stats().compiles, 2u);
  }
}

Tensor affine_relu(const Tensor& x) {
  return relu(x * 2.0 + 1.0);
}

std::vector<float> affine_relu_ref(const std::vector<float>& x) {
  std::vector<float> out;
  for (float v : x) out.push_back(std::max(0.0f, v * 2.0f + 1.0f));
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST_F(GraphKeyDevice, CompiledFunctionCalledOnCpuThenVulkanRunsOnVulkan) {
  auto f = compile(affine_relu, {.name = "cpu_then_vulkan"});
  const std::vector<float> xs = random_floats(37 * 8, 1);
  const Tensor on_cpu = f(Tensor::from_vector(xs, {37, 8}, Device::cpu()));
  EXPECT_EQ(on_cpu.device(), Device::cpu());
  EXPECT_EQ(on_cpu.to_vector<float>(), affine_relu_ref(xs));

  const RuntimeCounters c0 = runtime_counters();
  const Tensor on_gpu = f(Tensor::from_vector(xs, {37, 8}, Device::vulkan()));
  const RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(on_gpu.device(), Device::vulkan());
  EXPECT_GE(c1.dispatches - c0.dispatches, 1u) << "no kernel ran for the Vulkan call";
  EXPECT_EQ(f.stats().compiles, 2u);
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_FALSE(f.entries()[0].on_device);
  EXPECT_TRUE(f.entries()[1].on_device);
  EXPECT_EQ(on_gpu.to_vector<float>(), affine_relu_ref(xs));
}

TEST_F(GraphKeyDevice, CompiledFunctionCalledOnVulkanThenCpuRunsOnCpu) {
  auto f = compile(affine_relu, {.name = "vulkan_then_cpu"});
  const std::vector<float> xs = random_floats(37 * 8, 2);
  const Tensor on_gpu = f(Tensor::from_vector(xs, {37, 8}, Device::vulkan()));
  EXPECT_EQ(on_gpu.device(), Device::vulkan());
  EXPECT_EQ(on_gpu.to_vector<float>(), affine_relu_ref(xs));

  const RuntimeCounters c0 = runtime_counters();
  const Tensor on_cpu = f(Tensor::from_vector(xs, {37, 8}, Device::cpu()));
  const RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(on_cpu.device(), Device::cpu());
  EXPECT_EQ(c1.dispatches - c0.dispatches, 0u) << "a kernel ran for CPU tensors";
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_TRUE(f.entries()[0].on_device);
  EXPECT_FALSE(f.entries()[1].on_device);
  EXPECT_EQ(on_cpu.to_vector<float>(), affine_relu_ref(xs));
}

// Each device keeps its own cache of eager ops: ops on an opened second device neither hit nor
// evict the default device's entries, and closing it drops its cache.
TEST_F(GraphKeyDevice, EagerOpCachesArePerDevice) {
  Device second = value_or_throw(Device::open(""));
  ASSERT_NE(second.id(), Device::vulkan().id());
  const std::vector<int64_t> xs = random_ints(19, 3);
  const Tensor on_default = Tensor::from_vector(xs, {19}, Device::vulkan());
  EXPECT_EQ((on_default + 77).to_vector<int64_t>(), plus(xs, 77));
  const ExecutableCache::Stats def0 = eager_executable_cache(Device::vulkan().id())->stats();
  {
    const Tensor on_second = Tensor::from_vector(xs, {19}, second);
    const ExecutableCache::Stats sec0 = eager_executable_cache(second.id())->stats();
    const Tensor y = on_second + 77;  // structurally the op the default device ran
    EXPECT_EQ(y.device(), second);
    EXPECT_EQ(y.to_vector<int64_t>(), plus(xs, 77));
    const ExecutableCache::Stats sec1 = eager_executable_cache(second.id())->stats();
    EXPECT_EQ(sec1.misses - sec0.misses, 1u) << "the second device compiles its own kernel";
  }
  const ExecutableCache::Stats def1 = eager_executable_cache(Device::vulkan().id())->stats();
  EXPECT_EQ(def1.hits, def0.hits);
  EXPECT_EQ(def1.misses, def0.misses);
  EXPECT_EQ(def1.size, def0.size);
  const size_t devices = eager_cache_device_count();
  ASSERT_TRUE(second.close().ok());
  EXPECT_EQ(eager_cache_device_count(), devices - 1) << "close drops the device's cache";
}

// Cached executables hold their device, so a device released without close() lives on in its
// cache until kEagerCacheDevices other devices have run eager ops; then it is freed.
TEST_F(GraphKeyDevice, ADeviceReleasedWithoutCloseIsFreedByLaterDevices) {
  const std::vector<int64_t> xs = random_ints(5, 4);
  auto run_on = [&](const Device& d) {
    EXPECT_EQ((Tensor::from_vector(xs, {5}, d) + 3).to_vector<int64_t>(), plus(xs, 3));
  };
  std::weak_ptr<vk::VulkanDevice> first;
  {
    const Device d = value_or_throw(Device::open(""));
    first = d.vulkan_device();
    run_on(d);
  }
  EXPECT_FALSE(first.expired()) << "its cached executable holds it";
  for (size_t i = 0; i < kEagerCacheDevices; ++i) run_on(value_or_throw(Device::open("")));
  EXPECT_TRUE(first.expired()) << "later devices' caches did not push it out";
  EXPECT_LE(eager_cache_device_count(), kEagerCacheDevices);
}

}  // namespace
}  // namespace kiln
