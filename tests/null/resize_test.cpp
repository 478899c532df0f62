// interpolate (ONNX Resize) and grid_sample on the interpreter against hand-computed values:
// nearest roundings, linear and cubic under the coordinate transformations, tf_crop_and_resize's
// extrapolation, integer nearest, shape errors, symbolic sizes through kiln::compile, and
// grid_sample's modes and padding.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

using F = std::vector<float>;

Tensor row(const F& v) {
  return Tensor::from_vector<float>(v, {static_cast<int64_t>(v.size())});
}

void expect_near(const Tensor& t, const F& want) {
  const F got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

TEST(Resize, NearestRoundings) {
  // asymmetric, scale 2.5 from 2 to 5: x = q / 2.5 = 0, 0.4, 0.8, 1.2, 1.6.
  InterpolateOptions opt;
  opt.coord = CoordTransform::kAsymmetric;
  opt.scales = {2.5};
  Tensor x = row({10, 20});
  opt.nearest = NearestRounding::kFloor;
  expect_near(interpolate(x, {5}, opt), {10, 10, 10, 20, 20});
  opt.nearest = NearestRounding::kCeil;
  expect_near(interpolate(x, {5}, opt), {10, 20, 20, 20, 20});
  opt.nearest = NearestRounding::kRoundPreferFloor;
  expect_near(interpolate(x, {5}, opt), {10, 10, 20, 20, 20});
  // Ties: scale 2 gives x = 0, 0.5, 1, 1.5.
  opt.scales = {2.0};
  expect_near(interpolate(x, {4}, opt), {10, 10, 20, 20});
  opt.nearest = NearestRounding::kRoundPreferCeil;
  expect_near(interpolate(x, {4}, opt), {10, 20, 20, 20});
  Tensor xi = Tensor::from_vector<int32_t>({7, -3}, {2});
  Tensor yi = interpolate(xi, {4}, opt);
  EXPECT_EQ(yi.dtype(), DType::kI32);
  EXPECT_EQ(yi.to_vector<int32_t>(), (std::vector<int32_t>{7, -3, -3, -3}));
}

TEST(Resize, LinearCoordinates) {
  InterpolateOptions opt;
  opt.mode = InterpMode::kLinear;
  Tensor x = row({1, 2});
  // half_pixel: x = (q + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (edges clamp).
  expect_near(interpolate(x, {4}, opt), {1, 1.25, 1.75, 2});
  opt.coord = CoordTransform::kAsymmetric;  // 0, 0.5, 1, 1.5
  expect_near(interpolate(x, {4}, opt), {1, 1.5, 2, 2});
  opt.coord = CoordTransform::kAlignCorners;  // q * 1 / 3
  expect_near(interpolate(x, {4}, opt), {1, 4.0f / 3, 5.0f / 3, 2});
  // 2-D: bilinear over both axes, the batch axis unchanged.
  Tensor x2 = Tensor::from_vector<float>({0, 1, 2, 3}, {1, 2, 2});
  expect_near(interpolate(x2, {1, 3, 3}, opt), {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
}

TEST(Resize, CubicAndCrop) {
  InterpolateOptions opt;
  opt.mode = InterpMode::kCubic;
  opt.coord = CoordTransform::kAsymmetric;
  // Integer coordinates reproduce the input; at x = 0.5 with A = -0.75 the weights are
  // -0.09375, 0.59375, 0.59375, -0.09375 over taps -1 (clamped to 0) .. 2.
  Tensor x = row({0, 1, 4, 9});
  const F y = interpolate(x, {8}, opt).to_vector<float>();
  EXPECT_FLOAT_EQ(y[0], 0);
  EXPECT_FLOAT_EQ(y[2], 1);
  EXPECT_NEAR(y[1], -0.09375 * 0 + 0.59375 * 0 + 0.59375 * 1 - 0.09375 * 4, 1e-6);
  opt.exclude_outside = true;  // tap -1 dropped, the others renormalised by 1.09375
  EXPECT_NEAR(interpolate(x, {8}, opt).to_vector<float>()[1],
              (0.59375 * 0 + 0.59375 * 1 - 0.09375 * 4) / 1.09375, 1e-6);
  InterpolateOptions crop;
  crop.mode = InterpMode::kLinear;
  crop.coord = CoordTransform::kTfCropAndResize;
  crop.roi = {0.5, 1.5};  // x = 1.5 + q * 1 * 3 / 2 = 1.5, 3, 4.5 (outside)
  crop.extrapolation_value = -1;
  expect_near(interpolate(x, {3}, crop), {2.5, 9, -1});
}

TEST(Resize, Errors) {
  Tensor x = row({1, 2});
  EXPECT_THROW(interpolate(x, {2, 2}), Error);  // a size per axis
  InterpolateOptions opt;
  opt.mode = InterpMode::kLinear;
  EXPECT_THROW(interpolate(Tensor::from_vector<int32_t>({1, 2}, {2}), {4}, opt), Error);
  opt.coord = CoordTransform::kTfCropAndResize;  // without a roi
  EXPECT_THROW(interpolate(x, {4}, opt), Error);
  EXPECT_THROW(grid_sample(Tensor::from_vector<float>({1, 2}, {1, 1, 1, 2}),
                           Tensor::from_vector<float>({0, 0, 0}, {1, 1, 1, 3})),
               Error);
}

TEST(Resize, CompiledSymbolicBatch) {
  InterpolateOptions opt;
  opt.mode = InterpMode::kLinear;
  auto f = compile(
      [&](const Tensor& t) {
        return interpolate(t, {-1, 4}, opt);
      },
      {.name = "resize_dynamic"});
  for (int64_t n : {2, 3}) {
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.insert(v.end(), {1, 2});
    Tensor y = f(Tensor::from_vector<float>(v, {n, 2}));
    ASSERT_EQ(y.shape(), (Shape{n, 4}));
    expect_near(y, [&] {
      F w;
      for (int64_t i = 0; i < n; ++i) w.insert(w.end(), {1, 1.25, 1.75, 2});
      return w;
    }());
  }
}

TEST(GridSample, ModesAndPadding) {
  // x = [[0, 1], [2, 3]]; grid points (x, y) normalised.
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3}, {1, 1, 2, 2});
  Tensor g = Tensor::from_vector<float>({-1, -1, 1, 1, 0, 0, 2, 0}, {1, 1, 4, 2});
  // align_corners: corners map to pixel centres; (0, 0) is the middle; (2, 0) is pixel
  // (1.5, 0.5), whose taps in column 2 read 0: (1 + 3) / 4.
  expect_near(grid_sample(x, g, InterpMode::kLinear, 0, true), {0, 3, 1.5, 1});
  expect_near(grid_sample(x, g, InterpMode::kLinear, 1, true), {0, 3, 1.5, 2});
  // Without align_corners -1 is the outer edge: (-0.5, -0.5) weighs pixel 0 by 1/4.
  expect_near(grid_sample(x, g, InterpMode::kLinear, 0, false), {0, 0.75, 1.5, 0});
  // Reflection about the edges (-0.5 and 1.5): x = 2 -> pixel 2.5 -> reflected to 0.5; nearest
  // rounds half to even: 0.5 -> 0, 1.5 -> 2, clamped to 1.
  expect_near(grid_sample(x, g, InterpMode::kNearest, 2, false), {0, 3, 0, 0});
}

}  // namespace
}  // namespace kiln
