// kiln::unique on CPU tensors (the interpreter: sort_slices, gathers, scatters, cumsum,
// masked_select) against ONNX Unique's examples worked by hand: sorted and in first-occurrence
// order, flattened and along axes (negative too), NaN equal to NaN and sorted last, -0.0 ==
// 0.0, integer and bool inputs, empty input, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using test::expect_error;
using V = std::vector<int64_t>;

void expect_ints(const UniqueResult& r, const V& indices, const V& inverse, const V& counts) {
  EXPECT_EQ(r.indices.to_vector<int64_t>(), indices);
  EXPECT_EQ(r.inverse.to_vector<int64_t>(), inverse);
  EXPECT_EQ(r.counts.to_vector<int64_t>(), counts);
}

TEST(Unique, FlattenedSortedAndNot) {
  Tensor x = Tensor::from_vector(std::vector<float>{2, 1, 1, 3, 4, 3}, {2, 3});
  UniqueResult s = unique(x);
  EXPECT_EQ(s.values.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  expect_ints(s, {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1});
  UniqueResult u = unique(x, std::nullopt, false);
  EXPECT_EQ(u.values.to_vector<float>(), (std::vector<float>{2, 1, 3, 4}));
  expect_ints(u, {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1});
}

TEST(Unique, AlongAxes) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 0, 0, 1, 0, 0, 2, 3, 4}, {3, 3});
  UniqueResult r = unique(x, 0);
  EXPECT_EQ(r.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{1, 0, 0, 2, 3, 4}));
  expect_ints(r, {0, 2}, {0, 0, 1}, {2, 1});
  // Columns of [[1, 0, 0], [1, 0, 0], [2, 3, 3]]: (0, 0, 3) twice sorts before (1, 1, 2).
  Tensor y = Tensor::from_vector(std::vector<float>{1, 0, 0, 1, 0, 0, 2, 3, 3}, {3, 3});
  r = unique(y, -1);
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{0, 1, 0, 1, 3, 2}));
  expect_ints(r, {1, 0}, {1, 0, 0}, {2, 1});
  // [2, 4, 2] along axis 1: slices (1,1,1,1), (0,1,0,1), (2,1,2,1), (0,1,0,1).
  Tensor z = Tensor::from_vector(std::vector<float>{1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1},
                                 {2, 4, 2});
  r = unique(z, 1);
  EXPECT_EQ(r.values.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
  expect_ints(r, {1, 0, 2}, {1, 0, 2, 0}, {2, 1, 1});
  r = unique(z, 1, false);
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1}));
  expect_ints(r, {0, 1, 2}, {0, 1, 2, 1}, {1, 2, 1});
}

TEST(Unique, NanAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::from_vector(std::vector<float>{nan, 1, nan, -0.0f, 0.0f}, {5});
  UniqueResult r = unique(x);
  const std::vector<float> v = r.values.to_vector<float>();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_TRUE(v[0] == 0.0f && std::signbit(v[0]));  // -0.0 occurs first
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_TRUE(std::isnan(v[2]));
  expect_ints(r, {3, 1, 0}, {2, 1, 2, 0, 0}, {2, 1, 2});
}

TEST(Unique, IntegersBoolsAndEmpty) {
  const int64_t big = int64_t{1} << 53;
  Tensor i = Tensor::from_vector(std::vector<int64_t>{big + 1, big, big + 1, -7}, {4});
  UniqueResult r = unique(i);
  EXPECT_EQ(r.values.to_vector<int64_t>(), (V{-7, big, big + 1}));
  expect_ints(r, {3, 1, 0}, {2, 1, 2, 0}, {1, 1, 2});
  Tensor b = cast(Tensor::from_vector(std::vector<float>{1, 0, 1, 1}, {4}), DType::kBool);
  r = unique(b, std::nullopt, false);
  EXPECT_EQ(cast(r.values, DType::kI64).to_vector<int64_t>(), (V{1, 0}));
  expect_ints(r, {0, 1}, {0, 1, 0, 0}, {3, 1});
  r = unique(zeros({0}));
  EXPECT_EQ(r.values.numel(), 0);
  EXPECT_EQ(r.indices.numel(), 0);
  EXPECT_EQ(r.inverse.numel(), 0);
  EXPECT_EQ(r.counts.numel(), 0);
}

TEST(Unique, BadInputs) {
  expect_error([] { unique(Tensor()); }, {"undefined"});
  expect_error([] { unique(zeros({2, 3}), 2); }, {"axis 2"});
  expect_error([] { unique(zeros({2, 3}), -3); }, {"axis -3"});
}

}  // namespace
}  // namespace kiln
