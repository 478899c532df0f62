// roi_align (ONNX RoiAlign) on Vulkan against the interpreter, on fresh random data into
// poisoned memory, eagerly and compiled: both coordinate transformations, avg and max, fixed
// and adaptive sampling grids, rois partly or wholly outside the image, odd sizes, sizes 0 and
// 1 (no rois, one channel, a 1x1 image), f32 and f16, i64 and i32 batch indices, a fused
// producer and symbolic sizes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

struct Case {
  Shape x;
  int64_t rois, oh, ow, ratio;
  double scale;
};

Tensor roi_align(const Tensor& x, const Tensor& rois, const Tensor& batch, const Case& c,
                 bool max_mode, bool half_pixel) {
  Attrs a;
  a.index = max_mode ? 1 : 0;
  a.axis = half_pixel ? 0 : 1;
  a.dims = {c.oh, c.ow, c.ratio};
  a.scalar = c.scale;
  return apply_op(OpKind::RoiAlign, {x, rois, batch}, std::move(a), Loc::current());
}

class DeviceRoiAlign : public test::DeviceOpTest {
 protected:
  /// Boxes (x1, y1, x2, y2) in input coordinates / scale, reaching a little outside the image
  /// (and some with x2 < x1), and batch indices in [0, N).
  std::pair<Tensor, Tensor> boxes(const Case& c, DType dt, DType index_dtype) {
    const double h = static_cast<double>(c.x[2]) / c.scale,
                 w = static_cast<double>(c.x[3]) / c.scale;
    std::uniform_real_distribution<double> u(-0.3, 1.2);
    std::vector<double> r, b;
    std::uniform_int_distribution<int64_t> img(0, std::max<int64_t>(c.x[0] - 1, 0));
    for (int64_t i = 0; i < c.rois; ++i) {
      double x1 = u(rng_) * w, y1 = u(rng_) * h, x2 = u(rng_) * w, y2 = u(rng_) * h;
      if (i % 4 != 3) {  // most boxes are ordered
        if (x2 < x1) std::swap(x1, x2);
        if (y2 < y1) std::swap(y1, y2);
      }
      r.insert(r.end(), {x1, y1, x2, y2});
      b.push_back(static_cast<double>(img(rng_)));
    }
    return {test::tensor_from_doubles(dt, {c.rois, 4}, r),
            test::tensor_from_doubles(index_dtype, {c.rois}, b)};
  }
};

TEST_F(DeviceRoiAlign, MatchesTheInterpreter) {
  const std::vector<Case> cases = {
      {{1, 1, 10, 10}, 3, 5, 5, 2, 1.0}, {{2, 3, 7, 9}, 5, 3, 2, 0, 1.0},
      {{1, 2, 13, 5}, 4, 1, 1, 0, 0.5},  {{3, 1, 6, 6}, 7, 2, 3, 3, 2.0},
      {{1, 1, 1, 1}, 2, 2, 2, 0, 1.0},   {{2, 4, 5, 3}, 1, 4, 1, 1, 0.25},
      {{1, 3, 8, 8}, 0, 2, 2, 2, 1.0},   {{2, 0, 4, 4}, 3, 2, 2, 0, 1.0},
      {{1, 2, 11, 17}, 6, 7, 3, 0, 1.0},
  };
  for (const Case& c : cases)
    for (DType dt : {DType::kF32, DType::kF16})
      for (bool max_mode : {false, true})
        for (bool half_pixel : {false, true}) {
          const DType index_dtype = max_mode ? DType::kI32 : DType::kI64;
          Tensor x = rnd(dt, c.x, Dist::uniform(-2, 2));
          auto [rois, batch] = boxes(c, dt, index_dtype);
          const Tol tol = dt == DType::kF16 ? Tol{2e-3, 2e-3} : Tol{1e-5, 1e-5};
          check(
              std::string("roi_align ") + dtype_name(dt) + (max_mode ? " max" : " avg") +
                  (half_pixel ? " half_pixel" : " output_half_pixel") + " x" + shape_str(c.x) +
                  " rois " + std::to_string(c.rois) + " out " + std::to_string(c.oh) + "x" +
                  std::to_string(c.ow) + " ratio " + std::to_string(c.ratio),
              tol,
              [c, max_mode, half_pixel](const Tensor& a, const Tensor& r, const Tensor& b) {
                return roi_align(a, r, b, c, max_mode, half_pixel);
              },
              x, rois, batch);
        }
}

TEST_F(DeviceRoiAlign, FusedProducers) {
  const Case c{{2, 3, 9, 8}, 4, 3, 3, 0, 1.0};
  Tensor x = rnd(DType::kF32, c.x, Dist::uniform(-2, 2));
  auto [rois, batch] = boxes(c, DType::kF32, DType::kI64);
  check(
      "roi_align of relu(x) * 2 at rois / 2", Tol{1e-5, 1e-5},
      [c](const Tensor& a, const Tensor& r, const Tensor& b) {
        return roi_align(relu(a) * 2.0, r * 0.5, b, c, false, true) + 1.0;
      },
      x, rois, batch);
}

// One compile serves every image size and roi count.
TEST_F(DeviceRoiAlign, SymbolicSizes) {
  const Case base{{}, 0, 3, 2, 2, 1.0};
  auto fn = [base](const Tensor& x, const Tensor& r, const Tensor& b) {
    return roi_align(x, r, b, base, false, true);
  };
  auto compiled = compile(fn, {.name = "sym_roi_align", .dynamic = Dynamic::kTrue});
  for (auto [s, n] : {std::pair{Shape{2, 3, 7, 6}, int64_t{5}},
                      {Shape{4, 2, 9, 11}, 3},
                      {Shape{3, 5, 6, 5}, 4}}) {
    Case c = base;
    c.x = s;
    c.rois = n;
    Tensor x = rnd(DType::kF32, s);
    auto [rois, batch] = boxes(c, DType::kF32, DType::kI64);
    Tensor want = fn(x, rois, batch);
    test::poison_device_memory(1 << 20);
    Tensor got =
        compiled(x.to(Device::vulkan()), rois.to(Device::vulkan()), batch.to(Device::vulkan()));
    test::expect_close(got, want, Tol{1e-5, 1e-5}, "symbolic x" + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

}  // namespace
}  // namespace kiln
