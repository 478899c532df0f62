// The elementwise math ops on the interpreter against hand-computed values: result dtypes
// (integers compute in f32, except floor / ceil / round, which pass integers through), values
// inside and outside each domain, signed zeros, and round's ties to even.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor F(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n});
}

void expect_values(const Tensor& t, DType dt, const std::vector<double>& want, double tol = 1e-6) {
  EXPECT_EQ(t.dtype(), dt) << t.str();
  std::vector<double> got = t.to_doubles();
  ASSERT_EQ(got.size(), want.size()) << t.str();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
    } else if (std::isinf(want[i]) || want[i] == 0) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
    }
  }
}

TEST(UnaryMath, Trigonometric) {
  expect_values(sin(F({0, -0.0f, 1.5707963f, kInf, kNaN})), DType::kF32, {0, -0.0, 1, kNaN, kNaN});
  expect_values(cos(F({0, 3.14159265f, -kInf})), DType::kF32, {1, -1, kNaN});
  expect_values(tan(F({0, -0.0f, 0.78539816f})), DType::kF32, {0, -0.0, 1});
  expect_values(asin(F({1, -1, -0.0f, 0.5f, 1.0001f, -2})), DType::kF32,
                {M_PI / 2, -M_PI / 2, -0.0, M_PI / 6, kNaN, kNaN});
  expect_values(acos(F({1, -1, 0, 1.5f})), DType::kF32, {0, M_PI, M_PI / 2, kNaN});
  expect_values(atan(F({kInf, -kInf, -0.0f, 1})), DType::kF32,
                {M_PI / 2, -M_PI / 2, -0.0, M_PI / 4});
}

TEST(UnaryMath, Hyperbolic) {
  expect_values(sinh(F({0, -0.0f, 1, -kInf, 89})), DType::kF32,
                {0, -0.0, std::sinh(1.0), -kInf, std::sinh(89.0)}, 1e-6);
  expect_values(cosh(F({0, -1, kInf, 89})), DType::kF32, {1, std::cosh(1.0), kInf, std::cosh(89.0)},
                1e-6);
  expect_values(asinh(F({0, -0.0f, 1, -kInf})), DType::kF32, {0, -0.0, std::asinh(1.0), -kInf});
  expect_values(acosh(F({1, 2, 0.5f, -1, kInf})), DType::kF32,
                {0, std::acosh(2.0), kNaN, kNaN, kInf});
  expect_values(atanh(F({0, -0.0f, 1, -1, 0.5f, 1.5f})), DType::kF32,
                {0, -0.0, kInf, -kInf, std::atanh(0.5), kNaN});
}

TEST(UnaryMath, Log1p) {
  // Accurate next to zero, where log(1 + x) would lose x: log1p(1e-7) = 1e-7 - 5e-15.
  expect_values(log1p(F({0, -0.0f, 1e-7f, -1, -2, kInf, kNaN, 1})), DType::kF32,
                {0, -0.0, 1e-7, -kInf, kNaN, kInf, kNaN, std::log(2.0)}, 1e-6);
  EXPECT_NEAR(log1p(F({1e-7f})).to_doubles()[0], std::log1p(double(1e-7f)), 1e-13);
  expect_values(log1p(Tensor::from_vector<int32_t>({0, 1}, {2})), DType::kF32, {0, std::log(2.0)});
}

TEST(UnaryMath, IntegersComputeInFloat) {
  Tensor i = Tensor::from_vector<int32_t>({0, 1, -2}, {3});
  expect_values(sin(i), DType::kF32, {0, std::sin(1.0), std::sin(-2.0)});
  expect_values(cosh(i), DType::kF32, {1, std::cosh(1.0), std::cosh(2.0)});
  EXPECT_THROW(sin(cast(i, DType::kBool)), Error);
}

TEST(UnaryMath, FloorCeilRound) {
  Tensor x = F({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, -0.2f, 0.7f, -0.0f, kInf, kNaN});
  expect_values(round(x), DType::kF32, {-2, -2, -0.0, 0, 2, 2, -0.0, 1, -0.0, kInf, kNaN});
  expect_values(floor(x), DType::kF32, {-3, -2, -1, 0, 1, 2, -1, 0, -0.0, kInf, kNaN});
  expect_values(ceil(x), DType::kF32, {-2, -1, -0.0, 1, 2, 3, -0.0, 1, -0.0, kInf, kNaN});
  // Integers pass through in their own dtype.
  Tensor i = Tensor::from_vector<int64_t>({-7, 0, 9}, {3});
  EXPECT_EQ(floor(i).dtype(), DType::kI64);
  EXPECT_EQ(round(i).to_vector<int64_t>(), (std::vector<int64_t>{-7, 0, 9}));
  EXPECT_EQ(ceil(Tensor::from_vector<int32_t>({3}, {1})).to_vector<int32_t>(),
            (std::vector<int32_t>{3}));
  // f16 stays f16.
  EXPECT_EQ(round(cast(x, DType::kF16)).dtype(), DType::kF16);
}

}  // namespace
}  // namespace kiln
