// interpolate (ONNX Resize) and grid_sample on Vulkan against the interpreter, on fresh random
// data into poisoned memory, eagerly and compiled: every mode, nearest rounding and coordinate
// transformation, up- and downsampling, odd sizes, size-1 and empty axes, ranks 1 to 4,
// scales given or the size ratio, fused producers, f32, f16 and integer (nearest) inputs;
// grid_sample's three modes, three padding modes and align_corners with grid points outside
// [-1, 1]; symbolic sizes under one compile.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;
using V = std::vector<int64_t>;

class DeviceResize : public test::DeviceOpTest {};

struct ResizeCase {
  Shape x;
  V sizes;
  std::vector<double> scales;  // empty: the size ratio
};

const std::vector<ResizeCase>& resize_cases() {
  static const std::vector<ResizeCase> cases = {
      {{2, 3, 5, 7}, {2, 3, 9, 4}, {}},              // up and down, odd sizes
      {{1, 2, 4, 4}, {1, 2, 8, 3}, {1, 1, 2, 0.8}},  // scales given
      {{1, 1, 1, 5}, {1, 1, 3, 1}, {}},              // from and to size 1
      {{13}, {6}, {}},                               // 1-D
      {{2, 5, 3}, {3, -1, 7}, {1.5, 1, 2.5}},        // every axis, -1 keeps one
      {{0, 3, 4}, {0, 3, 9}, {}},                    // empty
  };
  return cases;
}

std::string label(const std::string& what, const ResizeCase& c, DType dt) {
  return what + " " + shape_str(c.x) + " -> " + shape_str(c.sizes) + " " + dtype_name(dt);
}

Tol tol_for(DType dt) {
  // Kernel and interpreter compute the same float operations in the same order; f16 rounds once.
  return dt == DType::kF16 ? Tol{1e-3, 1e-3} : Tol{1e-6, 1e-6};
}

TEST_F(DeviceResize, NearestEveryRoundingAndCoordinate) {
  for (const ResizeCase& c : resize_cases())
    for (int coord = 0; coord < 6; ++coord)
      for (int nearest = 0; nearest < 4; ++nearest) {
        InterpolateOptions opt;
        opt.coord = static_cast<CoordTransform>(coord);
        opt.nearest = static_cast<NearestRounding>(nearest);
        opt.scales = c.scales;
        if (opt.coord == CoordTransform::kTfCropAndResize) {
          opt.roi.assign(c.x.size(), -0.2);
          opt.roi.resize(2 * c.x.size(), 1.1);
          opt.extrapolation_value = 7.5;
        }
        const DType dt = (coord + nearest) % 3 == 0 ? DType::kI32 : DType::kF32;
        check(
            label("nearest c" + std::to_string(coord) + " n" + std::to_string(nearest), c, dt),
            Tol::exact(), [&](const Tensor& x) { return interpolate(x, c.sizes, opt); },
            rnd(dt, c.x, Dist::uniform(-9, 9)));
      }
}

TEST_F(DeviceResize, LinearAndCubicEveryCoordinate) {
  for (const ResizeCase& c : resize_cases())
    for (int coord = 0; coord < 6; ++coord)
      for (int mode = 1; mode <= 3; ++mode) {  // linear, cubic, cubic A=-0.5 exclude_outside
        InterpolateOptions opt;
        opt.mode = mode == 1 ? InterpMode::kLinear : InterpMode::kCubic;
        if (mode == 3) {
          opt.cubic_a = -0.5;
          opt.exclude_outside = true;
        }
        opt.coord = static_cast<CoordTransform>(coord);
        opt.scales = c.scales;
        if (opt.coord == CoordTransform::kTfCropAndResize) {
          opt.roi.assign(c.x.size(), 0.1);
          opt.roi.resize(2 * c.x.size(), 1.2);
          opt.extrapolation_value = -3.0;
        }
        const DType dt = (coord + mode) % 4 == 0 ? DType::kF16 : DType::kF32;
        check(
            label("mode " + std::to_string(mode) + " c" + std::to_string(coord), c, dt),
            tol_for(dt), [&](const Tensor& x) { return interpolate(x, c.sizes, opt); },
            rnd(dt, c.x));
      }
}

