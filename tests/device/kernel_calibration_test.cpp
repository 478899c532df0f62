// Kernel calibration (exec/calibration.h): the measured rates of the device's matmul kernels,
// the kernel codegen picks from them, the record stored in the device's cache and read by the
// next device on that cache, and matmul results with either kernel forced.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk_cache.h"
#include "codegen/lower.h"
#include "device/test_util.h"
#include "exec/calibration.h"
#include "exec/executable.h"
#include "vk/device.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool rowblock_on(const vk::DeviceInfo& info) {
  return has_rowblock_kernel(info);
}

Graph matmul_graph(int64_t m, int64_t k, int64_t n) {
  Graph g;
  const NodeId a = g.add_input({DType::kF32, {m, k}});
  const NodeId b = g.add_input({DType::kF32, {k, n}});
  g.set_outputs({g.add(OpKind::MatMul, {a, b}).value()});
  return g;
}

class KernelCalibration : public test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    char tmpl[] = "/tmp/kiln_calibration_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    DeviceTest::TearDown();
  }
  /// A device of its own on this test's cache directory.
  std::shared_ptr<vk::VulkanDevice> open() {
    DeviceOpenOptions o;
    o.cache_dir = dir_.string();
    Expected<Device> d = Device::open("", o);
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    return d.ok() ? d->vulkan_device() : nullptr;
  }

  fs::path dir_;
};

// Positive rates for each kernel the device has; codegen's kernel for a large product is the
// one with the higher measured rate, and a compiled matmul on the device follows it.
TEST_F(KernelCalibration, PicksTheKernelWithTheHigherMeasuredRate) {
  const std::shared_ptr<vk::VulkanDevice> dev = open();
  ASSERT_TRUE(dev);
  const Calibration c = calibrate_device(dev);
  ASSERT_EQ(c.source, Calibration::Source::kMeasured) << c.message;
  ASSERT_TRUE(c.rates.measured);
  const bool rowblock = rowblock_on(dev->info());
  EXPECT_GT(c.rates.tiled_flops_per_ms, 0);
  EXPECT_GT(c.rates.copy_bytes_per_ms, 0);
  EXPECT_EQ(c.rates.rowblock_flops_per_ms > 0, rowblock);
  std::printf("[ rates    ] %s: %s; large matmuls: %s kernel (%.0f ms)\n", dev->info().name.c_str(),
              rates_text(c.rates).c_str(), large_matmul_kernel(c.rates, rowblock), c.ms);
  const KernelVariant want = rowblock && c.rates.rowblock_flops_per_ms >= c.rates.tiled_flops_per_ms
                                 ? KernelVariant::kMatmulRowBlock
                                 : KernelVariant::kMatmulTiled;

  CodegenOptions o;
  o.caps = caps_of(dev->info());
  o.caps.matmul = c.rates;
  Expected<KernelPlan> plan = plan_kernels(matmul_graph(1024, 1024, 1024), o);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 1u);
  EXPECT_EQ(plan->kernels[0].variant, want);
  EXPECT_NE(plan->fusion_log.find("measured on this device"), std::string::npos)
      << plan->fusion_log;

  // Full tiles and row blocks: the estimate compares the rates alone.
  auto exe = Executable::create(matmul_graph(256, 128, 128), Device::from_vulkan_device(dev),
                                CompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  ASSERT_TRUE((*exe)->plan());
  EXPECT_EQ((*exe)->plan()->kernels[0].variant, want);
}

