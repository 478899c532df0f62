// Float division with IEEE's special cases for a zero divisor: x / +-0 = +-inf by the signs,
// 0 / 0 and NaN / 0 = NaN. Drivers may divide as x * rcp(y) with a refinement step, which
// turns every x / 0 into NaN (lavapipe does). Defined in the kernels that divide
// (codegen/emit.cpp).
float kiln_div(float a, float b) {
  if (b != 0.0) return a / b;
  if (a == 0.0 || isnan(a)) return uintBitsToFloat(0x7fc00000u);
  return ((floatBitsToUint(a) ^ floatBitsToUint(b)) >> 31) != 0u ? -KILN_INF : KILN_INF;
}
vec4 kiln_div(vec4 a, vec4 b) { return vec4(kiln_div(a.x, b.x), kiln_div(a.y, b.y), kiln_div(a.z, b.z), kiln_div(a.w, b.w)); }
