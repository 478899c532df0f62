// cumsum on Vulkan against the CPU interpreter: every axis of several shapes (rank 1-3, sizes
// 0, 1 and odd, axes shorter and longer than the workgroup variant's 128), negative axes,
// the four exclusive / reverse combinations, every dtype (bools sum as i64, integers wrap),
// a fused producer, eager and compiled, into poisoned memory. Float sums are compared with a
// tolerance scaled by the running sum of |x| (the kernel sums in float in its own order, the
// interpreter in double).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

class DeviceScan : public test::DeviceOpTest {
 protected:
  void run(DType dt, const Shape& shape, int64_t axis, bool exclusive, bool reverse) {
    Tensor x = rnd(dt, shape, is_floating(dt) ? Dist{-2, 2} : Dist{-1000000, 1000000});
    auto fn = [axis, exclusive, reverse](const Tensor& t) {
      return cumsum(t, axis, exclusive, reverse);
    };
    CheckOptions opt;
    Tol tol = Tol::exact();
    if (is_floating(dt)) {
      Tensor f = cast(x, kF32);
      opt.scale = cumsum(maximum(f, neg(f)), axis, exclusive, reverse).to_doubles();
      opt.scale_rel = dt == kF16 ? 1e-3 : 2e-6;
      tol = dt == kF16 ? Tol{1e-3, 1e-6} : Tol{0, 1e-6};
    }
    check_with(std::string("cumsum(") + dtype_name(dt) + shape_str(shape) + ", axis " +
                   std::to_string(axis) + (exclusive ? ", exclusive" : "") +
                   (reverse ? ", reverse" : "") + ")",
               tol, opt, fn, x);
  }
};

TEST_F(DeviceScan, CumSumShapesAndFlags) {
  const std::vector<Shape> shapes = {{1}, {7}, {0}, {13, 33}, {3, 5, 7}, {4, 1, 3}, {2, 300}};
  for (const Shape& s : shapes) {
    const auto rank = static_cast<int64_t>(s.size());
    for (int64_t axis = -rank; axis < rank; ++axis) {
      for (int flags = 0; flags < 4; ++flags)
        run(kF32, s, axis, (flags & 1) != 0, (flags & 2) != 0);
    }
  }
}

TEST_F(DeviceScan, CumSumDtypes) {
  for (DType dt : {kF16, kI32, kI64, kBool}) {
    for (int flags = 0; flags < 4; ++flags) {
      run(dt, {5, 37}, 1, (flags & 1) != 0, (flags & 2) != 0);
      run(dt, {130, 3}, 0, (flags & 1) != 0, (flags & 2) != 0);
    }
  }
}

TEST_F(DeviceScan, CumSumFusedAndErrors) {
  Tensor x = rnd(kF32, {6, 50}, Dist{-1, 1});
  check(
      "cumsum(exp(x) * 2, 1) - x", Tol{1e-5, 1e-5},
      [](const Tensor& t) { return cumsum(exp(t) * 2.0, 1) - t; }, x);
  EXPECT_THROW(cumsum(x.to(Device::vulkan()), 2), Error);
  EXPECT_THROW(cumsum(x.to(Device::vulkan()), -3), Error);
}

}  // namespace
}  // namespace kiln
