// mod, fmod and the shifts on the interpreter against hand-computed values: the sign rules,
// signed zeros, zero divisors, infinities, exact remainders of huge quotients, integer edges
// (INT_MIN mod -1), shift amounts out of range, dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor F(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n});
}
template <typename T>
Tensor I(std::vector<T> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n});
}

void expect_bits(const Tensor& t, const std::vector<double>& want) {
  std::vector<double> got = t.to_doubles();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "element " << i;
    }
  }
}

TEST(RemainderShift, FloatSigns) {
  Tensor a = F({5.5f, -5.5f, 5.5f, -5.5f, 6, -6, 1, -1, 1, kInf, 1e30f});
  Tensor b = F({2, 2, -2, -2, 3, -3, 0, kInf, -kInf, 2, 3});
  const double nan = std::nan("");
  expect_bits(fmod(a, b), {1.5, -1.5, 1.5, -1.5, 0, -0.0, nan, -1, 1, nan, std::fmod(1e30f, 3.0f)});
  expect_bits(mod(a, b),
              {1.5, 0.5, -0.5, -1.5, 0, -0.0, nan, kInf, -kInf, nan, std::fmod(1e30f, 3.0f)});
  EXPECT_EQ(mod(a, b).dtype(), DType::kF32);
}

TEST(RemainderShift, Integers) {
  Tensor a = I<int32_t>({7, -7, 7, -7, 0, 5, std::numeric_limits<int32_t>::min()});
  Tensor b = I<int32_t>({3, 3, -3, -3, -5, 0, -1});
  EXPECT_EQ(mod(a, b).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, -2, -1, 0, 0, 0}));
  EXPECT_EQ(fmod(a, b).to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 1, -1, 0, 0, 0}));
  EXPECT_EQ(mod(I<int64_t>({-9}), I<int32_t>({4})).dtype(), DType::kI64);
  EXPECT_EQ(mod(I<int64_t>({-9}), I<int32_t>({4})).to_vector<int64_t>(), (std::vector<int64_t>{3}));
}

TEST(RemainderShift, Shifts) {
  Tensor a = I<int32_t>({1, 1, -8, -8, 5, 5, 0x40000000});
  Tensor b = I<int32_t>({3, 32, 1, 40, -1, 0, 1});
  EXPECT_EQ(shift_left(a, b).to_vector<int32_t>(),
            (std::vector<int32_t>{8, 0, -16, 0, 0, 5, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(shift_right(a, b).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 0, -4, -1, 0, 5, 0x20000000}));
  EXPECT_EQ(shift_left(I<int64_t>({1}), I<int64_t>({40})).to_vector<int64_t>(),
            (std::vector<int64_t>{int64_t(1) << 40}));
  EXPECT_EQ(shift_left(I<int64_t>({1}), I<int64_t>({64})).to_vector<int64_t>(),
            (std::vector<int64_t>{0}));
  EXPECT_THROW(shift_left(F({1}), I<int32_t>({1})), Error);
}

}  // namespace
}  // namespace kiln
