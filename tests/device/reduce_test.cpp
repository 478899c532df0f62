// Reductions (sum, mean, max) on Vulkan against the CPU interpreter: one axis, several axes,
// negative axes, keepdim, the per-thread variant (< 128 reduced elements) and the workgroup
// variant (>= 128), size-0 reduced axes and size-0 outputs, every accepted dtype, eager and
// compiled, into poisoned memory.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

enum class Red { kSum, kMean, kMax };

const char* red_name(Red r) {
  return r == Red::kSum ? "sum" : r == Red::kMean ? "mean" : "max";
}

Tensor reduce(Red r, const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  switch (r) {
    case Red::kSum:
      return sum(x, axes, keepdim);
    case Red::kMean:
      return mean(x, axes, keepdim);
    case Red::kMax:
      return max(x, axes, keepdim);
  }
  return {};
}

struct RCase {
  Shape shape;
  std::vector<int64_t> axes;
  bool keepdim;
};

// Reduced-element counts in comments: < 128 is the thread variant, >= 128 the workgroup one.
const std::vector<RCase>& reduce_cases() {
  static const std::vector<RCase> v = {
      {{7}, {0}, false},             // 7, rank-0 output
      {{1}, {0}, true},              // 1
      {{1, 1}, {0, 1}, false},       // 1
      {{13, 33}, {1}, false},        // 33
      {{13, 33}, {0}, true},         // 13, strided
      {{13, 33}, {0, 1}, false},     // 429, one output
      {{3, 5, 7}, {0, 2}, false},    // 21, non-adjacent axes
      {{3, 5, 7}, {-1}, true},       // 7, negative axis
      {{4, 5, 6, 2}, {1, 3}, true},  // 10
      {{3, 127}, {1}, false},        // 127: last thread-variant size
      {{3, 128}, {1}, false},        // 128: first workgroup-variant size
      {{2, 300}, {1}, false},        // 300
      {{150, 40}, {0}, false},       // 150, strided workgroup
      {{4, 64, 33}, {1, 2}, true},   // 2112
      {{5, 0}, {1}, false},          // 0 reduced elements
      {{0, 5}, {1}, true},           // 0 outputs
      {{64, 1500}, {1}, false},      // 1500 per output, 96000 elements
      {{70000}, {0}, false},         // 70000, one workgroup
      {{200, 3, 8}, {0, 2}, false},  // 1600
  };
  return v;
}

std::string label(Red r, DType dt, const RCase& c) {
  return std::string(red_name(r)) + "(" + dtype_name(dt) + shape_str(c.shape) + ", axes " +
         shape_str(c.axes) + (c.keepdim ? ", keepdim" : "") + ")";
}

class DeviceReduce : public test::DeviceOpTest {
 protected:
  /// sum |x| over the reduced slice of each output (mean: divided by the count), for a
  /// tolerance proportional to the magnitude of the terms.
  std::vector<double> abs_scale(Red r, const Tensor& x, const RCase& c) {
    Tensor f = cast(x, kF32);
    Tensor a = maximum(f, neg(f));
    Tensor s = r == Red::kMean ? mean(a, c.axes, c.keepdim) : sum(a, c.axes, c.keepdim);
    return s.to_doubles();
  }

  void run(Red r, DType dt, const RCase& c) {
    if (r == Red::kMax) {
      for (int64_t a : c.axes)
        if (c.shape[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(c.shape.size()) : a)] == 0)
          return;  // max over an empty axis is an error (tested separately)
    }
    Dist d = is_floating(dt) ? Dist{-2, 2} : Dist{-1000, 1000};
    Tensor x = rnd(dt, c.shape, d);
    std::vector<int64_t> axes = c.axes;
    bool keepdim = c.keepdim;
    auto fn = [r, axes, keepdim](const Tensor& t) { return reduce(r, t, axes, keepdim); };
    CheckOptions opt;
    Tol tol = Tol::exact();
    if (is_floating(dt) && r != Red::kMax) {
      opt.scale = abs_scale(r, x, c);
      opt.scale_rel = dt == kF16 ? 1e-3 : 1e-5;
      tol = dt == kF16 ? Tol{1e-3, 1e-6} : Tol{0, 1e-6};
    }
    check_with(label(r, dt, c), tol, opt, fn, x);
  }
};

