// pow with std::pow's special cases (GLSL's pow is undefined for x < 0 and for x = 0, y <= 0),
// and exact integer powers by squaring (wrapping like mul; a negative exponent truncates
// 1 / x^|y| toward zero). Defined in the kernels that use pow (codegen/emit.cpp; the int64
// kiln_ipow is in kiln_pow_int64.glsl).
float kiln_pow(float x, float y) {  // selects from the last case back (kiln_common.glsl)
  const bool yint = floor(y) == y;
  const bool odd = kiln_and(kiln_and(yint, abs(y) < 16777216.0), mod(y, 2.0) == 1.0);
  const bool flip = kiln_and((floatBitsToUint(x) >> 31) != 0u, odd);
  const float ax = abs(x);
  const float p = pow(ax, y);
  float r = mix(mix(p, -p, flip), uintBitsToFloat(0x7fc00000u),
                kiln_and((floatBitsToUint(x) >> 31) != 0u, !yint));
  const float rz = mix(KILN_INF, 0.0, (y > 0.0) == (x == 0.0));
  r = mix(r, mix(rz, -rz, flip), kiln_or(x == 0.0, isinf(x)));
  r = mix(r, mix(mix(0.0, KILN_INF, (ax > 1.0) == (y > 0.0)), 1.0, ax == 1.0), isinf(y));
  r = mix(r, x + y, kiln_or(isnan(x), isnan(y)));
  return mix(r, 1.0, kiln_or(y == 0.0, x == 1.0));
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
