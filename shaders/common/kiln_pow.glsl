// pow with std::pow's special cases (GLSL's pow is undefined for x < 0 and for x = 0, y <= 0),
// and exact integer powers by squaring (wrapping like mul; a negative exponent truncates
// 1 / x^|y| toward zero). Defined in the kernels that use pow (codegen/emit.cpp; the int64
// kiln_ipow is in kiln_pow_int64.glsl).
float kiln_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return x + y;
  const bool yint = floor(y) == y;
  const bool odd = yint && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
  const bool xneg = (floatBitsToUint(x) >> 31) != 0u;
  if (isinf(y)) {
    const float ax = abs(x);
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? KILN_INF : 0.0;
  }
  if (x == 0.0 || isinf(x)) {
    const float r = (y > 0.0) == (x == 0.0) ? 0.0 : KILN_INF;
    return xneg && odd ? -r : r;
  }
  if (xneg && !yint) return uintBitsToFloat(0x7fc00000u);
  const float r = pow(abs(x), y);
  return xneg && odd ? -r : r;
}
vec4 kiln_pow(vec4 x, vec4 y) {
  return vec4(kiln_pow(x.x, y.x), kiln_pow(x.y, y.y), kiln_pow(x.z, y.z), kiln_pow(x.w, y.w));
}
int kiln_ipow(int x, int y) {
  if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) != 0 ? -1 : 1) : 0);
  int r = 1;
  for (uint e = uint(y); e != 0u; e >>= 1) {
    if ((e & 1u) != 0u) r *= x;
    x *= x;
  }
  return r;
}
