// Minimal programs from differential-fuzzer mismatches (tests/fuzz/differential_test.cpp), each
// checked on the interpreter, eager Vulkan and compiled Vulkan (test_util.h's DeviceOpTest).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Tol;

class FuzzRegression : public test::DeviceOpTest {};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// concat whose parts are all empty along the axis: the emitter selected among zero parts.
TEST_F(FuzzRegression, ConcatOfEmptyParts) {
  Tensor a = Tensor::full({0, 3}, 1.0), b = Tensor::full({0, 3}, 2.0);
  check(
      "concat of two [0, 3]", Tol::exact(),
      [](const Tensor& x, const Tensor& y) {
        return concat({x, y, x}, 0) * 2.0;
      },
      a, b);
}

// float -> int casts of NaN, infinities and out-of-range values: the interpreter truncates,
// clamps and maps NaN to 0; GLSL's int() leaves them undefined.
TEST_F(FuzzRegression, FloatToIntCastSaturates) {
  Tensor x = test::tensor_from_doubles(
      DType::kF32, {9}, {kNaN, kInf, -kInf, 3e38, -3e38, 2147483648.0, -2147483904.0, -2.5, 7.9});
  for (DType to : {DType::kI32, DType::kI64}) {
    check(
        std::string("cast f32 -> ") + dtype_name(to), Tol::exact(),
        [to](const Tensor& t) { return cast(t, to); }, x);
  }
  Tensor h = test::tensor_from_doubles(DType::kF16, {4}, {kNaN, kInf, -kInf, -3.5});
  check(
      "cast f16 -> i32", Tol::exact(), [](const Tensor& t) { return cast(t, DType::kI32); }, h);
}

// An integer literal out of the i32 range: the interpreter clamps it (Full's encoding), the
// emitter's static_cast was undefined.
TEST_F(FuzzRegression, OutOfRangeIntegerLiteral) {
  Tensor x = Tensor::from_vector<int32_t>({1, -5, 0, 7}, {4});
  check(
      "i32 + 4294967296", Tol::exact(), [](const Tensor& t) { return t + 4294967296.0; }, x);
  check(
      "i32 max -2^31", Tol::exact(),
      [](const Tensor& t) { return maximum(t, scalar(-2147483648.0, DType::kI32)); }, x);
}

// x / 0: IEEE gives +-inf by the signs (NaN for 0 / 0); lavapipe divides as x * rcp(y) with a
// refinement step, which made every x / 0 NaN.
TEST_F(FuzzRegression, DivisionByZero) {
  Tensor x = Tensor::from_vector<int64_t>({2, 0, -1}, {3});
  check(
      "i64 / 0", Tol::exact(), [](const Tensor& t) { return t / 0.0; }, x);
  Tensor f = test::tensor_from_doubles(DType::kF32, {4}, {2, 0, -1, kNaN});
  check(
      "f32 / 0", Tol::exact(), [](const Tensor& t) { return t / 0.0; }, f);
  Tensor z = test::tensor_from_doubles(DType::kF32, {4}, {0, 0, 0, 0});
  check(
      "f32 / zeros", Tol::exact(), [](const Tensor& t, const Tensor& u) { return t / u; }, f, z);
  check(
      "1 / f32", Tol::exact(), [](const Tensor& t) { return 1.0 / t; }, f);
}