TEST_F(DeviceReduce, Sum) {
  for (DType dt : {kF32, kF16, kI32, kI64, kBool})
    for (const RCase& c : reduce_cases()) run(Red::kSum, dt, c);
}

TEST_F(DeviceReduce, Mean) {
  for (DType dt : {kF32, kF16})
    for (const RCase& c : reduce_cases()) run(Red::kMean, dt, c);
}

TEST_F(DeviceReduce, Max) {
  for (DType dt : {kF32, kF16, kI32, kBool})
    for (const RCase& c : reduce_cases()) run(Red::kMax, dt, c);
}

// Separate from Max so that an i64-only failure is reported on its own.
TEST_F(DeviceReduce, MaxI64) {
  for (const RCase& c : reduce_cases()) run(Red::kMax, kI64, c);
  std::vector<double> v;
  for (int i = 0; i < 300; ++i) v.push_back((i % 2 ? -1.0 : 1.0) * 4.0e12 + i);
  Tensor x = test::tensor_from_doubles(kI64, {2, 150}, v);
  check(
      "max(i64 wide, axis 0)", Tol::exact(), [](const Tensor& t) { return max(t, {0}); }, x);
  check(
      "max(i64 wide, axis 1)", Tol::exact(), [](const Tensor& t) { return max(t, {1}); }, x);
}

// Large-magnitude i64 values: the accumulator must be 64-bit.
TEST_F(DeviceReduce, SumI64Wide) {
  std::vector<double> v;
  for (int i = 0; i < 300; ++i) v.push_back((i % 2 ? -1.0 : 1.0) * 4.0e12 + i * 1.0e10);
  Tensor x = test::tensor_from_doubles(kI64, {2, 150}, v);
  check(
      "sum(i64 wide, axis 1)", Tol::exact(), [](const Tensor& t) { return sum(t, {1}); }, x);
  check(
      "sum(i64 wide, axis 0)", Tol::exact(), [](const Tensor& t) { return sum(t, {0}); }, x);
}

// All-negative inputs: max must start from the type's minimum, not 0.
TEST_F(DeviceReduce, MaxNegative) {
  Tensor n = rnd(kI32, {9, 140}, Dist{-1000000, -1});
  check(
      "max(i32 negative, axis 1)", Tol::exact(), [](const Tensor& t) { return max(t, {1}); }, n);
  Tensor m = rnd(kI32, {9, 14}, Dist{-1000000, -1});
  check(
      "max(i32 negative, axis 0)", Tol::exact(), [](const Tensor& t) { return max(t, {0}); }, m);
  Tensor f = rnd(kF32, {5, 200}, Dist{-9, -1});
  check(
      "max(f32 negative, axis 1)", Tol::exact(), [](const Tensor& t) { return max(t, {1}); }, f);
  Tensor h = rnd(kF16, {5, 20}, Dist{-9, -1});
  check(
      "max(f16 negative, axis 1)", Tol::exact(), [](const Tensor& t) { return max(t, {1}); }, h);
}

TEST_F(DeviceReduce, Errors) {
  Tensor e = rnd(kF32, {3, 0}).to(Device::vulkan());
  EXPECT_THROW(max(e, {1}), Error);                                     // max over an empty axis
  EXPECT_THROW(mean(rnd(kI32, {4}).to(Device::vulkan()), {0}), Error);  // mean of integers
  EXPECT_THROW(sum(rnd(kF32, {}).to(Device::vulkan()), {0}), Error);    // rank 0 has no axis
  EXPECT_THROW(sum(rnd(kF32, {3, 4}).to(Device::vulkan()), {0, 0}), Error);  // repeated axis
}

}  // namespace

