// roi_align (ONNX RoiAlign) on CPU tensors (the interpreter) against values by hand. x is the
// linear ramp 4y + x over a 4x4 image, which bilinear interpolation reproduces exactly, so an
// average of samples is the ramp at their mean position; max mode takes the max of the four
// weighted corners; samples outside [-1, H] count as 0; errors for bad indices and shapes.
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

Tensor ramp() {
  std::vector<float> v;
  for (int i = 0; i < 16; ++i) v.push_back(static_cast<float>(i));
  return Tensor::from_vector(v, {1, 1, 4, 4});
}

Tensor roi_align(const Tensor& x, std::vector<float> rois, std::vector<int64_t> batch,
                 std::vector<int64_t> dims, bool max_mode = false, bool half_pixel = false) {
  Attrs a;
  a.index = max_mode ? 1 : 0;
  a.axis = half_pixel ? 0 : 1;
  a.dims = std::move(dims);
  a.scalar = 1.0;
  const auto r = static_cast<int64_t>(rois.size() / 4);
  return apply_op(OpKind::RoiAlign,
                  {x, Tensor::from_vector(rois, {r, 4}), Tensor::from_vector(batch, {r})},
                  std::move(a), Loc::current());
}

TEST(RoiAlign, AverageOfALinearRampByHand) {
  // 2x2 bins of size 1, 2x2 samples each: the means are the bin centres (0.5 and 1.5).
  Tensor y = roi_align(ramp(), {0, 0, 2, 2}, {0}, {2, 2, 2});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{2.5, 3.5, 6.5, 7.5}));
  // half_pixel shifts the roi by -0.5: (0.5, 0.5, 2.5, 2.5) is the same roi.
  y = roi_align(ramp(), {0.5f, 0.5f, 2.5f, 2.5f}, {0}, {2, 2, 2}, false, true);
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{2.5, 3.5, 6.5, 7.5}));
  // Adaptive sampling (ratio 0): ceil(3 / 1) = 3 samples a side at 0.5, 1.5, 2.5.
  y = roi_align(ramp(), {0, 0, 3, 3}, {0}, {1, 1, 0});
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{7.5}));
}

TEST(RoiAlign, MaxOfWeightedCornersByHand) {
  // One sample at (0.5, 0.5): corners 0, 1, 4, 5 with weight 0.25 each -> 1.25 (avg: 2.5).
  EXPECT_EQ(roi_align(ramp(), {0, 0, 1, 1}, {0}, {1, 1, 1}, true).to_doubles(),
            (std::vector<double>{1.25}));
  EXPECT_EQ(roi_align(ramp(), {0, 0, 1, 1}, {0}, {1, 1, 1}).to_doubles(),
            (std::vector<double>{2.5}));
}

TEST(RoiAlign, OutsideAndClampedSamples) {
  // A sample at (-7.5, -7.5) lies outside: 0. One at (3.5, 3.5) clamps to the last pixel, 15.
  EXPECT_EQ(roi_align(ramp(), {-10, -10, -5, -5}, {0}, {1, 1, 1}).to_doubles(),
            (std::vector<double>{0}));
  EXPECT_EQ(roi_align(ramp(), {3, 3, 4, 4}, {0}, {1, 1, 1}).to_doubles(),
            (std::vector<double>{15}));
}

TEST(RoiAlign, ChannelsAndBatches) {
  std::vector<float> v(2 * 2 * 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 16 + 100 * (i / 16));
  Tensor x = Tensor::from_vector(v, {2, 2, 4, 4});
  Tensor y = roi_align(x, {0, 0, 1, 1, 0, 0, 1, 1}, {1, 0}, {1, 1, 1});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 1, 1}));
  // Planes: image 0 channels 0, 1 = +0, +100; image 1 = +200, +300.
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{202.5, 302.5, 2.5, 102.5}));
}

TEST(RoiAlign, Errors) {
  expect_error(
      [&] {
        roi_align(ramp(), {0, 0, 1, 1}, {1}, {1, 1, 1}).to_doubles();
      },
      {"roi_align", "batch index 1 of roi 0 is outside x's 1 images"});
  expect_error(
      [&] {
        roi_align(ramp(), {0, 0, 1, 1}, {0}, {0, 1, 1});
      },
      {"roi_align", "output height and width"});
  expect_error(
      [&] {
        Attrs a;
        a.dims = {1, 1, 1};
        apply_op(OpKind::RoiAlign,
                 {ramp(), Tensor::from_vector(std::vector<float>{0, 0, 1}, {1, 3}),
                  Tensor::from_vector(std::vector<int64_t>{0}, {1})},
                 std::move(a), Loc::current());
      },
      {"roi_align", "rois must be [R, 4]"});
  expect_error(
      [&] {
        Attrs a;
        a.dims = {1, 1, 1};
        apply_op(OpKind::RoiAlign,
                 {ramp(), Tensor::from_vector(std::vector<float>{0, 0, 1, 1}, {1, 4}),
                  Tensor::from_vector(std::vector<int64_t>{0, 0}, {2})},
                 std::move(a), Loc::current());
      },
      {"roi_align"});
}

}  // namespace
}  // namespace kiln
