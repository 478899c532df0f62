// Shared helpers for every generated kernel: numerically safe activations and erf.
//
// IEEE's special cases are selects (mix with a bool), not branches: a kernel applies a helper
// to each of 4 lanes of several rows, and SwiftShader's JIT took minutes and gigabytes over a
// kernel with a few dozen inlined helpers that branched (GPUs run both sides of a divergent
// branch anyway). kiln_or / kiln_and combine conditions without GLSL's short-circuit branches.
bool kiln_or(bool a, bool b) { return any(bvec2(a, b)); }
bvec4 kiln_or(bvec4 a, bvec4 b) { return notEqual(uvec4(a) | uvec4(b), uvec4(0u)); }
bool kiln_and(bool a, bool b) { return all(bvec2(a, b)); }
bvec4 kiln_and(bvec4 a, bvec4 b) { return notEqual(uvec4(a) & uvec4(b), uvec4(0u)); }

// erf from the Chebyshev-fitted erfc approximation of Numerical Recipes (erfcc; fractional
// error below 1.2e-7 everywhere), with odd symmetry. Below |x| = 0.5 that absolute error would
// swamp erf(x) ~ 1.128 x (erf(x) / x of a tiny x gave 0), so there erf is its Taylor series
// to x^13 (relative error below 1e-8 at 0.5), which keeps the sign of zero too.
bool kiln_lt(float a, float b) { return a < b; }
bvec4 kiln_lt(vec4 a, vec4 b) { return lessThan(a, b); }
#define KILN_ERF(T)                                                                        \
  T kiln_erf(T x) {                                                                        \
    const T z = x * x;                                                                     \
    const T taylor = x * 1.1283791670955126 *                                              \
        (1.0 + z * (-0.3333333333333333 + z * (0.1 + z * (-0.023809523809523808 +          \
        z * (0.004629629629629629 + z * (-0.0007575757575757576 +                          \
        z * 0.00010683760683760684))))));                                                  \
    const T t = 1.0 / (1.0 + 0.5 * abs(x));                                                \
    const T y = 1.0 - t * exp(-z - 1.26551223 + t * (1.00002368 + t * (0.37409196 +        \
        t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 +          \
        t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));                      \
    /* y > 0: x's sign bit on it gives -y for x < 0 */                                     \
    return mix(uintBitsToFloat(floatBitsToUint(y) ^ (floatBitsToUint(x) & 0x80000000u)),   \
               taylor, kiln_lt(abs(x), T(0.5)));                                           \
  }
KILN_ERF(float)
KILN_ERF(vec4)
#undef KILN_ERF

// tanh without the overflow of (e^2x - 1) / (e^2x + 1) for large |x|; odd by the sign bit, so
// tanh(-0.0) = -0.0 as std::tanh gives.
float kiln_tanh(float x) {
  const float e = exp(-2.0 * abs(x));
  const float y = (1.0 - e) / (1.0 + e);
  // A NaN is returned as it is (SwiftShader's exp(NaN) is inf).
  return mix(uintBitsToFloat(floatBitsToUint(y) | (floatBitsToUint(x) & 0x80000000u)), x, isnan(x));
}
vec4 kiln_tanh(vec4 x) {
  const vec4 e = exp(-2.0 * abs(x));
  const vec4 y = (1.0 - e) / (1.0 + e);
  return mix(uintBitsToFloat(floatBitsToUint(y) | (floatBitsToUint(x) & 0x80000000u)), x, isnan(x));
}

// exp with IEEE's subnormal results: below x = -87.34 (2^-126) lavapipe's exp returns 0, though
// its arithmetic keeps subnormals; sign, compares and division then tell 0 from the
// interpreter's 4e-42. exp(x / 2) is normal down to x = -174, and its square rounds once into
// the subnormal range. kiln_exp_mul(x, k) = exp(x) * k for a normal k <= 1 (softmax's
// exp(x - m) / s), also rounded once; softmax's sum (at least 1) keeps the plain exp.
// A NaN argument is returned as it is: the spec leaves exp(NaN) open (SwiftShader gives inf).
// One exp either way: of x, or of x / 2, squared.
float kiln_exp(float x) {
  const bool tiny = x < -87.0;
  const float h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h, h * h, tiny), x, isnan(x));
}
vec4 kiln_exp(vec4 x) {
  const bvec4 tiny = lessThan(x, vec4(-87.0));
  const vec4 h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h, h * h, tiny), x, isnan(x));
}
// exp with a NaN argument returned as it is, nothing else: softmax's sum and the attention
// kernel's rescaling (exp(inf - inf) must stay NaN, as the interpreter has it).
float kiln_exp_nan(float x) { return mix(exp(x), x, isnan(x)); }
float kiln_exp_mul(float x, float k) {
  const bool tiny = x < -87.0;
  const float h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h * k, (h * k) * h, tiny), x, isnan(x));
}

