// mod, fmod, shift_left and shift_right on Vulkan against the CPU interpreter: fresh random
// inputs of mixed signs with zero divisors, poisoned outputs, eager and compiled, f32 (vec4 and
// scalar kernels), f16, i32, i64 and promoted pairs, broadcasting, shapes including rank 0,
// size 0, size 1 and odd sizes; float special values and huge quotients (fmod is exact); shift
// amounts below zero and at or past the width.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

struct Pair {
  Shape a, b;
};

const std::vector<Pair>& shapes() {
  static const std::vector<Pair> v = {{{}, {}},
                                      {{0}, {0}},
                                      {{1}, {1}},
                                      {{7}, {7}},
                                      {{8}, {8}},
                                      {{13, 33}, {13, 33}},
                                      {{4, 8}, {4, 8}},
                                      {{5, 1, 7}, {3, 1}},
                                      {{2, 3, 4}, {4}},
                                      {{7, 1}, {1, 9}},
                                      {{64, 128}, {64, 128}},
                                      {{0, 3}, {1, 3}}};
  return v;
}

class DeviceRemainderShift : public test::DeviceOpTest {};

TEST_F(DeviceRemainderShift, ModAndFmod) {
  const std::vector<std::pair<const char*, Binary>> ops = {
      {"mod", [](const Tensor& a, const Tensor& b) { return mod(a, b); }},
      {"fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); }},
  };
  for (const auto& [name, fn] : ops) {
    for (DType dt : {kF32, kF16, kI32, kI64}) {
      for (const Pair& p : shapes()) {
        const bool fl = is_floating(dt);
        Tensor a = rnd(dt, p.a, fl ? Dist{-50, 50}.with_zeros(0.05) : Dist{-1000, 1000});
        Tensor b = rnd(dt, p.b, fl ? Dist{-7, 7}.with_zeros(0.05) : Dist{-9, 9}.with_zeros(0.1));
        check(
            std::string(name) + "(" + dtype_name(dt) + shape_str(p.a) + ", " + shape_str(p.b) + ")",
            fl && std::string(name) == "mod" ? Tol::for_dtype(dt) : Tol::exact(), fn, a, b);
      }
    }
    // Promotion: i32 with i64, i32 with f32.
    check(std::string(name) + " i32 % i64", Tol::exact(), fn,
          rnd(kI32, {5, 9}, Dist{-100000, 100000}), rnd(kI64, {9}, Dist{-50, 50}));
    check(std::string(name) + " i32 % f32", Tol::for_dtype(kF32), fn,
          rnd(kI32, {5, 9}, Dist{-1000, 1000}), rnd(kF32, {5, 9}, Dist{0.5, 9}));
  }
}

TEST_F(DeviceRemainderShift, FloatSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {5.5, -5.5, 5.5,   -5.5, 0.0, -0.0, 0.0,  -0.0, inf, -inf, nan,
                                 3.0, 1e30, -1e30, 3e38, 7.0, 6.0,  -6.0, 1e-3, 2.5, -2.5, 9.0};
  const std::vector<double> b = {2.0, 2.0, -2.0, -2.0, 3.0, 3.0, -3.0, -3.0, 2.0, 2.0,  2.0,
                                 nan, 3.0, 7.0,  1e-3, inf, 3.0, 3.0,  -inf, 0.0, -0.0, 0.75};
  const int64_t n = static_cast<int64_t>(a.size());
  Tensor x = test::tensor_from_doubles(kF32, {n}, a), y = test::tensor_from_doubles(kF32, {n}, b);
  check(
      "fmod special", Tol::exact(), [](const Tensor& p, const Tensor& q) { return fmod(p, q); }, x,
      y);
  check(
      "mod special", Tol::exact(), [](const Tensor& p, const Tensor& q) { return mod(p, q); }, x,
      y);
}

TEST_F(DeviceRemainderShift, IntegerEdges) {
  const std::vector<double> a = {-2147483648.0, -2147483648.0, 2147483647.0, -7, 7, -7, 0, 5};
  const std::vector<double> b = {-1, 3, -2, 0, -3, 3, -5, 0};
  Tensor x = test::tensor_from_doubles(kI32, {8}, a), y = test::tensor_from_doubles(kI32, {8}, b);
  check(
      "mod i32 edges", Tol::exact(), [](const Tensor& p, const Tensor& q) { return mod(p, q); }, x,
      y);
  check(
      "fmod i32 edges", Tol::exact(), [](const Tensor& p, const Tensor& q) { return fmod(p, q); },
      x, y);
  Tensor x64 = cast(x, kI64) * 4294967296.0, y64 = cast(y, kI64);
  check(
      "mod i64 edges", Tol::exact(), [](const Tensor& p, const Tensor& q) { return mod(p, q); },
      x64, y64);
  check(
      "fmod i64 edges", Tol::exact(), [](const Tensor& p, const Tensor& q) { return fmod(p, q); },
      x64, y64);
}

TEST_F(DeviceRemainderShift, Shifts) {
  const std::vector<std::pair<const char*, Binary>> ops = {
      {"shift_left", [](const Tensor& a, const Tensor& b) { return shift_left(a, b); }},
      {"shift_right", [](const Tensor& a, const Tensor& b) { return shift_right(a, b); }},
  };
  for (const auto& [name, fn] : ops) {
    for (DType dt : {kI32, kI64}) {
      for (const Pair& p : shapes()) {
        Tensor a = rnd(dt, p.a, Dist{-100000, 100000}.with_zeros(0.05));
        Tensor b = rnd(dt, p.b, Dist{-2, dt == kI32 ? 34.0 : 66.0});
        check(
            std::string(name) + "(" + dtype_name(dt) + shape_str(p.a) + ", " + shape_str(p.b) + ")",
            Tol::exact(), fn, a, b);
      }
    }
    check(std::string(name) + " i32 by i64", Tol::exact(), fn, rnd(kI32, {6, 5}, Dist{-1000, 1000}),
          rnd(kI64, {5}, Dist{0, 40}));
    EXPECT_THROW(fn(rnd(kF32, {3}).to(Device::vulkan()), rnd(kI32, {3}).to(Device::vulkan())),
                 Error);
  }
}

}  // namespace
}  // namespace kiln
