// Capture on Vulkan: the walking-skeleton contract end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "kiln/kiln.h"

namespace kiln {
namespace {

class CaptureDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!vulkan_available()) GTEST_SKIP() << "no Vulkan device: " << vulkan_status().to_string();
    validation_before_ = validation_messages().size();
  }
  void TearDown() override {
    if (!vulkan_available()) return;
    auto msgs = validation_messages();
    EXPECT_EQ(msgs.size(), validation_before_) << (msgs.empty() ? "" : msgs.back());
  }
  size_t validation_before_ = 0;
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

Tensor rand_tensor(Shape shape, uint32_t seed, Device device) {
  return Tensor::from_vector(random_floats(static_cast<size_t>(numel(shape)), seed), shape, device);
}

Tensor chain(const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) {
  return relu((x * a + b) * c - d);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at element " << i;
}

TEST_F(CaptureDevice, ChainIsOneDispatchCachedAndRecompiledOnNewShape) {
  std::vector<std::string> logs;
  set_logs("recompiles");
  set_log_sink([&](LogTopic, std::string_view m) { logs.emplace_back(m); });

  int traces = 0;
  auto f = compile(
      [&](const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) {
        ++traces;
        return chain(x, a, b, c, d);
      },
      {.name = "chain"});
  auto make_args = [](Dim rows, Dim cols, uint32_t seed, Device dev) {
    std::vector<Tensor> v{rand_tensor({rows, cols}, seed, dev)};
    for (uint32_t i = 0; i < 4; ++i) v.push_back(rand_tensor({cols}, seed + 1 + i, dev));
    return v;
  };
  auto cpu = make_args(37, 64, 1, Device::cpu());
  auto gpu = make_args(37, 64, 1, Device::vulkan());

  RuntimeCounters c0 = runtime_counters();
  Tensor y = f(gpu[0], gpu[1], gpu[2], gpu[3], gpu[4]);
  RuntimeCounters c1 = runtime_counters();
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_EQ(f.entries()[0].kernels.size(), 1u) << f.entries()[0].graph;
  EXPECT_EQ(c1.dispatches - c0.dispatches, 1u);
  EXPECT_EQ(y.device(), Device::vulkan());
  expect_close(y.to_vector<float>(),
               chain(cpu[0], cpu[1], cpu[2], cpu[3], cpu[4]).to_vector<float>(), 1e-6f);

  // Same shapes: a cache hit. No trace, no new pipeline, no shader compile, one dispatch.
  auto gpu2 = make_args(37, 64, 7, Device::vulkan());
  auto cpu2 = make_args(37, 64, 7, Device::cpu());
  Tensor y2 = f(gpu2[0], gpu2[1], gpu2[2], gpu2[3], gpu2[4]);
  RuntimeCounters c2 = runtime_counters();
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(f.stats().cache_hits, 1u);
  EXPECT_EQ(c2.pipelines_created, c1.pipelines_created);
  EXPECT_EQ(c2.shader_compiles, c1.shader_compiles);
  EXPECT_EQ(c2.dispatches - c1.dispatches, 1u);
  expect_close(y2.to_vector<float>(),
               chain(cpu2[0], cpu2[1], cpu2[2], cpu2[3], cpu2[4]).to_vector<float>(), 1e-6f);

  // A new shape: a recompile, with the reason logged.
  auto gpu3 = make_args(5, 7, 11, Device::vulkan());
  auto cpu3 = make_args(5, 7, 11, Device::cpu());
  Tensor y3 = f(gpu3[0], gpu3[1], gpu3[2], gpu3[3], gpu3[4]);
  EXPECT_EQ(traces, 2);
  EXPECT_EQ(f.stats().recompiles, 1u);
  expect_close(y3.to_vector<float>(),
               chain(cpu3[0], cpu3[1], cpu3[2], cpu3[3], cpu3[4]).to_vector<float>(), 1e-6f);
  set_log_sink({});
  set_logs("");
  ASSERT_FALSE(logs.empty());
  EXPECT_NE(logs.back().find("input 0 size of dim 0: expected 37, got 5"), std::string::npos)
      << logs.back();
}

