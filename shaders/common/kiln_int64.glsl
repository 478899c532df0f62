// int64 helpers, defined in every kernel that uses int64 (codegen/emit.cpp), after the int64
// extension: no file of shaders/ that every kernel includes may name int64_t, since devices
// without shaderInt64 lack the extension.
//
// max / min of int64 with a compare and a select: SPIRV-Tools 2023.1's spirv-opt folds
// GLSL.std.450 SMax / SMin of 64-bit constants by their low words (max(INT64_MIN, -6) gave
// INT64_MIN once a reduction loop over a literal was unrolled).
// kiln_trunc_i64: float -> int64 truncated on the float's bits (lavapipe's compiler folds
// int64_t(float(i)) back to i, which skips the rounding of the conversion to float).
int64_t kiln_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t kiln_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t kiln_trunc_i64(float x) {
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23) & 0xffu) - 127;
  if (e < 0) return int64_t(0);
  const int64_t m = int64_t((u & 0x7fffffu) | 0x800000u);
  const int64_t r = e >= 23 ? m << (e - 23) : m >> (23 - e);
  return (u >> 31) != 0u ? -r : r;
}
