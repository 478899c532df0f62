// The elementwise math ops (sin cos tan asin acos atan sinh cosh asinh acosh atanh floor ceil
// round) on Vulkan against the CPU interpreter: fresh random inputs per case, poisoned outputs,
// eager and compiled, f32 (vec4 and scalar kernels), f16 and integer inputs, shapes including
// rank 0, size 0, size 1 and odd sizes; special values (NaN, +-inf, +-0, the domain edges and
// beyond, tiny and huge magnitudes); rounding ties; fused into a reduction's prologue.
#include <gtest/gtest.h>

#include <cmath>
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

using Unary = std::function<Tensor(const Tensor&)>;

struct MathCase {
  const char* name;
  Unary fn;
  Dist dist;  // float inputs; integers are drawn from the same range
};

std::vector<MathCase> math_cases() {
  return {
      {"sin", [](const Tensor& x) { return sin(x); }, Dist{-10, 10}},
      {"cos", [](const Tensor& x) { return cos(x); }, Dist{-10, 10}},
      {"tan", [](const Tensor& x) { return tan(x); }, Dist{-1.3, 1.3}},
      {"asin", [](const Tensor& x) { return asin(x); }, Dist{-1, 1}},
      {"acos", [](const Tensor& x) { return acos(x); }, Dist{-1, 1}},
      {"atan", [](const Tensor& x) { return atan(x); }, Dist{-20, 20}},
      {"sinh", [](const Tensor& x) { return sinh(x); }, Dist{-9, 9}},
      {"cosh", [](const Tensor& x) { return cosh(x); }, Dist{-9, 9}},
      {"asinh", [](const Tensor& x) { return asinh(x); }, Dist{-50, 50}},
      {"acosh", [](const Tensor& x) { return acosh(x); }, Dist{1, 50}},
      {"atanh", [](const Tensor& x) { return atanh(x); }, Dist{-0.999, 0.999}},
      {"floor", [](const Tensor& x) { return floor(x); }, Dist{-20, 20}},
      {"ceil", [](const Tensor& x) { return ceil(x); }, Dist{-20, 20}},
      {"round", [](const Tensor& x) { return round(x); }, Dist{-20, 20}},
  };
}

/// f32: a few float ulps of the result plus a small absolute term where results pass through
/// zero (sin, tan, asinh, ...), well below any real defect. f16: one half ulp of each side's
/// rounding.
Tol math_tol(DType out) {
  if (out == kF32) return Tol{4e-6, 2e-6};
  return Tol::for_dtype(out);
}

class DeviceUnaryMath : public test::DeviceOpTest {};

TEST_F(DeviceUnaryMath, RandomInputs) {
  const std::vector<Shape> f32_shapes = {
      {}, {0}, {1}, {7}, {8}, {13}, {4, 12}, {3, 7}, {2, 0, 5}, {5, 1, 7}, {17, 33}, {96, 256}};
  const std::vector<Shape> other_shapes = {{}, {1}, {13}, {4, 12}, {2, 0, 5}, {17, 33}};
  for (const MathCase& c : math_cases()) {
    for (DType dt : {kF32, kF16, kI32, kI64}) {
      for (const Shape& s : dt == kF32 ? f32_shapes : other_shapes) {
        Tensor x = rnd(dt, s, c.dist);
        DType out = c.fn(Tensor::full({}, 1, dt)).dtype();
        check(std::string(c.name) + "(" + dtype_name(dt) + shape_str(s) + ")", math_tol(out), c.fn,
              x);
      }
    }
  }
}

TEST_F(DeviceUnaryMath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // 32 values: vec4 kernels see them too.
  const std::vector<double> v = {nan,   inf,    -inf,   0.0,    -0.0, 1.0,     -1.0,  1.5,
                                 -1.5,  2.5,    -2.5,   0.5,    -0.5, 1e-8,    -1e-8, 1e-3,
                                 -3e-3, 0.9999, -0.999, 1.0001, -2.0, 3.14159, 80.5,  -85.0,
                                 88.5,  -89.0,  1e10,   -3e9,   3e30, 1e-30,   7.0,   -0.75};
  for (DType dt : {kF32, kF16}) {
    Tensor x = test::tensor_from_doubles(dt, {32}, v);
    for (const MathCase& c : math_cases()) {
      if (dt == kF16 && (std::string(c.name) == "sin" || std::string(c.name) == "cos" ||
                         std::string(c.name) == "tan"))
        continue;  // f16 rounds 1e10 etc. to inf; covered by the f32 run
      check(std::string(c.name) + " special " + dtype_name(dt), math_tol(dt), c.fn, x);
    }
  }
}

TEST_F(DeviceUnaryMath, RoundingTies) {
  std::vector<double> v;
  for (int k = -41; k <= 41; ++k) v.push_back(k / 2.0);
  v.push_back(8388607.5);  // 2^23 - 0.5: the last float with a fraction
  v.push_back(-8388609.0);
  for (DType dt : {kF32, kF16}) {
    std::vector<double> w = v;
    if (dt == kF16) w.resize(v.size() - 2);
    Tensor x = test::tensor_from_doubles(dt, {static_cast<int64_t>(w.size())}, w);
    for (const MathCase& c : math_cases()) {
      const std::string n = c.name;
      if (n == "floor" || n == "ceil" || n == "round")
        check(n + " ties " + dtype_name(dt), Tol::exact(), c.fn, x);
    }
  }
}

TEST_F(DeviceUnaryMath, Fused) {
  Tensor x = rnd(kF32, {6, 40}, Dist{-0.9, 0.9});
  check(
      "sin^2 + cos^2 - atanh(tanh(x)) + round(x*4)", Tol{1e-5, 1e-5},
      [](const Tensor& t) {
        return sin(t) * sin(t) + cos(t) * cos(t) - atanh(tanh(t)) + round(t * 4.0);
      },
      x);
  check(
      "sum(asin(x) * acosh(x*x + 1), axis 1)", Tol{1e-5, 1e-5},
      [](const Tensor& t) { return sum(asin(t) * acosh(t * t + 1.0), {1}); }, x);
  check(
      "argmax(floor(x * 3), axis 1)", Tol::exact(),
      [](const Tensor& t) { return argmax(floor(t * 3.0), 1); }, x);
}

TEST_F(DeviceUnaryMath, RejectsBool) {
  Tensor b = rnd(kBool, {4}).to(Device::vulkan());
  for (const MathCase& c : math_cases()) EXPECT_THROW(c.fn(b), Error) << c.name;
}

}  // namespace
}  // namespace kiln
