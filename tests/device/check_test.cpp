// Check mode (exec/check.h): every kernel of a compiled device segment compared with the
// interpreter. Without a fault every kernel matches; with the test-only fault hook on one
// kernel, check mode names that kernel, its nodes and sources, and writes a repro.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "exec/check.h"
#include "device/test_util.h"
#include "kiln/io.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class CheckMode : public test::DeviceTest {
 protected:
  void TearDown() override {
    set_check_fault("");
    ::unsetenv("KILN_DUMP_DIR");
    test::DeviceTest::TearDown();
  }
};

/// Three kernels at least: a softmax-like row reduction, its normalisation and a matmul.
Tensor program(const Tensor& x, const Tensor& w) {
  Tensor e = exp(x - max(x, {1}, true));
  Tensor p = e / sum(e, {1}, true);
  return matmul(p, w) * 0.5;
}

TEST_F(CheckMode, EveryKernelMatchesWithoutAFault) {
  std::mt19937 rng(test::seed_for_current_test());
  const Tensor x = test::random_tensor(DType::kF32, {37, 19}, rng, {}, Device::vulkan());
  const Tensor w = test::random_tensor(DType::kF32, {19, 5}, rng, {}, Device::vulkan());
  auto f = compile(program, {.name = "checked", .check = true});
  clear_check_reports();
  const Tensor y = f(x, w);
  const std::vector<CheckReport> reports = check_reports();
  ASSERT_EQ(reports.size(), 1u);
  const CheckReport& r = reports[0];
  EXPECT_EQ(r.function, "checked");
  EXPECT_EQ(r.first_divergence, -1);
  EXPECT_GE(r.kernels.size(), 2u);
  for (const KernelCheck& k : r.kernels) {
    EXPECT_TRUE(k.compared) << k.kernel;
    EXPECT_TRUE(k.ok) << k.kernel << " max error " << k.max_error;
    EXPECT_FALSE(k.nodes.empty()) << k.kernel;
  }
  // Check mode observes: the results are the device's, equal to the interpreter's.
  test::expect_close(y, program(x.to(Device::cpu()), w.to(Device::cpu())), {1e-4, 1e-5}, "y");
  // A function compiled without check mode reports nothing.
  auto g = compile(program, {.name = "unchecked"});
  g(x, w);
  EXPECT_EQ(check_reports().size(), 1u);
}

TEST_F(CheckMode, NamesTheFaultyKernelItsNodesAndWritesARepro) {
  const fs::path dir =
      fs::temp_directory_path() / ("kiln_check_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("KILN_DUMP_DIR", dir.c_str(), 1);
  std::mt19937 rng(test::seed_for_current_test());
  const Tensor x = test::random_tensor(DType::kF32, {21, 33}, rng, {}, Device::vulkan());
  const Tensor w = test::random_tensor(DType::kF32, {33, 7}, rng, {}, Device::vulkan());
  auto f = compile(program, {.name = "faulty", .check = true});
  clear_check_reports();
  f(x, w);
  std::vector<CheckReport> reports = check_reports();
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_EQ(reports[0].first_divergence, -1);
  ASSERT_GE(reports[0].kernels.size(), 2u);
  // Every kernel in turn: the fault in kernel i is reported as kernel i, not a later one that
  // reads it (downstream kernels read the device's own, unperturbed, value).
  for (size_t i = 0; i < reports[0].kernels.size(); ++i) {
    const KernelCheck expected = reports[0].kernels[i];
    set_check_fault(expected.kernel);
    clear_check_reports();
    f(x, w);  // a cache hit: the replay is checked too
    const std::vector<CheckReport> now = check_reports();
    ASSERT_EQ(now.size(), 1u);
    ASSERT_EQ(now[0].first_divergence, static_cast<int>(i)) << expected.kernel;
    const KernelCheck& bad = now[0].kernels[i];
    EXPECT_EQ(bad.kernel, expected.kernel);
    EXPECT_EQ(bad.nodes, expected.nodes);
    EXPECT_FALSE(bad.ok);
    EXPECT_GT(bad.max_error, bad.tolerance);
    ASSERT_FALSE(bad.sources.empty());
    EXPECT_NE(bad.sources[0].find("check_test.cpp:"), std::string::npos) << bad.sources[0];
    // The warning names the kernel; the repro holds its inputs, outputs and GLSL.
    bool warned = false;
    for (const std::string& w_msg : warnings())
      warned |= w_msg.find("kernel " + expected.kernel + " differs") != std::string::npos;
    EXPECT_TRUE(warned) << expected.kernel;
    const fs::path repro = now[0].repro_dir;
    ASSERT_TRUE(fs::exists(repro / "check.json")) << repro;
    std::ifstream in(repro / "check.json");
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["kernel"], expected.kernel);
    EXPECT_EQ(j["nodes"].get<std::vector<int32_t>>(), expected.nodes);
    EXPECT_TRUE(fs::exists(repro / (expected.kernel + ".comp")));
    EXPECT_TRUE(fs::exists(repro / "expected.npy"));
    EXPECT_TRUE(fs::exists(repro / "actual.npy"));
    for (const auto& input : j["inputs"]) {
      const std::string file = input["file"].get<std::string>();
      ASSERT_FALSE(file.empty()) << input.dump();
      auto t = load_npy((repro / file).string(), Device::cpu());
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      EXPECT_EQ(t->meta().str(), input["meta"].get<std::string>());
    }
    auto actual = load_npy((repro / "actual.npy").string(), Device::cpu());
    auto want = load_npy((repro / "expected.npy").string(), Device::cpu());
    ASSERT_TRUE(actual.ok() && want.ok());
    EXPECT_NE(actual->to_vector<float>(), want->to_vector<float>());
  }
  set_check_fault("");
  clear_check_reports();
  f(x, w);
  ASSERT_EQ(check_reports().size(), 1u);
  EXPECT_EQ(check_reports()[0].first_divergence, -1);
  fs::remove_all(dir);
}

// An index out of range: the interpreter rejects the call, while the kernel clamps it and
// returns a result (docs/ops.md). Check mode reports that call as rejected, never as "every
// kernel matches" nor as nothing compared.
TEST_F(CheckMode, AnIndexTheInterpreterRejectsIsReported) {
  const Tensor x =
      Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2}, Device::vulkan());
  const Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 7}, {2}, Device::vulkan());
  const Tensor good = Tensor::from_vector(std::vector<int64_t>{2, 0}, {2}, Device::vulkan());
  auto f = compile([](const Tensor& a, const Tensor& i) { return index_select(a, 0, i) * 2.0; },
                   {.name = "rows", .check = true});
  clear_check_reports();
  f(x, good);
  f(x, bad);
  const std::vector<CheckReport> reports = check_reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].interpreter_error.empty()) << reports[0].interpreter_error;
  EXPECT_EQ(reports[0].first_divergence, -1);
  EXPECT_FALSE(reports[0].kernels.empty());
  EXPECT_NE(reports[1].interpreter_error.find("out of range"), std::string::npos)
      << reports[1].interpreter_error;
  EXPECT_TRUE(reports[1].kernels.empty());
  bool warned = false;
  for (const std::string& w : warnings())
    warned |= w.find("the interpreter rejects this call") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace kiln