// NaN, inf and -0.0 through arithmetic the driver may fold: x - x, x * 0 and the x - mean of a
// one-element row gave plain numbers. Kernels now declare SignedZeroInfNanPreserve (where the
// device has it), and arithmetic with a literal +0.0 goes through kiln_*_zero helpers, since
// lavapipe folds x * 0.0, x + 0.0, 0.0 - x and 0.0 / x by the constant even under that mode.
TEST_F(FuzzRegression, InfNanThroughFoldedArithmetic) {
  Tensor x = test::tensor_from_doubles(DType::kF32, {3, 1}, {kNaN, 1.0, kInf});
  check(
      "x - x", Tol::exact(), [](const Tensor& t) { return t - t; }, x);
  check(
      "x * 0", Tol::exact(), [](const Tensor& t) { return t * 0.0; }, x);
  check(
      "softmax over a size-1 axis", Tol::for_dtype(DType::kF32),
      [](const Tensor& t) { return softmax(t, 1); }, x);
  Tensor w = Tensor::full({1}, 1.0), b = Tensor::full({1}, 0.5);
  check(
      "layer_norm of one-element rows", Tol::for_dtype(DType::kF32),
      [](const Tensor& t, const Tensor& ww, const Tensor& bb) { return layer_norm(t, ww, bb); }, x,
      w, b);
  Tensor m = test::tensor_from_doubles(DType::kF32, {2}, {-1.0, 2.0});
  check(
      "1 / (x * 0) keeps the sign of zero", Tol::exact(),
      [](const Tensor& t) { return 1.0 / (t * 0.0); }, m);
}

// Arithmetic with a literal +0.0 and signed zeros through the kernels' helpers, in scalar and
// vec4 kernels ([2, 4] f32 is vec4): lavapipe folds x * 0.0, x + 0.0, 0.0 - x and 0.0 / x by
// the constant, even under SignedZeroInfNanPreserve.
TEST_F(FuzzRegression, ArithmeticWithALiteralZero) {
  const double nz = -0.0;
  for (const Shape& shape : {Shape{8}, Shape{2, 4}, Shape{7}}) {
    std::vector<double> v = {kNaN, 1.0, kInf, -1.0, -kInf, nz, 0.0, 2.5};
    v.resize(static_cast<size_t>(numel(shape)));
    Tensor x = test::tensor_from_doubles(DType::kF32, shape, v);
    const std::string at = " " + shape_str(shape);
    check(
        "1 / (x + 0)" + at, Tol::exact(), [](const Tensor& t) { return 1.0 / (t + 0.0); }, x);
    check(
        "1 / (0 - x)" + at, Tol::exact(), [](const Tensor& t) { return 1.0 / (0.0 - t); }, x);
    check(
        "1 / (x * 0)" + at, Tol::exact(), [](const Tensor& t) { return 1.0 / (t * 0.0); }, x);
    check(
        "1 / (0 / x)" + at, Tol::exact(), [](const Tensor& t) { return 1.0 / (0.0 / t); }, x);
    check(
        "1 / (x * -0)" + at, Tol::exact(), [nz](const Tensor& t) { return 1.0 / (t * nz); }, x);
    const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> unary = {
        {"tanh", [](const Tensor& t) { return tanh(t); }},
        {"relu", [](const Tensor& t) { return relu(t); }},
        {"sign", [](const Tensor& t) { return sign(t); }},
        {"abs", [](const Tensor& t) { return abs(t); }},
        {"neg", [](const Tensor& t) { return -t; }}};
    for (const auto& [name, f] : unary)
      check(
          "1 / " + name + "(x * 0)" + at, Tol::exact(),
          [f](const Tensor& t) { return 1.0 / f(t * 0.0); }, x);
    Tensor h = cast(x, DType::kF16);
    check(
        "f16 x * 0" + at, Tol::exact(), [](const Tensor& t) { return 1.0 / (t * 0.0); }, h);
  }
}

std::vector<Tensor> twice_plus_one(const std::vector<Tensor>& in) {
  return {in[0] * 2.0 + 1.0};
}

