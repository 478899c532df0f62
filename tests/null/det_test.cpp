// kiln::det (the det op) on CPU tensors, the interpreter, against determinants by hand: 1x1,
// 2x2, a row swap's sign, a singular matrix (an exact zero pivot), M = 0 (1, the empty
// product), batches (and an empty batch), f16, NaN, a matrix that needs pivoting to stay exact,
// and the errors for rank < 2, non-square and integer inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using test::expect_error;

std::vector<float> dets(const std::vector<float>& v, const Shape& shape) {
  return det(Tensor::from_vector(v, shape)).to_vector<float>();
}

TEST(Det, SmallMatricesByHand) {
  EXPECT_EQ(dets({-2.5f}, {1, 1}), (std::vector<float>{-2.5f}));
  EXPECT_EQ(dets({1, 2, 3, 4}, {2, 2}), (std::vector<float>{-2}));
  // A permutation matrix: one swap, so -1; then a diagonal one with a zero column first.
  EXPECT_EQ(dets({0, 1, 0, 1, 0, 0, 0, 0, 1}, {3, 3}), (std::vector<float>{-1}));
  EXPECT_EQ(dets({2, 0, 0, 0, 3, 0, 0, 0, 4}, {3, 3}), (std::vector<float>{24}));
  // Singular: the second row is twice the first (exact in binary), so a zero pivot.
  EXPECT_EQ(dets({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3}), (std::vector<float>{0}));
  // Without pivoting the first step divides by 1e-20 and loses the answer entirely.
  const std::vector<float> d = dets({1e-20f, 1, 1, 1}, {2, 2});
  EXPECT_NEAR(d[0], -1.0f, 1e-6f);
}

TEST(Det, BatchesAndEmptyShapes) {
  const std::vector<float> v = {1, 2, 3, 4, 2, 0, 0, 2, 0, 1, 1, 0};
  EXPECT_EQ(dets(v, {3, 2, 2}), (std::vector<float>{-2, 4, -1}));
  Tensor b = det(Tensor::from_vector(v, {1, 3, 2, 2}));
  EXPECT_EQ(b.shape(), (Shape{1, 3}));
  // M = 0: every matrix is empty and its determinant is 1; an empty batch gives no values.
  Tensor e = det(zeros({2, 0, 0}));
  EXPECT_EQ(e.shape(), (Shape{2}));
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(det(zeros({0, 3, 3})).shape(), (Shape{0}));
}

TEST(Det, HalfAndNan) {
  Tensor h = cast(Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}), DType::kF16);
  Tensor d = det(h);
  EXPECT_EQ(d.dtype(), DType::kF16);
  EXPECT_EQ(cast(d, DType::kF32).to_vector<float>(), (std::vector<float>{-2}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(dets({1, nan, 3, 4}, {2, 2})[0]));
}

TEST(Det, BadInputs) {
  expect_error([] { det(zeros({3})); }, {"rank >= 2"});
  expect_error([] { det(zeros({2, 3})); }, {"square"});
  expect_error([] { det(cast(zeros({2, 2}), DType::kI32)); }, {"f32 or f16"});
  expect_error([] { det(Tensor()); }, {"undefined"});
}

}  // namespace
}  // namespace kiln
