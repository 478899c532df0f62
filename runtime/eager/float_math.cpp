// float_math.h's functions. tanh(t) for t = |x| is t (1 - t^2/3 + 2 t^4/15) below 2^-6 (the
// series' next term is below 2^-40 of it), else (1 - e) / (1 + e) with e = exp(-2 min(t, 20))
// (beyond 20, tanh rounds to 1 in double already), in double; exp(y) for y in [-40, 0] is
// 2^k exp(r) with k = round(y / ln 2) (the 1.5 * 2^52 rounding trick, whose low bits are k),
// r = y - k ln 2 in two parts (|r| <= ln 2 / 2), exp(r) by its Taylor series to degree 12
// (remainder below 2^-52 relative). The result's error before the final rounding is near
// 2^-50, so the float is the exact value rounded to nearest except where that value lies
// within 2^-26 ulp of a midpoint (60 floats of 2^32; each 1 ulp off).
//
// Both branches are computed and selected, with no control flow, so the loop vectorises; this
// file is compiled with -fno-trapping-math (CMakeLists.txt), which lets GCC if-convert the
// selects, and every build contracts no multiply-add (-ffp-contract=off on kiln_eager), so the
// AVX2 clone of the batch loop and the plain one compute the same IEEE operations in the same
// order as the scalar function.
#include "eager/float_math.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kiln::eager {
namespace {

constexpr double kShifter = 0x1.8p52;  // adding it rounds to an integer held in the low bits

/// y = k ln 2 + r with k = round(y / ln 2) and |r| <= ln 2 / 2 (ln 2 in two parts):
/// `shifted` holds k in its low bits (exponent_of).
struct ReducedByLn2 {
  double shifted, r;
};

inline ReducedByLn2 reduce_by_ln2(double y) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  const double shifted = y * kLog2e + kShifter;
  const double k = shifted - kShifter;
  return {shifted, (y - k * kLn2Hi) - k * kLn2Lo};
}

/// k of reduce_by_ln2.
inline int64_t exponent_of(double shifted) {
  return std::bit_cast<int64_t>(shifted) - std::bit_cast<int64_t>(kShifter);
}

/// exp(y) for y in [-40, 0], in double (see the file comment).
inline double exp_nonpositive(double y) {
  const auto [shifted, r] = reduce_by_ln2(y);
  double p = 1.0 / 479001600.0;  // 1 / 12!
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int64_t ki = exponent_of(shifted);
  return p * std::bit_cast<double>((ki + 1023) << 52);  // k in [-58, 0]: a normal power of two
}

/// exp(y) for any y <= 0, -inf or NaN, in double: 2^k exp(r) as exp_nonpositive, the power of
/// two applied in two normal halves so that a result in the subnormal range is rounded once; 0
/// below -746 (where double's exp underflows to 0), NaN for a NaN.
inline double exp_nonpositive_any(double y) {
  const bool under = y < -746.0;
  const auto [shifted, r] = reduce_by_ln2(under ? -746.0 : y);  // a NaN stays (compare false)
  // exp(r) = 1 + (r + r^2 q(r)): the small correction summed first, so that the result is
  // rounded once at the end; Taylor's series to degree 14 (the remainder, below r^15 / 15!, is
  // under 2^-62 for |r| <= ln 2 / 2).
  double q = 1.0 / 87178291200.0;  // 1 / 14!
  q = q * r + 1.0 / 6227020800.0;
  q = q * r + 1.0 / 479001600.0;
  q = q * r + 1.0 / 39916800.0;
  q = q * r + 1.0 / 3628800.0;
  q = q * r + 1.0 / 362880.0;
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  const double p = 1.0 + (r + (r * r) * q);
  // k in [-1077, 0] (any bits for a NaN, whose p is NaN): 2^k as 2^half * 2^(k - half), each
  // at least 2^-539, a normal double.
  const int64_t ki = exponent_of(shifted);
  const int64_t half = ki / 2;
  const double scaled = p * std::bit_cast<double>(((half + 1023) & 0x7ff) << 52) *
                        std::bit_cast<double>(((ki - half + 1023) & 0x7ff) << 52);
  return under ? 0.0 : scaled;
}

inline float tanh_one(float x) {
  const double t = std::fabs(static_cast<double>(x));
  const double t2 = t * t;
  const double series = t * (1.0 - t2 * (1.0 / 3.0 - t2 * (2.0 / 15.0)));
  const double e = exp_nonpositive(-2.0 * std::min(t, 20.0));
  const double ratio = (1.0 - e) / (1.0 + e);
  const float r = std::copysign(static_cast<float>(t < 0x1p-6 ? series : ratio), x);
  const float quiet = x + x;
  return x != x ? quiet : r;
}

}  // namespace

double softmax_exp(double y) {
  return exp_nonpositive_any(y);
}

float tanh_float(float x) {
  return tanh_one(x);
}

// The AVX2 clones are chosen by an ifunc resolver, which the dynamic loader runs before a
// sanitizer's runtime is up: instrumented, it crashes every ThreadSanitizer binary at start.
// Sanitizer builds take the plain loops (the same bits).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define KILN_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KILN_AVX2_CLONES
#endif

KILN_AVX2_CLONES void tanh_floats(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = tanh_one(x[i]);
}

KILN_AVX2_CLONES void softmax_exps(const float* __restrict x, float m, double* __restrict ex, int64_t n) {
  const double md = m;
  for (int64_t i = 0; i < n; ++i) ex[i] = exp_nonpositive_any(static_cast<double>(x[i]) - md);
}

KILN_AVX2_CLONES float max_ignoring_nan(const float* __restrict x, int64_t n) {
  // 16 running maxima (one vector's lanes), then theirs: the same value as one running max,
  // up to the sign of a zero maximum.
  float lanes[16];
  for (float& l : lanes) l = -__builtin_inff();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) lanes[k] = x[i + k] > lanes[k] ? x[i + k] : lanes[k];
  float m = -__builtin_inff();
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (float l : lanes) m = l > m ? l : m;
  return m;
}

}  // namespace kiln::eager
