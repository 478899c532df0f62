// topk and its topk_indices op on CPU tensors (the interpreter) against orders by hand: equal
// elements by position, NaN the largest (first for largest, last for smallest), -0.0 == 0.0,
// ±inf, exact i64 comparisons above 2^53, several rows, k = 0 and k = N, host_topk agreeing
// with the op, and the errors for bad k, rank 0 and bad attributes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eager/host_ops.h"
#include "expect_error.h"
#include "kiln/kiln.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::expect_error;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int64_t> indices(const Tensor& x, int64_t k, bool largest) {
  return topk(x, k, largest).second.to_vector<int64_t>();
}

// Positions: 0: 1, 1: NaN, 2: 3, 3: -inf, 4: 3, 5: NaN, 6: -0.0, 7: 0.0, 8: inf.
Tensor specials() {
  return Tensor::from_vector(std::vector<float>{1, kNan, 3, -kInf, 3, kNan, -0.0f, 0.0f, kInf},
                             {9});
}

TEST(TopK, LargestPutsNanFirstAndTiesByPosition) {
  EXPECT_EQ(indices(specials(), 9, true), (std::vector<int64_t>{1, 5, 8, 2, 4, 0, 6, 7, 3}));
  EXPECT_EQ(indices(specials(), 4, true), (std::vector<int64_t>{1, 5, 8, 2}));
}

TEST(TopK, SmallestPutsNanLastAndTiesByPosition) {
  EXPECT_EQ(indices(specials(), 9, false), (std::vector<int64_t>{3, 6, 7, 0, 2, 4, 8, 1, 5}));
  EXPECT_EQ(indices(specials(), 2, false), (std::vector<int64_t>{3, 6}));
}

TEST(TopK, ValuesAreTheGatheredElements) {
  auto [values, idx] = topk(specials(), 9, false);
  const std::vector<float> v = values.to_vector<float>();
  ASSERT_EQ(v.size(), 9u);
  EXPECT_EQ(v[0], -kInf);
  EXPECT_TRUE(v[1] == 0.0f && std::signbit(v[1]));  // -0.0 (position 6) before 0.0 (7)
  EXPECT_TRUE(v[2] == 0.0f && !std::signbit(v[2]));
  EXPECT_EQ((std::vector<float>{v[3], v[4], v[5], v[6]}), (std::vector<float>{1, 3, 3, kInf}));
  EXPECT_TRUE(std::isnan(v[7]) && std::isnan(v[8]));
  EXPECT_EQ(values.meta().str(), "f32[9]");
  EXPECT_EQ(idx.meta().str(), "i64[9]");
}

TEST(TopK, RowsAndEdgeKs) {
  // Row 0: 2 2 1 2; row 1: 0 5 5 -1; row 2: 7 7 7 7.
  Tensor x = Tensor::from_vector(std::vector<float>{2, 2, 1, 2, 0, 5, 5, -1, 7, 7, 7, 7}, {3, 4});
  EXPECT_EQ(indices(x, 2, true), (std::vector<int64_t>{0, 1, 1, 2, 0, 1}));
  EXPECT_EQ(indices(x, 3, false), (std::vector<int64_t>{2, 0, 1, 3, 0, 1, 0, 1, 2}));
  EXPECT_EQ(indices(x, 4, true), (std::vector<int64_t>{0, 1, 3, 2, 1, 2, 0, 3, 0, 1, 2, 3}));
  auto [v0, i0] = topk(x, 0, true);
  EXPECT_EQ(v0.meta().str(), "f32[3, 0]");
  EXPECT_EQ(i0.meta().str(), "i64[3, 0]");
  Tensor one = Tensor::from_vector(std::vector<float>{4, -4}, {2, 1});
  EXPECT_EQ(indices(one, 1, true), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(topk(one, 1, false).first.to_vector<float>(), (std::vector<float>{4, -4}));
}

TEST(TopK, I64ComparesExactly) {
  const int64_t big = int64_t{1} << 53;  // big + 1 and big are one double
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  Tensor x = Tensor::from_vector(std::vector<int64_t>{big + 1, big, lo, hi, big + 1}, {5});
  EXPECT_EQ(indices(x, 5, true), (std::vector<int64_t>{3, 0, 4, 1, 2}));
  EXPECT_EQ(indices(x, 5, false), (std::vector<int64_t>{2, 1, 0, 4, 3}));
  EXPECT_EQ(topk(x, 2, true).first.to_vector<int64_t>(), (std::vector<int64_t>{hi, big + 1}));
}

TEST(TopK, HostTopkUsesTheSameOrder) {
  HostTensor x(TensorMeta{DType::kF32, {9}});
  const std::vector<float> v = specials().to_vector<float>();
  for (int64_t i = 0; i < 9; ++i) x.set(i, v[static_cast<size_t>(i)]);
  for (bool largest : {true, false}) {
    auto r = host_topk(x, 9, largest);
    ASSERT_TRUE(r.ok());
    const int64_t* got = r->second.ptr<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(got, got + 9), indices(specials(), 9, largest));
  }
}

TEST(TopK, Errors) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3});
  expect_error([&] { topk(x, 4); }, {"topk", "k = 4 is out of range"});
  expect_error([&] { topk(x, -1); }, {"topk", "k = -1 is out of range"});
  expect_error([&] { topk(Tensor::from_vector(std::vector<float>{1}, {}), 1); },
               {"topk of a rank-0 tensor"});
  expect_error(
      [&] {
        Attrs a;
        a.dims = {1};
        a.index = 2;
        apply_op(OpKind::TopKIndices, {x}, std::move(a), Loc::current());
      },
      {"topk_indices", "order must be smallest or largest"});
  expect_error(
      [&] {
        Attrs a;
        a.dims = {4};
        apply_op(OpKind::TopKIndices, {x}, std::move(a), Loc::current());
      },
      {"topk_indices", "k = 4 exceeds the last dim"});
}

}  // namespace
}  // namespace kiln