float kiln_sigmoid(float x) { return mix(1.0 / (1.0 + exp(-x)), x, isnan(x)); }
vec4 kiln_sigmoid(vec4 x) { return mix(1.0 / (1.0 + exp(-x)), x, isnan(x)); }

// GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)).
float kiln_gelu(float x) { return 0.5 * x * (1.0 + kiln_erf(x * 0.70710678118654752)); }
vec4 kiln_gelu(vec4 x) { return 0.5 * x * (1.0 + kiln_erf(x * 0.70710678118654752)); }
// silu: x sigmoid(x); gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
float kiln_silu(float x) { return x * kiln_sigmoid(x); }
vec4 kiln_silu(vec4 x) { return x * kiln_sigmoid(x); }
float kiln_gelu_tanh(float x) {
  return 0.5 * x * (1.0 + kiln_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
vec4 kiln_gelu_tanh(vec4 x) {
  return 0.5 * x * (1.0 + kiln_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
float kiln_neg(float x) { return -x; }
vec4 kiln_neg(vec4 x) { return -x; }
// sign: -1, 0 or 1; NaN and -0.0 unchanged.
float kiln_sign(float x) { return mix(mix(x, -1.0, x < 0.0), 1.0, x > 0.0); }
vec4 kiln_sign(vec4 x) {
  return mix(mix(x, vec4(-1.0), lessThan(x, vec4(0.0))), vec4(1.0), greaterThan(x, vec4(0.0)));
}

#define KILN_INF uintBitsToFloat(0x7f800000u)

// max / min of int with a compare and a select, never GLSL.std.450 SMax / SMin: SPIRV-Tools
// 2023.1's spirv-opt folded a reduction's SMin(0x7fffffff, 2) over a literal to 0x7fffffff (the
// int64 forms are kiln_max_i64 / kiln_min_i64 for the same reason).
int kiln_max_i32(int a, int b) { return a > b ? a : b; }
int kiln_min_i32(int a, int b) { return a < b ? a : b; }

// maximum / minimum that propagate NaN from either operand (GLSL max/min leave it undefined),
// matching the interpreter and PyTorch: a NaN `a`, else `a` if strictly greater (less), else
// `b` (so b wins ties, +0 against -0 too, and a NaN b).
float kiln_maximum(float a, float b) { return mix(mix(b, a, a > b), a, isnan(a)); }
vec4 kiln_maximum(vec4 a, vec4 b) { return mix(mix(b, a, greaterThan(a, b)), a, isnan(a)); }
float kiln_minimum(float a, float b) { return mix(mix(b, a, a < b), a, isnan(a)); }
vec4 kiln_minimum(vec4 a, vec4 b) { return mix(mix(b, a, lessThan(a, b)), a, isnan(a)); }

// The float nearest to x among f16 values, rounding to nearest even, beyond f16's range
// (65520 and up) to +-inf, NaN and inf unchanged: the interpreter's float_to_half, so f16
// values computed in float inside a kernel round exactly where the interpreter stores a half.
float kiln_f16(float x) {
  const uint u = floatBitsToUint(x);
  const uint a = u & 0x7fffffffu, s = u & 0x80000000u;
  if (a >= 0x7f800000u) return x;                                  // inf, NaN
  if (a >= 0x477ff000u) return uintBitsToFloat(s | 0x7f800000u);   // rounds past 65504
  if (a >= 0x38800000u)                                            // normal half (>= 2^-14)
    return uintBitsToFloat(s | ((a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u));
  // subnormal half: a multiple of 2^-24 (exact scalings by powers of two around roundEven)
  const float m = roundEven(uintBitsToFloat(a) * 16777216.0) * 5.9604644775390625e-8;
  return uintBitsToFloat(s | floatBitsToUint(m));
}
// A float in int's range truncated toward zero, computed on its bits (codegen's float -> int
// casts; kiln_trunc_i64 is its int64 form, in kiln_int64.glsl).
int kiln_trunc_i32(float x) {
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23) & 0xffu) - 127;
  if (e < 0) return 0;
  const int m = int((u & 0x7fffffu) | 0x800000u);
  const int r = e >= 23 ? m << (e - 23) : m >> (23 - e);
  return (u >> 31) != 0u ? -r : r;
}
#include "common/kiln_udiv.glsl"

// relu that keeps NaN (x < 0 is false for NaN).
float kiln_relu(float x) { return x < 0.0 ? 0.0 : x; }
vec4 kiln_relu(vec4 x) { return mix(x, vec4(0.0), lessThan(x, vec4(0.0))); }

// Arithmetic with the constant +0.0 (codegen emits these for a literal zero operand), IEEE's
// special cases spelled out with compares and bit operations: lavapipe folds x * 0.0 to 0.0,
// x + 0.0 to x, 0.0 - x to -x and 0.0 / x to 0.0 by the constant alone, even under
// SignedZeroInfNanPreserve, which drops NaN, inf and the sign of zero.
float kiln_add_zero(float x) { return mix(x, 0.0, x == 0.0); }   // -0 + 0 = +0
float kiln_zero_sub(float x) { return mix(-x, 0.0, x == 0.0); }  // 0 - +-0 = +0
float kiln_mul_zero(float x) {
  return mix(uintBitsToFloat(floatBitsToUint(x) & 0x80000000u), uintBitsToFloat(0x7fc00000u),
             kiln_or(isnan(x), isinf(x)));
}
float kiln_zero_div(float x) {
  return mix(uintBitsToFloat(floatBitsToUint(x) & 0x80000000u), uintBitsToFloat(0x7fc00000u),
             kiln_or(isnan(x), x == 0.0));
}
vec4 kiln_add_zero(vec4 x) { return mix(x, vec4(0.0), equal(x, vec4(0.0))); }
vec4 kiln_zero_sub(vec4 x) { return mix(-x, vec4(0.0), equal(x, vec4(0.0))); }
vec4 kiln_mul_zero(vec4 x) {
  return mix(uintBitsToFloat(floatBitsToUint(x) & 0x80000000u), vec4(uintBitsToFloat(0x7fc00000u)),
             kiln_or(isnan(x), isinf(x)));
}
vec4 kiln_zero_div(vec4 x) {
  return mix(uintBitsToFloat(floatBitsToUint(x) & 0x80000000u), vec4(uintBitsToFloat(0x7fc00000u)),
             kiln_or(isnan(x), equal(x, vec4(0.0))));
}

// log, sqrt and inversesqrt are undefined outside their domain in GLSL (drivers return anything:
// lavapipe gives NaN for inversesqrt(0) and a number for log of a negative). These give IEEE's
// answers, as the interpreter does: log(x < 0) = NaN, log(+-0) = -inf, sqrt(x < 0) = NaN,
// rsqrt(+0) = inf, rsqrt(-0) = -inf, rsqrt(inf) = 0, rsqrt(x < 0) = NaN (docs/ops.md).
float kiln_nan_value() { return uintBitsToFloat(0x7fc00000u); }
float kiln_log(float x) {
  float r = mix(log(x), kiln_nan_value(), x < 0.0);
  r = mix(r, uintBitsToFloat(0xff800000u), x == 0.0);
  return mix(r, x, kiln_or(isnan(x), kiln_and(isinf(x), x > 0.0)));
}
float kiln_sqrt(float x) { return mix(sqrt(x), kiln_nan_value(), x < 0.0); }
float kiln_rsqrt(float x) {
  float r = mix(inversesqrt(x), 0.0, isinf(x));
  r = mix(r, kiln_nan_value(), x < 0.0);
  r = mix(r, uintBitsToFloat((floatBitsToUint(x) & 0x80000000u) | 0x7f800000u), x == 0.0);
  return mix(r, x, isnan(x));
}
vec4 kiln_log(vec4 x) {
  vec4 r = mix(log(x), vec4(kiln_nan_value()), lessThan(x, vec4(0.0)));
  r = mix(r, vec4(uintBitsToFloat(0xff800000u)), equal(x, vec4(0.0)));
  return mix(r, x, kiln_or(isnan(x), kiln_and(isinf(x), greaterThan(x, vec4(0.0)))));
}
vec4 kiln_sqrt(vec4 x) { return mix(sqrt(x), vec4(kiln_nan_value()), lessThan(x, vec4(0.0))); }
vec4 kiln_rsqrt(vec4 x) {
  vec4 r = mix(inversesqrt(x), vec4(0.0), isinf(x));
  r = mix(r, vec4(kiln_nan_value()), lessThan(x, vec4(0.0)));
  r = mix(r, uintBitsToFloat((floatBitsToUint(x) & 0x80000000u) | 0x7f800000u),
          equal(x, vec4(0.0)));
  return mix(r, x, isnan(x));
}

#include "common/kiln_math.glsl"
