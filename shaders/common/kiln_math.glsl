// Trigonometric and hyperbolic functions and their inverses for the elementwise ops, matching
// the interpreter's std:: results within a few float ulps, with IEEE's answers outside each
// domain: NaN for asin/acos beyond [-1, 1], acosh below 1, atanh beyond [-1, 1], sin/cos/tan of
// +-inf; atanh(+-1) = +-inf. GLSL leaves these undefined there, and Mesa's own asin/acos/atan
// are low-precision approximations, so the inverse functions are Cephes' single-precision
// polynomials. Odd functions keep the sign of zero (kiln_copysign).

const float KILN_PIO2 = 1.5707963267948966;
const float KILN_PIO4 = 0.7853981633974483;
const float KILN_LN2 = 0.6931471805599453;

float kiln_copysign(float mag, float s) {
  return uintBitsToFloat((floatBitsToUint(mag) & 0x7fffffffu) | (floatBitsToUint(s) & 0x80000000u));
}

// log(1 + x) without the cancellation of log(1 + x) for small x (Goldberg's correction;
// `precise` keeps the driver from folding (1 + x) - 1 to x).
float kiln_log1p(float x) {
  precise float u = 1.0 + x;
  precise float d = u - 1.0;
  // kiln_log: log(u < 0) is left open by GLSL (SwiftShader returns a number)
  const float lu = kiln_log(u);
  float r = mix(lu * (x / d), lu, kiln_or(isinf(u), u == 0.0));
  return mix(r, x, u == 1.0);  // keeps -0.0
}

// Bits of 2/pi, 32 to a word, after a zero word (the window below may start before the point).
const uint KILN_TWO_OVER_PI[7] = uint[7](0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                         0xdb629599u, 0x3c439041u);

// Argument reduction for sin, cos and tan of a finite |a| > pi/4 (Payne and Hanek's, in 32-bit
// integers): |a| = m 2^(e-150) with a 24-bit m, and |a| 2/pi mod 4 is m times the 64 bits of 2/pi
// that line up with 2^(e-150), mod 2^64, as a fixed-point number with 2 integer bits. Returns
// the quadrant q (mod 4) and r in [-pi/4, pi/4] with |a| = r + q pi/2 (mod 2 pi), to about
// 2^-37 absolute at any magnitude (GLSL's sin and cos lose all accuracy beyond a few thousand).
uint kiln_trig_reduce(float a, out float r) {
  const uint ia = floatBitsToUint(a) & 0x7fffffffu;
  const uint m = (ia & 0x7fffffu) | 0x800000u;
  const uint pos = (ia >> 23) - 120u;  // e - 150 - 2 + 32: first bit of the window
  const uint w = pos >> 5, b = pos & 31u;
  uint th = KILN_TWO_OVER_PI[w] << b, tl = KILN_TWO_OVER_PI[w + 1u] << b;
  if (b > 0u) {
    th |= KILN_TWO_OVER_PI[w + 1u] >> (32u - b);
    tl |= KILN_TWO_OVER_PI[w + 2u] >> (32u - b);
  }
  uint hi, lo;
  umulExtended(m, tl, hi, lo);
  hi += m * th;
  uint q = hi >> 30;
  hi &= 0x3fffffffu;
  float sgn = 1.0;
  if ((hi & 0x20000000u) != 0u) {  // fraction >= 1/2: take fraction - 1, next quadrant
    lo = ~lo + 1u;
    hi = (~hi + (lo == 0u ? 1u : 0u)) & 0x3fffffffu;
    q += 1u;
    sgn = -1.0;
  }
  const float f = float(hi) * 9.313225746154785e-10 + float(lo) * 2.168404344971009e-19;
  r = sgn * f * KILN_PIO2;
  return q & 3u;
}