TEST_F(DeviceResize, FusedProducerAndConsumer) {
  InterpolateOptions opt;
  opt.mode = InterpMode::kLinear;
  check(
      "linear of (x * y + 1), then relu", tol_for(DType::kF32),
      [&](const Tensor& x, const Tensor& y) {
        return relu(interpolate(x * y + 1.0, {2, 3, 11, 6}, opt)) - 0.25;
      },
      rnd(DType::kF32, {2, 3, 5, 4}), rnd(DType::kF32, {3, 1, 4}));
  opt.mode = InterpMode::kCubic;
  check(
      "cubic of a permuted input", tol_for(DType::kF32),
      [&](const Tensor& x) {
        return interpolate(permute(x, {0, 2, 1}), {2, 9, 3}, opt);
      },
      rnd(DType::kF32, {2, 3, 5}));
}

TEST_F(DeviceResize, GridSampleModesAndPadding) {
  for (int mode = 0; mode < 3; ++mode)
    for (int padding = 0; padding < 3; ++padding)
      for (bool align : {false, true}) {
        const DType dt = (mode + padding) % 3 == 2 ? DType::kF16 : DType::kF32;
        const std::string what = "grid_sample mode " + std::to_string(mode) + " padding " +
                                 std::to_string(padding) + (align ? " align" : "") + " " +
                                 dtype_name(dt);
        auto fn = [&](const Tensor& x, const Tensor& g) {
          return grid_sample(x, g, static_cast<InterpMode>(mode), padding, align);
        };
        check(what, tol_for(dt), fn, rnd(dt, {2, 3, 5, 4}),
              rnd(dt, {2, 3, 7, 2}, Dist::uniform(-1.4, 1.4)));
        check(what + " 1x1 input", tol_for(dt), fn, rnd(dt, {1, 2, 1, 1}),
              rnd(dt, {1, 4, 1, 2}, Dist::uniform(-1.2, 1.2)));
        // Grid points k / 4 land on pixel centres, edges and half-way points (nearest's ties).
        check(
            what + " ties", tol_for(dt),
            [&](const Tensor& x, const Tensor& k) { return fn(x, k * 0.25); },
            rnd(dt, {1, 2, 5, 4}), cast(rnd(DType::kI32, {1, 6, 5, 2}, Dist::uniform(-6, 6)), dt));
      }
}

// Symbolic input sizes: the size ratios and grid sizes come from size slots; one compile.
TEST_F(DeviceResize, SymbolicSizesShareOnePipelineSet) {
  InterpolateOptions opt;
  opt.mode = InterpMode::kCubic;
  auto fn = [&](const Tensor& x, const Tensor& g) {
    Tensor y = interpolate(x, {-1, -1, 6, 5}, opt);
    return grid_sample(y * 2.0, g, InterpMode::kLinear, 2, false);
  };
  auto compiled = compile(fn, {.name = "sym_resample", .dynamic = Dynamic::kTrue});
  // Distinct sizes, none 2 (the grid's last dim), so that no two symbols unify by value.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4, 9, 8}, {3, 5, 7, 2}}, {{4, 5, 6, 7}, {4, 3, 9, 2}}, {{5, 3, 4, 6}, {5, 7, 8, 2}}};
  for (const auto& [s, gs] : shapes) {
    Tensor x = rnd(DType::kF32, s);
    Tensor g = rnd(DType::kF32, gs, Dist::uniform(-1.3, 1.3));
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()), g.to(Device::vulkan()));
    test::expect_close(got, fn(x, g), tol_for(DType::kF32), "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

// Output sizes over the input's symbols (x.size(2) * 2, x.size(3) / 2 + 1): one compile serves
// every input size, with no guard on the sizes, in every mode.
TEST_F(DeviceResize, SymbolicOutputSizesCompileOnce) {
  for (InterpMode mode : {InterpMode::kNearest, InterpMode::kLinear, InterpMode::kCubic}) {
    InterpolateOptions opt;
    opt.mode = mode;
    auto fn = [&](const Tensor& x) {
      return interpolate(x + 1.0, {-1, -1, x.size(2) * 2, x.size(3) / 2 + 1}, opt);
    };
    auto compiled = compile(fn, {.name = "sym_out", .dynamic = Dynamic::kTrue});
    for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{3, 4, 8, 9}, Shape{4, 2, 13, 4}}) {
      Tensor x = rnd(DType::kF32, s);
      test::poison_device_memory(1 << 20);
      Tensor got = compiled(x.to(Device::vulkan()));
      ASSERT_EQ(got.shape(), (Shape{s[0], s[1], s[2] * 2, s[3] / 2 + 1}));
      test::expect_close(got, fn(x), tol_for(DType::kF32), "symbolic out " + shape_str(s));
    }
    EXPECT_EQ(compiled.stats().compiles, 1u) << static_cast<int>(mode);
    ASSERT_EQ(compiled.entries().size(), 1u);
    EXPECT_TRUE(compiled.entries()[0].on_device);
  }
}

}  // namespace
}  // namespace kiln