// The record is stored in the device's cache: the next device on that cache reads it without
// measuring; a corrupted file or a malformed record is measured again (and rewritten).
TEST_F(KernelCalibration, StoredRecordIsReadAndABadOneRemeasured) {
  const uint64_t before = calibration_measurements();
  const Calibration first = calibrate_device(open());
  ASSERT_EQ(first.source, Calibration::Source::kMeasured) << first.message;
  EXPECT_EQ(calibration_measurements(), before + 1);

  const std::shared_ptr<vk::VulkanDevice> second = open();
  ASSERT_TRUE(second);
  const uint64_t hits = second->disk_cache()->counters().hits;
  const Calibration read = calibrate_device(second);
  EXPECT_EQ(read.source, Calibration::Source::kCache);
  EXPECT_EQ(calibration_measurements(), before + 1);
  EXPECT_EQ(second->disk_cache()->counters().hits, hits + 1);
  EXPECT_EQ(read.rates.tiled_flops_per_ms, first.rates.tiled_flops_per_ms);
  EXPECT_EQ(read.rates.rowblock_flops_per_ms, first.rates.rowblock_flops_per_ms);
  EXPECT_EQ(read.rates.copy_bytes_per_ms, first.rates.copy_bytes_per_ms);
  EXPECT_EQ(calibrate_device(second).source, Calibration::Source::kCache);  // memoized
  EXPECT_EQ(calibration_measurements(), before + 1);

  // A file that is no cache file at all.
  const fs::path file =
      second->disk_cache()->path_for(cache::EntryKind::kCalibration, "matmul-rates-1");
  ASSERT_TRUE(fs::exists(file));
  { std::ofstream(file, std::ios::binary | std::ios::trunc) << "not a record"; }
  EXPECT_EQ(calibrate_device(open()).source, Calibration::Source::kMeasured);
  EXPECT_EQ(calibration_measurements(), before + 2);
  EXPECT_EQ(calibrate_device(open()).source, Calibration::Source::kCache);  // rewritten

  // A valid file for this device whose record does not parse.
  const std::shared_ptr<vk::VulkanDevice> third = open();
  ASSERT_TRUE(third);
  third->disk_cache()->store(cache::EntryKind::kCalibration, "matmul-rates-1",
                             caps_of(third->info()).device_key, "", "rowblock_flops_per_ms=fast\n");
  const Calibration again = calibrate_device(third);
  EXPECT_EQ(again.source, Calibration::Source::kMeasured);
  EXPECT_TRUE(again.rates.measured);
  EXPECT_EQ(calibration_measurements(), before + 3);
}

// Threads asking for one device's rates at once share one measurement.
TEST_F(KernelCalibration, ConcurrentCallersShareOneMeasurement) {
  const std::shared_ptr<vk::VulkanDevice> dev = open();
  ASSERT_TRUE(dev);
  const uint64_t before = calibration_measurements();
  std::vector<Calibration> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = calibrate_device(dev); });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calibration_measurements(), before + 1);
  for (const Calibration& c : got) {
    EXPECT_EQ(c.source, Calibration::Source::kMeasured) << c.message;
    EXPECT_EQ(c.rates.tiled_flops_per_ms, got[0].rates.tiled_flops_per_ms);
  }
}

// KILN_CALIBRATE=0 measures nothing: codegen then follows the structural rule.
TEST_F(KernelCalibration, DisabledByEnvironment) {
  ::setenv("KILN_CALIBRATE", "0", 1);
  const uint64_t before = calibration_measurements();
  const Calibration c = calibrate_device(open());
  ::unsetenv("KILN_CALIBRATE");
  EXPECT_EQ(c.source, Calibration::Source::kDisabled);
  EXPECT_FALSE(c.rates.measured);
  EXPECT_EQ(calibration_measurements(), before);
}

// The two kernels calibration forces compute the same product (checked against a host loop).
TEST_F(KernelCalibration, ForcedKernelsComputeTheProduct) {
  const int64_t m = 40, k = 64, n = 48;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(m * k), b(k * n), want(m * n, 0.0f);
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) want[i * n + j] += a[i * k + p] * b[p * n + j];
  const Device device = Device::vulkan();
  std::vector<std::pair<MatmulRates::Force, KernelVariant>> cases = {
      {MatmulRates::Force::kTiled, KernelVariant::kMatmulTiled}};
  if (rowblock_on(device.vulkan_device()->info()))
    cases.emplace_back(MatmulRates::Force::kRowBlock, KernelVariant::kMatmulRowBlock);
  for (const auto& [force, variant] : cases) {
    std::shared_ptr<Executable> exe;
    {
      const ForcedMatmulKernel scope(force);
      exe = value_or_throw(Executable::create(matmul_graph(m, k, n), device, CompileOptions{}));
    }
    ASSERT_TRUE(exe->plan());
    EXPECT_EQ(exe->plan()->kernels[0].variant, variant);
    std::vector<Tensor> out = value_or_throw(exe->run(
        {Tensor::from_vector(a, {m, k}, device), Tensor::from_vector(b, {k, n}, device)}, {}));
    const std::vector<float> got = out.at(0).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

}  // namespace
}  // namespace kiln
