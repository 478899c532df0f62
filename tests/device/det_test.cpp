// kiln::det (the det kernel op) on Vulkan against the interpreter (double LU), on fresh random
// matrices into poisoned memory, eagerly and compiled: orders 1 to 32, odd ones, batches of
// several dims, empty batches and M = 0, singular matrices (an exact zero pivot on both),
// NaN, f16 (and its overflow), pivots whose product leaves f32's range midway, a fused producer
// and consumer, a symbolic batch size, and M = 33, past the kernel's private array, which runs
// on the interpreter with a warning. Random matrices are checked relative to Hadamard's bound
// (the product of the row norms: f32 elimination loses accuracy to cancellation in that
// proportion); well-conditioned ones, up to order 32, relative to the determinant itself.
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
  // Random matrices, checked against Hadamard's bound: loose for large orders (whose
  // determinants are far below the bound), so those are checked below on matrices whose
  // determinant is not small.
  const std::vector<Shape> shapes = {{1, 1},       {2, 2},    {3, 3},    {5, 5},    {4, 6, 6},
                                     {2, 3, 4, 4}, {0, 3, 3}, {2, 0, 0}, {3, 1, 1}, {65, 4, 4}};
  for (const Shape& s : shapes) check_det("det x" + shape_str(s), rnd(DType::kF32, s));
}

// I + noise of size 1 / sqrt(M): well-conditioned, |det| of order 1, so an error relative to
// the determinant itself is checked, at every order up to the kernel's 32.
TEST_F(DeviceDet, WellConditionedMatricesToOrder32) {
  for (int64_t m : {7, 16, 31, 32}) {
    const Shape s = {3, m, m};
    Tensor noise = rnd(DType::kF32, s, test::Dist::uniform(-0.5, 0.5)) *
                   (1.0 / std::sqrt(static_cast<double>(m)));
    std::vector<float> eye(static_cast<size_t>(3 * m * m), 0.0f);
    for (int64_t k = 0; k < 3 * m; ++k) eye[static_cast<size_t>(k * m + k % m)] = 1.0f;
    Tensor x = noise + Tensor::from_vector(eye, s);
    check(
        "det of I + noise x" + shape_str(s), Tol{1e-4, 1e-6},
        [](const Tensor& a) { return det(a); }, x);
  }
}

// Pivots whose running product leaves f32's range although the determinant does not (and one
// whose determinant does): the kernel carries the product's exponent apart.
TEST_F(DeviceDet, BadlyScaledPivots) {
  const std::vector<std::vector<float>> diagonals = {{1e30f, 1e30f, 1e-30f},
                                                     {1e-30f, 1e-30f, 1e30f},
                                                     {1e30f, 1e30f, 1e30f},
                                                     {1e-30f, 1e-30f, 1e-30f},
                                                     {-3e20f, 2e20f, 1e-25f}};
  for (const std::vector<float>& d : diagonals) {
    std::vector<float> v(9, 0.0f);
    for (size_t i = 0; i < 3; ++i) v[i * 4] = d[i];
    check(
        "diagonal " + std::to_string(d[0]) + " " + std::to_string(d[1]) + " " +
            std::to_string(d[2]),
        Tol{1e-5, 0}, [](const Tensor& a) { return det(a); }, Tensor::from_vector(v, {3, 3}));
  }
  // In f16: 200^3 overflows to inf, as the interpreter's rounding gives.
  std::vector<float> v = {200, 0, 0, 0, 200, 0, 0, 0, 200};
  check(
      "f16 overflow", Tol::exact(), [](const Tensor& a) { return det(a); },
      cast(Tensor::from_vector(v, {3, 3}), DType::kF16));
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
