// cumsum on Vulkan against the CPU interpreter: every axis of several shapes (rank 1-3, sizes
// 0, 1 and odd), negative axes, the four exclusive / reverse combinations, every dtype (bools
// sum as i64, integers wrap), fused producers, eager and compiled, into poisoned memory. The
// scan kernel (codegen/lower_scan.cpp) gives a line teams of 1 to 256 invocations scanning
// chunks of 8 positions each: lengths on both sides of each team size and chunk boundary, lines
// of 100,000 and 1,000,000 along an inner and an outer axis, and one compile of a symbolic line
// length called at several lengths. Float sums are compared with a tolerance scaled by the
// running sum of |x| (the kernel sums in float in its own order, the interpreter in double;
// measured errors stay below 1.2e-7 of it at 1,000,000 elements, docs/perf.md).
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
  void run(DType dt, const Shape& shape, int64_t axis, bool exclusive, bool reverse,
           bool eager = true) {
    run_on(rnd(dt, shape, is_floating(dt) ? Dist{-2, 2} : Dist{-1000000, 1000000}), axis, exclusive,
           reverse, eager);
  }

  void run_on(const Tensor& x, int64_t axis, bool exclusive, bool reverse, bool eager = true) {
    const DType dt = x.dtype();
    const Shape& shape = x.shape();
    auto fn = [axis, exclusive, reverse](const Tensor& t) {
      return cumsum(t, axis, exclusive, reverse);
    };
    CheckOptions opt;
    opt.eager = eager;
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

// Lengths on both sides of the team sizes (1, 2, 8, 64, 256 invocations for lines of up to 8,
// 16, 64, 512, 2048 elements) and of the 2048-element chunk of a full team, over many lines
// (several per workgroup for short ones), along the last axis and the first.
TEST_F(DeviceScan, CumSumChunkBoundaries) {
  int flags = 0;  // cycles through the four combinations
  for (int64_t len : {8, 9, 17, 63, 513, 2047, 2049, 6151}) {
    run(kF32, {37, len}, 1, (flags & 1) != 0, (flags & 2) != 0, false);
    ++flags;
    run(kF32, {len, 3}, 0, (flags & 1) != 0, (flags & 2) != 0, false);
    ++flags;
  }
  run(kF32, {5, 0}, 1, false, false);
  run(kF32, {0, 5}, 1, true, true);
  run(kF32, {3, 1}, 1, true, false);
  run(kF32, {1, 3}, 0, false, true);
}

// Long lines, many chunks each: 100,000 and 1,000,000 elements along the inner and an outer
// axis, every flag combination in f32 and every dtype (which CumSumDtypes runs in every
// combination on shorter lines); integers over their full range wrap.
TEST_F(DeviceScan, CumSumLongLines) {
  for (int flags = 0; flags < 4; ++flags) {
    run(kF32, {2, 100003}, 1, (flags & 1) != 0, (flags & 2) != 0, flags == 0);
    if (flags % 3 == 0) run(kF32, {100003, 2}, 0, (flags & 1) != 0, (flags & 2) != 0, false);
  }
  run(kF32, {1000000}, 0, false, false);
  run(kF32, {2, 1000000}, 1, false, true, false);
  int flags = 0;  // every dtype in two combinations, each combination twice
  for (DType dt : {kF16, kI32, kI64, kBool}) {
    run(dt, {2, 30011}, 1, (flags & 1) != 0, (flags & 2) != 0, false);
    ++flags;
    run(dt, {100003, 2}, 0, (flags & 1) != 0, (flags & 2) != 0, false);
    ++flags;
  }
  // Wraparound: sums of values over the whole int32 / int64 range.
  run_on(rnd(kI32, {3, 100003}, Dist{-2147483648.0, 2147483647.0}), 1, false, false);
  run_on(rnd(kI64, {1000000, 1}, Dist{-9.2e18, 9.2e18}), 0, true, false, false);
  run_on(rnd(kI32, {1000000, 2}, Dist{-2147483648.0, 2147483647.0}), 0, false, true, false);
}

// A symbolic line length: one compile (and one kernel) serves every length, each call into
// poisoned memory, the lines both short and far past one chunk; the other dim symbolic too.
TEST_F(DeviceScan, CumSumSymbolicLength) {
  for (int flags = 0; flags < 4; ++flags) {
    const bool exclusive = (flags & 1) != 0, reverse = (flags & 2) != 0;
    auto fn = [exclusive, reverse](const Tensor& t) {
      return cumsum(t * 2.0 + 1.0, 1, exclusive, reverse);
    };
    CompileOptions co;
    co.name = "cumsum_symbolic";
    co.dynamic = Dynamic::kTrue;
    auto compiled = compile(fn, co);
    for (Shape s : std::vector<Shape>{{3, 2}, {5, 37}, {2, 4099}, {4, 100003}, {7, 9}}) {
      SCOPED_TRACE("flags " + std::to_string(flags) + ", " + shape_str(s));
      Tensor x = rnd(kF32, s, Dist{-2, 2});
      Tensor want = fn(x);
      Tensor a = abs(x * 2.0 + 1.0);
      test::poison_device_memory(2 * want.meta().nbytes() + (64u << 10));
      Tensor got = compiled(x.to(Device::vulkan()));
      test::expect_close(got, want, Tol{0, 1e-6}, "symbolic cumsum",
                         cumsum(a, 1, exclusive, reverse).to_doubles(), 2e-6);
    }
    std::vector<EntryInfo> entries = compiled.entries();
    ASSERT_EQ(entries.size(), 1u) << "a length recompiled";
    EXPECT_TRUE(entries[0].on_device);
    EXPECT_EQ(entries[0].kernels.size(), 1u);
  }
}

TEST_F(DeviceScan, CumSumFusedAndErrors) {
  Tensor x = rnd(kF32, {6, 50}, Dist{-1, 1});
  check(
      "cumsum(exp(x) * 2, 1) - x", Tol{1e-5, 1e-5},
      [](const Tensor& t) { return cumsum(exp(t) * 2.0, 1) - t; }, x);
  // Producers on long lines: a broadcast add, a transposed view, a compare (bools sum as i64).
  Tensor y = rnd(kF32, {3, 50001}, Dist{-1, 1});
  Tensor b = rnd(kF32, {3, 1}, Dist{-1, 1});
  CheckOptions opt;
  opt.scale = cumsum(abs(y) + abs(b), 1, false, true).to_doubles();
  opt.scale_rel = 2e-6;
  check_with(
      "cumsum(y + b, 1, reverse)", Tol{0, 1e-6}, opt,
      [](const Tensor& t, const Tensor& c) { return cumsum(t + c, 1, false, true); }, y, b);
  opt.scale = cumsum(abs(permute(y, {1, 0})), 0, true).to_doubles();
  check_with(
      "cumsum(yT * 0.5, 0, exclusive)", Tol{0, 1e-6}, opt,
      [](const Tensor& t) {
        return cumsum(permute(t, {1, 0}) * 0.5, 0, true);
      },
      y);
  check(
      "cumsum(y > 0, 1)", Tol::exact(), [](const Tensor& t) { return cumsum(t > 0.0, 1); }, y);
  EXPECT_THROW(cumsum(x.to(Device::vulkan()), 2), Error);
  EXPECT_THROW(cumsum(x.to(Device::vulkan()), -3), Error);
}

}  // namespace
}  // namespace kiln