TEST_F(CaptureDevice, EqualKernelInAnotherFunctionCreatesNoPipeline) {
  auto f1 = compile(chain, {.name = "f1"});
  auto f2 = compile(chain, {.name = "f2"});
  std::vector<Tensor> v{rand_tensor({8, 16}, 3, Device::vulkan())};
  for (uint32_t i = 0; i < 4; ++i) v.push_back(rand_tensor({16}, 4 + i, Device::vulkan()));
  f1(v[0], v[1], v[2], v[3], v[4]);
  RuntimeCounters before = runtime_counters();
  f2(v[0], v[1], v[2], v[3], v[4]);
  RuntimeCounters after = runtime_counters();
  EXPECT_EQ(after.pipelines_created, before.pipelines_created);
  EXPECT_GT(after.pipeline_cache_hits, before.pipeline_cache_hits);
}

TEST_F(CaptureDevice, UnfusedRunsOneDispatchPerOpWithTheSameResult) {
  auto fused = compile(chain, {.name = "fused"});
  auto unfused = compile(chain, {.name = "unfused", .fuse = false});
  std::vector<Tensor> v{rand_tensor({9, 12}, 5, Device::vulkan())};
  for (uint32_t i = 0; i < 4; ++i) v.push_back(rand_tensor({12}, 6 + i, Device::vulkan()));
  auto a = fused(v[0], v[1], v[2], v[3], v[4]).to_vector<float>();
  RuntimeCounters c0 = runtime_counters();
  auto b = unfused(v[0], v[1], v[2], v[3], v[4]).to_vector<float>();
  RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(c1.dispatches - c0.dispatches, 5u);
  expect_close(a, b, 1e-6f);
}

TEST_F(CaptureDevice, WrongShapeIsAClearErrorAndTheCacheSurvives) {
  auto f = compile([](const Tensor& x, const Tensor& a) { return x - a; }, {.name = "sub"});
  Tensor x = rand_tensor({4, 8}, 1, Device::vulkan());
  f(x, rand_tensor({8}, 2, Device::vulkan()));
  try {
    f(x, rand_tensor({3}, 2, Device::vulkan()));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not broadcastable"), std::string::npos) << e.what();
  }
  try {
    f(x, rand_tensor({8}, 2, Device::cpu()));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different devices"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f(x, rand_tensor({8}, 2, Device::vulkan())).numel(), 32);
}

TEST_F(CaptureDevice, DumpDirGetsGraphGuardsAndKernels) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kiln_dump_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("KILN_DUMP_DIR", dir.c_str(), 1);
  auto f = compile([](const Tensor& x) { return sum(exp(x) * 2.0, {1}); }, {.name = "dumped"});
  f(rand_tensor({6, 200}, 9, Device::vulkan()));
  ::unsetenv("KILN_DUMP_DIR");
  fs::path d = dir / "dumped_0";
  EXPECT_TRUE(fs::exists(d / "graph.txt"));
  EXPECT_TRUE(fs::exists(d / "guards.txt"));
  size_t comp = 0, spv = 0, spvasm = 0, json = 0;
  for (const auto& e : fs::directory_iterator(d)) {
    comp += e.path().extension() == ".comp";
    spv += e.path().extension() == ".spv";
    spvasm += e.path().extension() == ".spvasm";
    json += e.path().extension() == ".json" && e.path().filename() != "manifest.json";
  }
  // The manifest ties the compile together: function, reason, guards, nodes and kernels.
  std::ifstream in(d / "manifest.json");
  ASSERT_TRUE(in.good());
  const auto m = nlohmann::json::parse(in);
  EXPECT_EQ(m["function"], "dumped");
  EXPECT_EQ(m["compile"], 0);
  EXPECT_EQ(m["reason"], "first call");
  EXPECT_FALSE(m["guards"].empty());
  ASSERT_EQ(m["kernels"].size(), 1u);
  const auto& k = m["kernels"][0];
  EXPECT_TRUE(fs::exists(d / k["files"]["glsl"].get<std::string>()));
  EXPECT_EQ(k["sources"].size(), 1u);  // every node was recorded on one line of this file
  EXPECT_NE(k["sources"][0].get<std::string>().find("capture_test.cpp:"), std::string::npos);
  size_t in_kernel = 0;
  for (const auto& n : m["nodes"]) in_kernel += n["kernel"] == k["name"];
  EXPECT_GE(in_kernel, 3u);  // exp, mul and sum (and the literal)
  EXPECT_EQ(comp, 1u);       // exp and the scaling fold into the reduction's load
  EXPECT_EQ(spv, 1u);
  EXPECT_EQ(spvasm, 1u);
  EXPECT_EQ(json, 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