/// Calls `fn` compiled (Dynamic::kTrue) once per input, each time comparing with the same
/// function run eagerly on CPU copies.
template <typename Fn>
void check_calls(const Fn& fn, const std::vector<Tensor>& cpu_inputs, const std::string& label) {
  auto compiled = compile(fn, {.name = "regression", .dynamic = Dynamic::kTrue});
  for (size_t i = 0; i < cpu_inputs.size(); ++i) {
    SCOPED_TRACE(label + ", call " + std::to_string(i));
    std::vector<Tensor> want = fn(cpu_inputs[i]);
    std::vector<Tensor> got;
    try {
      got = compiled(cpu_inputs[i].to(Device::vulkan()));
    } catch (const Error& e) {
      ADD_FAILURE() << "compiled call " << i << " threw: " << e.what() << "\n"
                    << compiled.explain().to_string();
      return;
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      test::expect_close(got[k], want[k], Tol::for_dtype(want[k].dtype()),
                         label + " output " + std::to_string(k));
  }
}

// A host call whose argument is a captured constant (no input involved) replayed with an
// undefined tensor (the second call threw "use of an undefined tensor"); the constant now comes
// out of a compiled segment, so every replay passes its current contents.
TEST_F(FuzzRegression, ReplayOfHostCallsOnACapturedConstant) {
  const Tensor w = Tensor::full({1}, 0.75, DType::kF32, Device::vulkan());
  auto fn = [w](const Tensor& x) -> std::vector<Tensor> {
    const Tensor wv = x.device().is_cpu() ? w.to(Device::cpu()) : w;
    Tensor h = call_host("twice_plus_one", twice_plus_one, {wv}).at(0);
    return {h, x * 2.0};
  };
  check_calls(fn, {rnd(DType::kF32, {6}), rnd(DType::kF32, {3}), rnd(DType::kF32, {1})},
              "host calls");
}

// Under Dynamic::kTrue the length of x[3::3] is an expression of s0 that is 1 at these sizes,
// and broadcasting it against x failed the trace ("sizes s0 and max(0, ...) differ"); codegen
// broadcasts only constant-1 dims. A derived size that is 0 or 1 at trace time is now that
// constant under a guard, as input sizes 0 and 1 are; a size where it is 2 (s0 = 7) retraces,
// and x + x[3::3] is then a shape error on every path.
TEST_F(FuzzRegression, BroadcastOfASymbolicLengthOneSlice) {
  auto fn = [](const Tensor& x) -> std::vector<Tensor> {
    return {x + slice(x, 0, 3, int64_t{1} << 40, 3)};
  };
  check_calls(fn, {rnd(DType::kF32, {6}), rnd(DType::kF32, {5}), rnd(DType::kF32, {4})},
              "x + x[3::3]");
  // Lengths 1, 1, 2, 3, 1: specialised, then symbolic after the retrace, then specialised.
  auto g = [](const Tensor& x) -> std::vector<Tensor> {
    Tensor s = slice(x, 0, 3, int64_t{1} << 40, 3);
    return {s * 2.0, sum(s, {0})};
  };
  check_calls(g,
              {rnd(DType::kF32, {6}), rnd(DType::kF32, {5}), rnd(DType::kF32, {7}),
               rnd(DType::kF32, {12}), rnd(DType::kF32, {4})},
              "x[3::3]");
}

// i64 ** i32 with a negative exponent gave wrapped garbage for odd bases: Mesa 22.3's lavapipe
// compiles the exponent's int64_t(int) as a zero extension where `y < 0` reads it, so the
// negative-exponent branch was skipped. Codegen now spells the sign extension out.
TEST_F(FuzzRegression, IntegerPowWithLargeExponents) {
  Tensor x = Tensor::from_vector<int64_t>({2, 3, -4, 5, 1, -1, 0}, {7});
  for (int32_t e : {INT32_MIN, INT32_MAX, INT32_MAX - 1, -(1 << 24) - 1, (1 << 30) + 3}) {
    Tensor y = Tensor::from_vector<int32_t>({e}, {});
    check(
        "i64 ** i32 " + std::to_string(e), Tol::exact(),
        [](const Tensor& a, const Tensor& b) { return pow(a, b); }, x, y);
    Tensor y64 = Tensor::from_vector<int64_t>({e}, {});
    check(
        "i64 ** i64 " + std::to_string(e), Tol::exact(),
        [](const Tensor& a, const Tensor& b) { return pow(a, b); }, x, y64);
    check(
        "i64 + i32 " + std::to_string(e), Tol::exact(),
        [](const Tensor& a, const Tensor& b) { return a + b; }, x, y);
  }
}

// f16 values inside a fused kernel were floats never rounded to half: an i32 of 2^30 promoted
// to f16 is inf in the interpreter (f16's range ends at 65504), so the cast to i64 saturates;
// the fused kernel cast the unrounded 2^30. Every f16 result is now rounded to half where it is
// computed (kiln_f16), as the interpreter stores it.
TEST_F(FuzzRegression, F16OverflowInsideAFusedKernel) {
  Tensor i = Tensor::from_vector<int32_t>({(1 << 30) + 3, 7}, {2});
  Tensor h = test::tensor_from_doubles(DType::kF16, {2}, {1.5, -2.0});
  check(
      "cast(cast(concat(i32, f16), f32), i64)", Tol::exact(),
      [](const Tensor& a, const Tensor& b) {
        return cast(cast(concat({a, b}, 0), DType::kF32), DType::kI64);
      },
      i, h);
}

// max / min of int64 values that the optimiser can see as constants (seed 5000, program 45: the
// max over full(-6) gave INT64_MIN): SPIRV-Tools 2023.1's spirv-opt folds 64-bit SMax / SMin by
// their low words once the reduction loop is unrolled; int64 max / min are now a compare and a
// select (kiln_max_i64 / kiln_min_i64).
TEST_F(FuzzRegression, Int64MaxMinOfLiterals) {
  Tensor x = Tensor::from_vector<int64_t>({3, -7, int64_t{1} << 40, -(int64_t{1} << 33)}, {4});
  check(
      "max over full(-6, i64)", Tol::exact(),
      [](const Tensor& t) {
        return max(full({2, 2, 4}, -6.0, DType::kI64, t.device()), {0, 2}) + slice(t, 0, 0, 2);
      },
      x);
  check(
      "min over full(2^32, i64)", Tol::exact(),
      [](const Tensor& t) {
        return min(full({3, 5}, 4294967296.0, DType::kI64, t.device()), {1}) + slice(t, 0, 0, 3);
      },
      x);
  check(
      "maximum / minimum / relu with i64 literals", Tol::exact(),
      [](const Tensor& t) {
        return maximum(t, scalar(-6.0, DType::kI64)) * 3 +
               minimum(t, scalar(4294967296.0, DType::kI64)) + relu(t);
      },
      x);
}

// The same with int32 (seed 100000, program 887: min over full(2, i32) gave 0x7fffffff):
// spirv-opt folded the reduction's SMin of two literals wrongly. int max / min are now a
// compare and a select (kiln_max_i32 / kiln_min_i32) everywhere codegen emits them.
TEST_F(FuzzRegression, Int32MaxMinOfLiterals) {
  Tensor x = Tensor::from_vector<int32_t>({3, -7, 1 << 30, -(1 << 29)}, {4});
  check(
      "min over full(2, i32)", Tol::exact(),
      [](const Tensor& t) {
        return min(full({3, 4}, 2.0, DType::kI32, t.device()), {1}) + slice(t, 0, 0, 3);
      },
      x);
  check(
      "max over full(-6, i32)", Tol::exact(),
      [](const Tensor& t) {
        return max(full({2, 2, 4}, -6.0, DType::kI32, t.device()), {0, 2}) + slice(t, 0, 0, 2);
      },
      x);
  check(
      "maximum / minimum / relu with i32 literals", Tol::exact(),
      [](const Tensor& t) {
        return maximum(t, scalar(-6.0, DType::kI32)) * 3 +
               minimum(t, scalar(2147483647.0, DType::kI32)) + relu(t);
      },
      x);
}

// erf(x) / x of tiny x (seed 1, program 942: erf(0 - x) / (0 - x)): kiln_erf's erfc-based
// formula has an absolute error near 1e-7, so erf of a tiny x came out 0 where it is
// 1.128 x. Below |x| = 0.5 it is now a Taylor series.
TEST_F(FuzzRegression, ErfOfTinyValues) {
  Tensor x = test::tensor_from_doubles(
      DType::kF32, {12},
      {1e-30, -1e-20, 1e-8, -3e-5, 1e-3, 0.3, -0.49, 0.5, -0.51, 2.0, 0.0, -0.0});
  check(
      "erf(x) / x", Tol::for_dtype(DType::kF32), [](const Tensor& t) { return erf(t) / t; }, x);
  check(
      "1 / erf(x * 0)", Tol::exact(), [](const Tensor& t) { return 1.0 / erf(t * 0.0); }, x);
  check(
      "gelu(x) / x", Tol::for_dtype(DType::kF32), [](const Tensor& t) { return gelu(t) / t; }, x);
}

// A reduction over a reshape that splits a merged dim: the split's index variables (r<k>)
// collided with the reduction's dims (r0, r1, ...): "'r2' : redefinition".
TEST_F(FuzzRegression, ReductionOverASplitReshape) {
  Tensor x = test::random_tensor(DType::kI32, {2, 2, 3, 3}, rng_, test::Dist::uniform(-20, 20));
  check(
      "min over a merged, unsqueezed view", Tol::exact(),
      [](const Tensor& t) {
        return min(unsqueeze(reshape(t * 2, {4, 3, 3}), 2), {1, 2, 3}, true);
      },
      x);
}

// GLSL leaves log, sqrt and inversesqrt undefined outside their domain: lavapipe returned NaN
// for rsqrt(relu(-0.0)) (interpreter: -inf, then log(abs(.) + 0.5) = inf; seed 10000 program
// 903) and a number for log(-2.8), so `log(x) <= c` was true (seed 10000 program 1187).
TEST_F(FuzzRegression, LogSqrtRsqrtOutsideTheirDomain) {
  Tensor x = test::tensor_from_doubles(
      DType::kF32, {12}, {-2.8, -1.0, -0.0, 0.0, 1e-30, 0.25, 2.0, 1e30, -1e-30, 4.0, 0.5, 9.0});
  check(
      "rsqrt(relu(x))", Tol::for_dtype(DType::kF32), [](const Tensor& t) { return rsqrt(relu(t)); },
      x);
  check(
      "log(abs(rsqrt(x)) + 0.5)", Tol::for_dtype(DType::kF32),
      [](const Tensor& t) { return log(abs(rsqrt(t)) + 0.5); }, x);
  check(
      "log(x) <= -0.7", Tol::exact(),
      [](const Tensor& t) { return le(log(t), t * 0.0 - 0.716796875); }, x);
  check(
      "log(x) and sqrt(x)", Tol::for_dtype(DType::kF32),
      [](const Tensor& t) { return log(t) + sqrt(t); }, x);
  check(
      "rsqrt(x * 1e30)", Tol::for_dtype(DType::kF32),
      [](const Tensor& t) { return rsqrt(t * 1e30) + sqrt(t * 1e30); }, x);
}

// An integer cast to float and back: the round trip rounds (2^31 - 1 -> 2^31, 2^24 + 1 -> 2^24);
// lavapipe's shader compiler folded the pair of conversions to the identity.
TEST_F(FuzzRegression, IntToFloatToIntRoundTripRounds) {
  Tensor l = Tensor::from_vector<int64_t>(
      {2147483647, 16777217, -16777217, 9007199254740993, -3, 0, int64_t{1} << 62}, {7});
  check(
      "cast(cast(i64, f32), i64)", Tol::exact(),
      [](const Tensor& t) { return cast(cast(t, DType::kF32), DType::kI64); }, l);
  check(
      "cast(cast(i64, f16), i64)", Tol::exact(),
      [](const Tensor& t) { return cast(cast(t, DType::kF16), DType::kI64); }, l);
  Tensor i = Tensor::from_vector<int32_t>({2147483647, 16777217, -16777217, 2049, -3, 0}, {6});
  check(
      "cast(cast(i32, f32), i32)", Tol::exact(),
      [](const Tensor& t) { return cast(cast(t, DType::kF32), DType::kI32); }, i);
  check(
      "cast(cast(i32, f16), i32)", Tol::exact(),
      [](const Tensor& t) { return cast(cast(t, DType::kF16), DType::kI32); }, i);
}

// A matmul over an empty inner dimension is zeros, and the elementwise ops fused after it still
// apply (0 / 0 = NaN, 0 * inf = NaN): the kernel skipped its epilogue when K was 0.
TEST_F(FuzzRegression, MatmulOverAnEmptyInnerDimension) {
  Tensor a = Tensor::full({4, 0}, 1.0), b = Tensor::full({0}, 1.0);
  Tensor d = test::tensor_from_doubles(DType::kF32, {4}, {0.0, 2.0, -0.0, kNaN});
  check(
      "matmul([4, 0], [0]) / d", Tol::exact(),
      [](const Tensor& x, const Tensor& y, const Tensor& z) { return matmul(x, y) / z; }, a, b, d);
  Tensor c = Tensor::full({3, 0}, 1.0), e = Tensor::full({0, 5}, 1.0);
  Tensor f = test::tensor_from_doubles(DType::kF32, {5}, {kInf, 1.0, -kInf, kNaN, 0.5});
  check(
      "matmul([3, 0], [0, 5]) * f + 1", Tol::exact(),
      [](const Tensor& x, const Tensor& y, const Tensor& z) { return matmul(x, y) * z + 1.0; }, c,
      e, f);
  Tensor h = Tensor::full({2, 3, 0}, 1.0, DType::kF16),
         k = Tensor::full({2, 0, 3}, 1.0, DType::kF16);
  Tensor g = test::tensor_from_doubles(DType::kF16, {3}, {kInf, 0.0, 3.0});
  check(
      "f16 bmm over K = 0, abs(x * g) + 0.5", Tol::exact(),
      [](const Tensor& x, const Tensor& y, const Tensor& z) { return abs(matmul(x, y) * z) + 0.5; },
      h, k, g);
  Tensor r = Tensor::full({4, 0}, 1.0);
  check(
      "sum over an empty dim * d", Tol::exact(),
      [](const Tensor& x, const Tensor& z) { return sum(x, {1}) * z; }, r, d);
  check(
      "mean over an empty dim + d", Tol::exact(),
      [](const Tensor& x, const Tensor& z) { return mean(x, {1}) + z; }, r, d);
}

// squeeze of a dim made by a slice: the dim is 1 (x[-1:], x[:, 0:1:2]), and the compiled graph
// kept it, so the output had one dim too many (or a later broadcast failed).
TEST_F(FuzzRegression, SqueezeOfASlicedDim) {
  auto last = [](const Tensor& x) -> std::vector<Tensor> {
    Tensor s = squeeze(slice(x, 0, -1, int64_t{1} << 40, 1), {0});
    return {exp(s - 2.5), s};
  };
  check_calls(last, {rnd(DType::kF32, {5}), rnd(DType::kF32, {7}), rnd(DType::kF32, {1})},
              "squeeze(x[-1:])");
  auto stepped = [](const Tensor& x) -> std::vector<Tensor> {
    Tensor s = slice(x, 2, -2, 1, 2);
    Tensor m = slice(slice(x, 1, 0, 1, 1), 2, 0, 1, 1) > 0.0;
    return {masked_fill(cosh(squeeze(s, {-1})), squeeze(m, {2}), -1.0), softmax(s, 0)};
  };
  check_calls(stepped, {rnd(DType::kF32, {3, 2, 2}), rnd(DType::kF32, {5, 2, 2})},
              "squeeze(x[:, :, -2:1:2])");
}

// triu / tril whose mask is false everywhere (1x1 matrices, diagonal 2), times inf and NaN:
// the mask's condition was a constant, so the kernel multiplied by a constant 0.0 that lavapipe
// folded to 0 (seed 100000 program 42057). Such a triangle is now a literal zero operand.
TEST_F(FuzzRegression, MulByAnAllZeroTriangle) {
  Tensor x = test::tensor_from_doubles(DType::kF32, {4, 1, 1}, {1.5, -2.0, 3.0, 0.25});
  Tensor y = test::tensor_from_doubles(DType::kF32, {2, 4, 1, 1},
                                       {kInf, -kInf, kNaN, 2.0, -0.0, 1e38, -kNaN, 1.0});
  check(
      "triu(x, 2) * y", Tol::exact(),
      [](const Tensor& a, const Tensor& b) { return triu(a, 2) * b; }, x, y);
  check(
      "y * tril(x, -1)", Tol::exact(),
      [](const Tensor& a, const Tensor& b) { return b * tril(a, -1); }, x, y);
  check(
      "1 / (triu(x, 1) + -0.0 * y)", Tol::exact(),
      [](const Tensor& a, const Tensor& b) { return 1.0 / (triu(a, 1) + b * -0.0); }, x, y);
  Tensor m = test::tensor_from_doubles(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor z = test::tensor_from_doubles(DType::kF32, {2, 3}, {kInf, kNaN, 1, -kInf, 2, 3});
  check(
      "triu(m, 3) * z", Tol::exact(),
      [](const Tensor& a, const Tensor& b) { return triu(a, 3) * b; }, m, z);
}

// exp with a subnormal result (x below -87.3): lavapipe's exp returns 0 there (its other
// arithmetic keeps subnormals), and sign, compares and division amplify the difference:
// abs(sign(softmax(x))) + 0.5 gave 0.5 for 1.5 (seed 100000 program 92634) and
// softmax(x) <= 0 was true for 4e-42 (program 54971). Kernels now use kiln_exp.
TEST_F(FuzzRegression, ExpWithSubnormalResults) {
  Tensor x = test::tensor_from_doubles(
      DType::kF32, {12},
      {-87.5, -88.0, -90.0, -100.0, -103.0, -103.9, -104.5, -200.0, -kInf, kNaN, -80.0, 1.0});
  check(
      "exp(x)", Tol::for_dtype(DType::kF32), [](const Tensor& t) { return exp(t); }, x);
  // On a device that flushes subnormals (SwiftShader) the reference flushes them too.
  const auto ftz = [](const Tensor& t) { return test::flush_subnormals_like_the_device(t); };
  check(
      "sign(exp(x))", Tol::exact(), [&](const Tensor& t) { return sign(ftz(exp(t))); }, x);
  // Columns of [6, 2] with one large value: the others' softmax is subnormal or 0.
  Tensor m = test::tensor_from_doubles(
      DType::kF32, {6, 2},
      {60.0, 3.0, -30.0, -90.0, -36.0, -2.0, -43.9, -100.5, 0.5, -101.0, -60.0, -150.0});
  check(
      "abs(sign(softmax(x, 0))) + 0.5", Tol::exact(),
      [&](const Tensor& t) { return abs(sign(ftz(softmax(t, 0)))) + 0.5; }, m);
  Tensor zero = Tensor::full({1, 2}, 0.0);
  check(
      "softmax(x, 0) <= 0", Tol::exact(),
      [&](const Tensor& t, const Tensor& z) { return le(ftz(softmax(t, 0)), z); }, m, zero);
  check(
      "softmax(x, 0) / 1e-40", Tol::for_dtype(DType::kF32),
      [&](const Tensor& t) {
        // Such a device flushes the literal as well: the reference divides by its zero.
        const bool flushed = t.device().is_cpu() && test::device_flushes_subnormals();
        return flushed ? ftz(softmax(t, 0)) / 0.0 : softmax(t, 0) / 1e-40;
      },
      m);
  check(
      "sign(exp(x - 30)) + softmax(x, 1), [2, 4]", Tol::for_dtype(DType::kF32),
      [&](const Tensor& t) { return sign(ftz(exp(t - 30.0))) + softmax(t, 1); },
      test::tensor_from_doubles(DType::kF32, {2, 4}, {0, -70, -100, 8, 1, -95, -60, -120}));
}

}  // namespace
}  // namespace kiln