// sin and cos on [-pi/4, pi/4] from Cephes' single-precision polynomials: the Vulkan spec
// bounds the driver's sin and cos only to an absolute 2^-11 (SwiftShader's are that loose), so
// Kiln's results do not depend on the driver. sin keeps the sign of zero (x is returned below
// 2^-13, where sin(x) rounds to x).
float kiln_sin_poly(float x) {
  const float z = x * x;
  const float y = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * x + x;
  return mix(y, x, abs(x) < 1.220703125e-4);
}
float kiln_cos_poly(float x) {
  const float z = x * x;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z -
         0.5 * z + 1.0;
}
// r in [0, pi/4] or reduced, and the quadrant of |x|: |x| and 0 where |x| <= pi/4 (and for NaN),
// else kiln_trig_reduce's, always computed (on 1.0 for small x, outside its domain) and selected.
uint kiln_trig_quadrant(float x, out float r) {
  const bool small = !(abs(x) > KILN_PIO4);
  float reduced;
  const uint q = kiln_trig_reduce(mix(x, 1.0, small), reduced);
  r = mix(reduced, abs(x), small);
  return q * uint(!small);
}
// The polynomial of the quadrant: sin or cos of r, negated in quadrants 2 and 3.
float kiln_trig_poly(uint q, float r) {
  const float v = mix(kiln_sin_poly(r), kiln_cos_poly(r), (q & 1u) != 0u);
  return mix(v, -v, (q & 2u) != 0u);
}
float kiln_sin(float x) {
  float r;
  const uint q = kiln_trig_quadrant(x, r);
  const float y = kiln_copysign(1.0, x) * kiln_trig_poly(q, r);
  return mix(mix(y, x, isnan(x)), kiln_nan_value(), isinf(x));
}
float kiln_cos(float x) {
  float r;
  const uint q = (kiln_trig_quadrant(x, r) + 1u) & 3u;
  const float y = kiln_trig_poly(q, r);
  return mix(mix(y, x, isnan(x)), kiln_nan_value(), isinf(x));
}
float kiln_tan(float x) {
  float r;
  const uint q = kiln_trig_quadrant(x, r);
  const float s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  const float t = kiln_copysign(1.0, x) * mix(s / c, -c / s, (q & 1u) != 0u);
  return mix(mix(t, x, isnan(x)), kiln_nan_value(), isinf(x));
}

float kiln_atan(float xx) {
  const float a = abs(xx);
  const bool big = a > 2.414213562373095, mid = a > 0.4142135623730950;
  const float x = mix(mix(a, (a - 1.0) / (a + 1.0), mid), -1.0 / a, big);
  const float z = x * x;
  const float y = mix(mix(0.0, KILN_PIO4, mid), KILN_PIO2, big) +
                  ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
                    3.33329491539e-1) * z * x + x);
  return kiln_copysign(y, xx);
}

float kiln_asin(float xx) {
  const float a = abs(xx);
  const bool high = a > 0.5;
  const float z = mix(a * a, 0.5 * (1.0 - a), high);
  const float x = mix(a, sqrt(z), high);
  const float y = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z +
                    7.4953002686e-2) * z + 1.6666752422e-1) * z * x + x;
  return mix(kiln_copysign(mix(y, KILN_PIO2 - (y + y), high), xx), kiln_nan_value(), a > 1.0);
}

float kiln_acos(float x) {
  const bool low = x < -0.5, high = x > 0.5;
  const float s = kiln_asin(mix(x, sqrt(0.5 * (1.0 - abs(x))), kiln_or(low, high)));
  const float y = mix(mix(KILN_PIO2 - s, 2.0 * s, high), 2.0 * KILN_PIO2 - 2.0 * s, low);
  return mix(y, kiln_nan_value(), abs(x) > 1.0);
}

// sinh and cosh: a polynomial below 1 (sinh; e^x - e^-x cancels there), e^|x| / 2 as
// (e^(|x|/2) / 2) * e^(|x|/2) near float's range, where e^|x| alone overflows first.
float kiln_sinh(float x) {
  const float a = abs(x), z = x * x;
  const float poly = ((2.03721912945e-4 * z + 8.33028376239e-3) * z + 1.66667160211e-1) * z * x + x;
  const bool huge = a > 80.0;
  const float e = exp(mix(a, 0.5 * a, huge));
  const float y = kiln_copysign(mix(0.5 * e - 0.5 / e, (0.5 * e) * e, huge), x);
  return mix(mix(y, poly, a < 1.0), x, isnan(x));
}

