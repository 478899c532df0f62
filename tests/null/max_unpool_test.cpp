// max_unpool (ONNX MaxUnpool) on CPU tensors (the interpreter) against values by hand: the
// indices are flat positions in the output, which is the unpooled shape ((D - 1) * stride +
// kernel - pads per spatial dim) or a larger output_shape (MaxPool's input when the pooling
// floored odd sizes), as PyTorch's max_unpool and onnxruntime read them; duplicates (the last
// write wins); an index outside the output and an output_shape smaller than the unpooled shape
// are errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::expect_error;

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor I64(std::vector<int64_t> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}

Tensor max_unpool(const Tensor& x, const Tensor& i, std::vector<int64_t> kernel,
                  std::vector<int64_t> strides, std::vector<int64_t> output = {}) {
  Attrs a;
  a.window.kernel = std::move(kernel);
  a.window.strides = std::move(strides);
  a.window.pads = std::vector<int64_t>(2 * a.window.kernel.size(), 0);
  a.dims = std::move(output);
  return apply_op(OpKind::MaxUnpool, {x, i}, std::move(a), Loc::current());
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(t.shape(), shape) << t.str();
  EXPECT_EQ(t.to_doubles(), want) << t.str();
}

// ONNX's two node cases: 2x2 windows, stride 2, of a 4x4 input whose maxima sat at flat
// positions 5, 7, 13 and 15 of that 4x4 (rows 1 and 3, columns 1 and 3).
TEST(MaxUnpool, OnnxCasesByHand) {
  const Tensor idx = I64({5, 7, 13, 15}, {1, 1, 2, 2});
  expect_values(max_unpool(F({1, 2, 3, 4}, {1, 1, 2, 2}), idx, {2, 2}, {2, 2}), {1, 1, 4, 4},
                {0, 0, 0, 0,  //
                 0, 1, 0, 2,  //
                 0, 0, 0, 0,  //
                 0, 3, 0, 4});
  // output_shape 5x5: flat 5, 7, 13 and 15 of the 5x5 output, [1, 0], [1, 2], [2, 3] and
  // [3, 0] (ONNX's reference puts them in the 4x4 first: a wrong reference, see onnx_test.cpp).
  expect_values(max_unpool(F({5, 6, 7, 8}, {1, 1, 2, 2}), idx, {2, 2}, {2, 2}, {1, 1, 5, 5}),
                {1, 1, 5, 5}, {0, 0, 0, 0, 0,  //
                               5, 0, 6, 0, 0,  //
                               0, 0, 0, 7, 0,  //
                               8, 0, 0, 0, 0,  //
                               0, 0, 0, 0, 0});
}

// 1-D: x [1, 2, 2], kernel and stride 2, so the unpooled shape is [1, 2, 4]; output [2, 3, 5].
TEST(MaxUnpool, LargerOutputInEveryDimByHand) {
  const Tensor x = F({1, 2, 3, 4}, {1, 2, 2});
  // Unpooled flat 1 = [0, 0, 1], 2 = [0, 0, 2], 4 = [0, 1, 0], 7 = [0, 1, 3].
  expect_values(max_unpool(x, I64({1, 2, 4, 7}, {1, 2, 2}), {2}, {2}), {1, 2, 4},
                {0, 1, 2, 0, 3, 0, 0, 4});
  // In [2, 3, 5] the indices are flat positions of the output itself. A duplicate index (1
  // twice): the later element wins.
  std::vector<double> want(30, 0.0);
  want[1] = 2;
  want[4] = 3;
  want[7] = 4;
  expect_values(max_unpool(x, I64({1, 1, 4, 7}, {1, 2, 2}), {2}, {2}, {2, 3, 5}), {2, 3, 5}, want);
}

TEST(MaxUnpool, Errors) {
  const Tensor x = F({1, 2, 3, 4}, {1, 1, 2, 2});
  // Flat 25 is past the 5x5 output.
  expect_error(
      [&] {
        max_unpool(x, I64({5, 7, 13, 25}, {1, 1, 2, 2}), {2, 2}, {2, 2}, {1, 1, 5, 5}).to_doubles();
      },
      {"max_unpool", "index 25 is outside the output's 25 elements"});
  expect_error(
      [&] {
        max_unpool(x, I64({5, 7, 13, 15}, {1, 1, 2, 2}), {2, 2}, {2, 2}, {1, 1, 5, 3}).to_doubles();
      },
      {"max_unpool", "output_shape [1, 1, 5, 3] is smaller than the unpooled shape [1, 1, 4, 4]"});
}

}  // namespace
}  // namespace kiln