// argmax / argmin: the reduction kernel with a (value, index) accumulator. Values drawn from a
// few integers so that ties are common (the first index must win in both kernel variants and
// whatever order the workgroup tree combines in); NaNs win over numbers (the first NaN).
TEST_F(DeviceReduce, ArgMaxArgMin) {
  struct ACase {
    Shape shape;
    int64_t axis;
    bool keepdim;
  };
  const std::vector<ACase> cases = {
      {{1}, 0, false},       {{7}, 0, false},       {{13, 33}, 1, false},  {{13, 33}, 0, true},
      {{3, 5, 7}, -1, true}, {{3, 5, 7}, 1, false}, {{3, 128}, 1, false},  {{2, 300}, 1, true},
      {{150, 4}, 0, false},  {{0, 5}, 1, false},    {{4, 1, 3}, 1, false}, {{3, 2000}, 1, false},
  };
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    for (const ACase& c : cases) {
      for (bool want_max : {true, false}) {
        Tensor x = cast(rnd(kI32, c.shape, Dist{-3, 3}), dt);
        const int64_t axis = c.axis;
        const bool keep = c.keepdim;
        auto fn = [want_max, axis, keep](const Tensor& t) {
          return want_max ? argmax(t, axis, keep) : argmin(t, axis, keep);
        };
        check(std::string(want_max ? "argmax(" : "argmin(") + dtype_name(dt) + shape_str(c.shape) +
                  ", axis " + std::to_string(axis) + (keep ? ", keepdim" : "") + ")",
              Tol::exact(), fn, x);
      }
    }
  }
  // Distinct random floats (no ties) and a fused prologue.
  Tensor f = rnd(kF32, {9, 257});
  check(
      "argmax(exp(x) * -1, axis 1)", Tol::exact(),
      [](const Tensor& t) { return argmax(exp(t) * -1.0, 1); }, f);
  check(
      "argmin(x, axis 0) + 1", Tol::exact(), [](const Tensor& t) { return argmin(t, 0) + 1; }, f);
}

TEST_F(DeviceReduce, ArgMaxNaNAndInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Rows: a NaN in the middle, two NaNs, all -inf, +inf ties, plain numbers.
  std::vector<double> v = {1,    nan,  3,   nan, 0,   nan, 2,    nan, -1, 5,  -inf, -inf, -inf,
                           -inf, -inf, inf, 1,   inf, 0,   -inf, 4,   4,  -2, -2,   4};
  for (DType dt : {kF32, kF16}) {
    Tensor x = test::tensor_from_doubles(dt, {5, 5}, v);
    check(
        std::string("argmax nan/inf ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& t) { return argmax(t, 1); }, x);
    check(
        std::string("argmin nan/inf ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& t) { return argmin(t, 1); }, x);
    check(
        std::string("argmax nan/inf axis 0 ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& t) { return argmax(t, 0); }, x);
  }
  // The workgroup variant: a NaN late in a long row, and one early.
  std::vector<double> w(2 * 600, 1.0);
  w[500] = nan;
  w[600 + 3] = nan;
  w[600 + 400] = nan;
  Tensor y = test::tensor_from_doubles(kF32, {2, 600}, w);
  check(
      "argmax nan, long rows", Tol::exact(), [](const Tensor& t) { return argmax(t, 1); }, y);
  check(
      "argmin nan, long rows", Tol::exact(), [](const Tensor& t) { return argmin(t, 1); }, y);
}

// prod: float products accumulate in float on the device (double in the interpreter), so the
// tolerance grows with the reduced count (about one float rounding per factor); integers wrap
// identically (exact), bools multiply as i64 (logical "all").
TEST_F(DeviceReduce, Prod) {
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    for (const RCase& c : reduce_cases()) {
      int64_t r = 1;
      for (int64_t a : c.axes)
        r *= c.shape[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(c.shape.size()) : a)];
      Dist d = is_floating(dt) ? Dist{0.8, 1.25} : Dist{-3, 3};
      if (is_floating(dt) && r < 64) d = Dist{-1.6, 1.6};  // signs and zeros too
      if (dt == kBool) d.p_true = 0.97;
      Tensor x = rnd(dt, c.shape, d);
      const std::vector<int64_t> axes = c.axes;
      const bool keep = c.keepdim;
      Tol tol = Tol::exact();
      if (is_floating(dt)) {
        const double rel = 1e-6 + 2.5e-7 * static_cast<double>(r);
        tol = dt == kF16 ? Tol{2e-3 + rel, 1e-6} : Tol{rel, 1e-7};
      }
      check(
          std::string("prod(") + dtype_name(dt) + shape_str(c.shape) + ", axes " +
              shape_str(c.axes) + (keep ? ", keepdim" : "") + ")",
          tol, [axes, keep](const Tensor& t) { return prod(t, axes, keep); }, x);
    }
  }
  Tensor f = rnd(kF32, {5, 40}, Dist{0.5, 1.5});
  check(
      "prod(exp(x) - 1, axis 1)", Tol{2e-5, 1e-7},
      [](const Tensor& t) { return prod(exp(t) - 1.0, {1}); }, f);
}

}  // namespace kiln