float kiln_cosh(float x) {
  const float a = abs(x);
  const bool huge = a > 80.0;
  const float e = exp(mix(a, 0.5 * a, huge));
  return mix(mix(0.5 * e + 0.5 / e, (0.5 * e) * e, huge), x, isnan(x));
}

float kiln_asinh(float x) {
  const float a = abs(x);
  const float y = mix(kiln_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a))), kiln_log(a) + KILN_LN2,
                      a > 268435456.0);  // 2^28: sqrt(1 + a^2) is a
  return mix(kiln_copysign(y, x), x, kiln_or(isinf(a), isnan(a)));
}

float kiln_acosh(float x) {
  const float t = x - 1.0;
  float y = mix(kiln_log1p(t + sqrt(2.0 * t + t * t)), kiln_log(x) + KILN_LN2, x > 268435456.0);
  y = mix(y, x, isinf(x));
  y = mix(y, kiln_nan_value(), x < 1.0);
  return mix(y, x, isnan(x));
}

float kiln_atanh(float x) {
  const float a = abs(x);
  float y = kiln_copysign(0.5 * kiln_log1p((a + a) / (1.0 - a)), x);
  y = mix(y, kiln_copysign(KILN_INF, x), a == 1.0);
  y = mix(y, kiln_nan_value(), a > 1.0);
  return mix(y, x, isnan(x));
}

#define KILN_MATH_VEC4(f) \
  vec4 f(vec4 x) { return vec4(f(x.x), f(x.y), f(x.z), f(x.w)); }
KILN_MATH_VEC4(kiln_sin)
KILN_MATH_VEC4(kiln_cos)
KILN_MATH_VEC4(kiln_tan)
KILN_MATH_VEC4(kiln_asin)
KILN_MATH_VEC4(kiln_acos)
KILN_MATH_VEC4(kiln_atan)
KILN_MATH_VEC4(kiln_sinh)
KILN_MATH_VEC4(kiln_cosh)
KILN_MATH_VEC4(kiln_asinh)
KILN_MATH_VEC4(kiln_acosh)
KILN_MATH_VEC4(kiln_atanh)
KILN_MATH_VEC4(kiln_log1p)
#undef KILN_MATH_VEC4

// Remainders. kiln_fmod is C's fmod (the sign of x), exact: the remainder of the mantissas'
// long division, one quotient bit per exponent step. kiln_mod is Python's % (the sign of y):
// fmod plus y where the signs differ, a zero as +-0 by y's sign. Integers: x mod 0 is 0, and
// the remainder is taken on magnitudes (GLSL's % is undefined for negative operands).
float kiln_fmod(float x, float y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == 0.0) return kiln_nan_value();
  const float ax = abs(x), ay = abs(y);
  if (isinf(y) || ax < ay) return x;
  int ex, ey;
  const float fx = frexp(ax, ex), fy = frexp(ay, ey);
  uint mx = uint(fx * 16777216.0), my = uint(fy * 16777216.0);  // 24-bit integers
  for (int e = ex - ey; e > 0; --e) {
    if (mx >= my) mx -= my;
    mx <<= 1;
  }
  if (mx >= my) mx -= my;
  return kiln_copysign(ldexp(float(mx), ey - 24), x);
}
float kiln_mod(float x, float y) {
  const float r = kiln_fmod(x, y);
  return mix(mix(r, r + y, (r < 0.0) != (y < 0.0)), kiln_copysign(0.0, y), r == 0.0);
}
vec4 kiln_fmod(vec4 x, vec4 y) {
  return vec4(kiln_fmod(x.x, y.x), kiln_fmod(x.y, y.y), kiln_fmod(x.z, y.z), kiln_fmod(x.w, y.w));
}
vec4 kiln_mod(vec4 x, vec4 y) {
  return vec4(kiln_mod(x.x, y.x), kiln_mod(x.y, y.y), kiln_mod(x.z, y.z), kiln_mod(x.w, y.w));
}
int kiln_fmod(int a, int b) {
  if (b == 0) return 0;
  const uint r = uint(a < 0 ? -a : a) % uint(b < 0 ? -b : b);
  return a < 0 ? -int(r) : int(r);
}
int kiln_mod(int a, int b) {
  const int r = kiln_fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
