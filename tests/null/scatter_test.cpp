// scatter_elements and scatter_nd on CPU tensors (the interpreter) against values by hand:
// each axis, negative indices, duplicates (the last update wins with no reduction; add and
// mul combine them all), integer wraparound, bool data, empty index sets; shape-rule errors
// and out-of-range indices (a clear error).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor I64(std::vector<int64_t> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(t.shape(), shape) << t.str();
  EXPECT_EQ(t.to_doubles(), want) << t.str();
}

using test::expect_error;

TEST(Scatter, ElementsByHand) {
  Tensor data = F({1, 2, 3, 4, 5, 6}, {2, 3});
  // Axis 1: row r's updates land at columns indices[r, :]; -1 is the last column.
  expect_values(scatter_elements(data, 1, I64({2, -3, 1, 1}, {2, 2}), F({10, 20, 30, 40}, {2, 2})),
                {2, 3}, {20, 2, 10, 4, 40, 6});
  // Axis 0 (given as -2), indices narrower than data.
  expect_values(scatter_elements(data, -2, I64({1, 0}, {1, 2}), F({7, 8}, {1, 2})), {2, 3},
                {1, 8, 3, 7, 5, 6});
  // Duplicates: the last update wins; add and mul combine every one into data's value.
  Tensor dup = I64({0, 2, 0, 0}, {4});
  Tensor u = F({2, 3, 4, 5}, {4});
  Tensor d1 = F({1, 1, 1}, {3});
  expect_values(scatter_elements(d1, 0, dup, u), {3}, {5, 1, 3});
  expect_values(scatter_elements(d1, 0, dup, u, ScatterReduction::kAdd), {3}, {12, 1, 4});
  expect_values(scatter_elements(d1, 0, dup, u, ScatterReduction::kMul), {3}, {40, 1, 3});
  // i32 wraps around.
  Tensor big = Tensor::from_vector(std::vector<int32_t>{INT32_MAX}, {1});
  expect_values(
      scatter_elements(big, 0, I64({0}, {1}), Tensor::from_vector(std::vector<int32_t>{1}, {1}),
                       ScatterReduction::kAdd),
      {1}, {static_cast<double>(INT32_MIN)});
  // Bool data; an empty index set leaves data as it is.
  Tensor b = Tensor::full({3}, 0, DType::kBool);
  expect_values(scatter_elements(b, 0, I64({1}, {1}), Tensor::full({1}, 1, DType::kBool)), {3},
                {0, 1, 0});
  expect_values(scatter_elements(d1, 0, I64({}, {0}), F({}, {0})), {3}, {1, 1, 1});
}

TEST(Scatter, NDByHand) {
  Tensor data = F({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  // m = 1: whole [2, 2] slices.
  expect_values(scatter_nd(data, I64({1}, {1, 1}), F({9, 9, 9, 9}, {1, 2, 2})), {2, 2, 2},
                {1, 2, 3, 4, 9, 9, 9, 9});
  // m = 2, negative indices: rows of 2.
  expect_values(scatter_nd(data, I64({0, -1, -2, 0}, {2, 2}), F({10, 11, 12, 13}, {2, 2})),
                {2, 2, 2}, {12, 13, 10, 11, 5, 6, 7, 8});
  // m = 3, duplicates, each reduction.
  Tensor idx = I64({0, 0, 1, 0, 0, 1, 1, 1, 1}, {3, 3});
  Tensor u = F({2, 3, 4}, {3});
  expect_values(scatter_nd(data, idx, u), {2, 2, 2}, {1, 3, 3, 4, 5, 6, 7, 4});
  expect_values(scatter_nd(data, idx, u, ScatterReduction::kAdd), {2, 2, 2},
                {1, 7, 3, 4, 5, 6, 7, 12});
  expect_values(scatter_nd(data, idx, u, ScatterReduction::kMul), {2, 2, 2},
                {1, 12, 3, 4, 5, 6, 7, 32});
}

TEST(Scatter, Errors) {
  Tensor data = F({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error(
      [&] {
        scatter_elements(data, 1, I64({3}, {1, 1}), F({1}, {1, 1})).to_doubles();
      },
      {"scatter_elements", "index 3 is out of range [-3, 3)"});
  expect_error(
      [&] {
        scatter_nd(data, I64({-3}, {1, 1}), F({1, 1, 1}, {1, 3})).to_doubles();
      },
      {"scatter_nd", "index -3 is out of range [-2, 2)"});
  expect_error(
      [&] {
        scatter_elements(data, 1, I64({0, 0}, {1, 2}), F({1}, {1, 1}));
      },
      {"updates must have the indices' shape [1, 2]"});
  expect_error(
      [&] {
        scatter_elements(data, 2, I64({0}, {1, 1}), F({1}, {1, 1}));
      },
      {"axis 2 is out of range"});
  expect_error(
      [&] {
        scatter_elements(data, 1, I64({0, 0, 0}, {3, 1}), F({1, 1, 1}, {3, 1}));
      },
      {"scatter_elements(f32[2, 3], i64[3, 1], f32[3, 1])", "indices dim 0 (3) exceeds"});
  expect_error(
      [&] {
        scatter_elements(data, 1, F({0}, {1, 1}), F({1}, {1, 1}));
      },
      {"indices must be i32 or i64"});
  expect_error(
      [&] {
        scatter_nd(data, I64({0}, {1, 1}), Tensor::full({1, 3}, 1, DType::kI32));
      },
      {"updates must have data's dtype f32"});
  expect_error(
      [&] {
        scatter_nd(data, I64({0, 0, 0}, {1, 3}), F({1}, {1}));
      },
      {"last dim (3) must be in [1, 2]"});
  expect_error(
      [&] {
        scatter_nd(data, I64({0}, {1, 1}), F({1, 1}, {1, 2}));
      },
      {"updates must have shape [1, 3]"});
  Tensor b = Tensor::full({3}, 0, DType::kBool);
  expect_error(
      [&] {
        scatter_nd(b, I64({0}, {1, 1}), Tensor::full({1}, 1, DType::kBool), ScatterReduction::kAdd);
      },
      {"need a numeric dtype"});
}

}  // namespace
}  // namespace kiln
