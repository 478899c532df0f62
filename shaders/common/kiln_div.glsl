// Float division with IEEE's special cases for a zero divisor: x / +-0 = +-inf by the signs,
// 0 / 0 and NaN / 0 = NaN. Drivers may divide as x * rcp(y) with a refinement step, which
// turns every x / 0 into NaN (lavapipe does). Defined in the kernels that divide
// (codegen/emit.cpp).
// Selects, not branches (kiln_common.glsl says why).
float kiln_div(float a, float b) {
  const float inf = uintBitsToFloat(((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u) |
                                    0x7f800000u);
  const float special = mix(inf, uintBitsToFloat(0x7fc00000u), kiln_or(a == 0.0, isnan(a)));
  return mix(a / b, special, b == 0.0);
}
vec4 kiln_div(vec4 a, vec4 b) {
  const vec4 inf = uintBitsToFloat(((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u) |
                                   0x7f800000u);
  const vec4 special = mix(inf, vec4(uintBitsToFloat(0x7fc00000u)),
                           kiln_or(equal(a, vec4(0.0)), isnan(a)));
  return mix(a / b, special, equal(b, vec4(0.0)));
}
