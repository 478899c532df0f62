// kiln::det (the det kernel op) on Vulkan against the interpreter (double LU), on fresh random
// matrices into poisoned memory, eagerly and compiled: orders 1 to 32, odd ones, batches of
// several dims, empty batches and M = 0, singular matrices (an exact zero pivot on both),
// NaN, f16, a fused producer and consumer, a symbolic batch size, and M = 33, past the kernel's
// private array, which runs on the interpreter with a warning. The allowance per matrix is
// relative to Hadamard's bound (the product of its row norms), since f32 elimination loses
// accuracy to cancellation in that proportion, not in the determinant's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Tol;

/// Each matrix's Hadamard bound: the product of its rows' Euclidean norms.
std::vector<double> hadamard_bounds(const Tensor& x) {
  const std::vector<double> v = x.to_doubles();
  const Shape s = x.shape();
  const auto m = static_cast<size_t>(s.back());
  const int64_t count = numel(Shape(s.begin(), s.end() - 2));
  std::vector<double> out;
  for (size_t k = 0; k < static_cast<size_t>(count); ++k) {
    double b = 1;
    for (size_t r = 0; r < m; ++r) {
      double sq = 0;
      for (size_t c = 0; c < m; ++c) sq += v[(k * m + r) * m + c] * v[(k * m + r) * m + c];
      b *= std::sqrt(sq);
    }
    out.push_back(b);
  }
  return out;
}

class DeviceDet : public test::DeviceOpTest {
 protected:
  void check_det(const std::string& label, const Tensor& x) {
    CheckOptions opt;
    opt.scale = hadamard_bounds(x);
    opt.scale_rel = 1e-5;
    check_with(
        label, Tol{1e-5, 0}, opt, [](const Tensor& a) { return det(a); }, x);
  }
};

TEST_F(DeviceDet, MatchesTheInterpreter) {
  const std::vector<Shape> shapes = {{1, 1},    {2, 2},       {3, 3},    {5, 5},      {7, 7},
                                     {4, 8, 8}, {2, 3, 6, 6}, {16, 16},  {3, 32, 32}, {0, 3, 3},
                                     {2, 0, 0}, {3, 1, 1},    {65, 4, 4}};
  for (const Shape& s : shapes) check_det("det x" + shape_str(s), rnd(DType::kF32, s));
}

TEST_F(DeviceDet, SingularNanAndHalf) {
  // Rows 0 and 2 equal: an exact zero pivot in the interpreter and the kernel alike once the
  // first elimination step subtracts the same multiple from both (identical rows stay equal).
  std::vector<float> v = {1, 2, 3, 4, 5, 6, 1, 2, 3};
  check_det("singular 3x3", Tensor::from_vector(v, {3, 3}));
  check_det("zero matrix", zeros({2, 4, 4}));
  v = {1, std::numeric_limits<float>::quiet_NaN(), 3, 4};
  check_det("NaN", Tensor::from_vector(v, {2, 2}));
  for (const Shape& s : {Shape{3, 3}, Shape{5, 4, 4}})
    check_with(
        "f16 x" + shape_str(s), Tol{2e-3, 2e-3}, {}, [](const Tensor& a) { return det(a); },
        rnd(DType::kF16, s));
}

TEST_F(DeviceDet, FusedProducerAndConsumer) {
  Tensor x = rnd(DType::kF32, {6, 4, 4});
  CheckOptions opt;
  opt.scale = hadamard_bounds(x * 2.0 + 1.0);
  opt.scale_rel = 1e-5;
  check_with(
      "det(x * 2 + 1) * 3", Tol{1e-5, 0}, opt, [](const Tensor& a) { return det(a * 2.0 + 1.0); },
      x);
}

// One compile serves every batch size; the order is fixed by a guard.
TEST_F(DeviceDet, SymbolicBatch) {
  auto fn = [](const Tensor& x) { return det(x); };
  auto compiled = compile(fn, {.name = "sym_det", .dynamic = Dynamic::kTrue});
  for (int64_t b : {3, 9, 17}) {
    Tensor x = rnd(DType::kF32, {b, 5, 5});
    Tensor want = fn(x);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    test::expect_close(got, want, Tol{1e-5, 0}, "symbolic batch " + std::to_string(b),
                       hadamard_bounds(x), 1e-5);
  }
  for (const EntryInfo& e : compiled.entries()) EXPECT_TRUE(e.on_device) << e.graph;
}

TEST_F(DeviceDet, PastThePrivateArrayRunsOnTheInterpreter) {
  allow_cpu_fallback_ = true;
  Tensor x = rnd(DType::kF32, {2, 33, 33});
  const size_t before = warnings().size();
  auto compiled = compile([](const Tensor& a) { return det(a); }, {.name = "det33"});
  test::poison_device_memory(1 << 20);
  test::expect_close(compiled(x.to(Device::vulkan())), det(x), Tol{1e-5, 0}, "order 33",
                     hadamard_bounds(x), 1e-5);
  const std::vector<std::string> w = warnings();
  ASSERT_GT(w.size(), before) << "no fallback warning";
  EXPECT_NE(w[before].find("private memory"), std::string::npos) << w[before];
}

}  // namespace
}  // namespace kiln
