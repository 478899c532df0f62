// int64 on devices without shaderInt64: a value is a uvec2 of its two's-complement words (x:
// low, y: high), the layout of an int64 in a std430 buffer, so buffers keep their element size
// and bytes. Defined in every kernel that uses int64 on such a device (codegen/emit.cpp), in
// place of kiln_int64.glsl; codegen writes every int64 operation as one of these functions
// (GLSL's operators on uvec2 act per word). The results are the interpreter's exactly:
// add, sub, mul, neg and abs wrap; shifts follow codegen/emit_ops.cpp's native ones, mod, fmod
// and ipow kiln_mod_int64.glsl and kiln_pow_int64.glsl. The remainder and the power loop over
// 64 bits (written out, SwiftShader's compiler took minutes over a kernel with two remainders);
// Mesa's llvmpipe ends an invocation's loops after 65535 iterations in all, so codegen counts
// those iterations into the kernel's (Kernel::helper_loop_factor).
uvec2 kiln_i64(int x) { return uvec2(uint(x), uint(x >> 31)); }
bool kiln_i64_negative(uvec2 a) { return int(a.y) < 0; }
uvec2 kiln_i64_add(uvec2 a, uvec2 b) {
  uint carry;
  const uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 kiln_i64_sub(uvec2 a, uvec2 b) {
  uint borrow;
  const uint lo = usubBorrow(a.x, b.x, borrow);
  return uvec2(lo, a.y - b.y - borrow);
}
uvec2 kiln_i64_neg(uvec2 a) { return kiln_i64_sub(uvec2(0u), a); }
uvec2 kiln_i64_mul(uvec2 a, uvec2 b) {
  uint hi, lo;
  umulExtended(a.x, b.x, hi, lo);
  return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}
bool kiln_i64_lt(uvec2 a, uvec2 b) { return a.y != b.y ? int(a.y) < int(b.y) : a.x < b.x; }
bool kiln_i64_le(uvec2 a, uvec2 b) { return !kiln_i64_lt(b, a); }
bool kiln_i64_gt(uvec2 a, uvec2 b) { return kiln_i64_lt(b, a); }
bool kiln_i64_ge(uvec2 a, uvec2 b) { return !kiln_i64_lt(a, b); }
uvec2 kiln_max_i64(uvec2 a, uvec2 b) { return kiln_i64_gt(a, b) ? a : b; }
uvec2 kiln_min_i64(uvec2 a, uvec2 b) { return kiln_i64_lt(a, b) ? a : b; }
uvec2 kiln_i64_abs(uvec2 a) { return kiln_i64_negative(a) ? kiln_i64_neg(a) : a; }
uvec2 kiln_i64_sign(uvec2 a) {
  return kiln_i64_negative(a) ? uvec2(0xffffffffu) : (a == uvec2(0u) ? uvec2(0u) : uvec2(1u, 0u));
}
// Shifts by an amount in [0, 64): logical left, arithmetic right.
uvec2 kiln_i64_shl(uvec2 a, uint s) {
  if (s == 0u) return a;
  if (s < 32u) return uvec2(a.x << s, (a.y << s) | (a.x >> (32u - s)));
  return uvec2(0u, a.x << (s - 32u));
}
uvec2 kiln_i64_shr(uvec2 a, uint s) {
  if (s == 0u) return a;
  if (s < 32u) return uvec2((a.x >> s) | (a.y << (32u - s)), uint(int(a.y) >> s));
  return uvec2(uint(int(a.y) >> (s - 32u)), uint(int(a.y) >> 31));
}
uvec2 kiln_u64_shr(uvec2 a, uint s) {
  if (s == 0u) return a;
  if (s < 32u) return uvec2((a.x >> s) | (a.y << (32u - s)), a.y >> s);
  return uvec2(a.y >> (s - 32u), 0u);
}
// The interpreter's shifts: an amount outside [0, 64) gives 0 (left) or the sign fill (right).
uvec2 kiln_i64_shift_left(uvec2 a, uvec2 b) {
  return b.y == 0u && b.x < 64u ? kiln_i64_shl(a, b.x) : uvec2(0u);
}
uvec2 kiln_i64_shift_right(uvec2 a, uvec2 b) {
  return b.y == 0u && b.x < 64u ? kiln_i64_shr(a, b.x) : uvec2(uint(int(a.y) >> 31));
}
// One step of the shift-subtract remainder: r = 2 r + bit, less d when that reaches d.
uvec2 kiln_u64_rem_step(uvec2 r, uint bit, uvec2 d) {
  r = uvec2((r.x << 1) | bit, (r.y << 1) | (r.x >> 31));
  return r.y > d.y || (r.y == d.y && r.x >= d.x) ? kiln_i64_sub(r, d) : r;
}
// Unsigned remainder of 64-bit words (d != 0): one 32-bit % when both fit a word, else shift
// and subtract over the dividend's 64 bits (r < d <= 2^63 keeps 2 r + 1 within 64 bits).
uvec2 kiln_u64_rem(uvec2 n, uvec2 d) {
  if (n.y == 0u && d.y == 0u) return uvec2(n.x % d.x, 0u);
  uvec2 r = uvec2(0u);
  for (uint i = 0u; i < 64u; ++i) {
    const uint bit = i < 32u ? (n.y >> (31u - i)) & 1u : (n.x >> (63u - i)) & 1u;
    r = kiln_u64_rem_step(r, bit, d);
  }
  return r;
}
uvec2 kiln_fmod(uvec2 a, uvec2 b) {
  if (b == uvec2(0u)) return uvec2(0u);
  const uvec2 r = kiln_u64_rem(kiln_i64_abs(a), kiln_i64_abs(b));
  return kiln_i64_negative(a) ? kiln_i64_neg(r) : r;
}
uvec2 kiln_mod(uvec2 a, uvec2 b) {
  const uvec2 r = kiln_fmod(a, b);
  return r != uvec2(0u) && kiln_i64_negative(r) != kiln_i64_negative(b) ? kiln_i64_add(r, b) : r;
}
uvec2 kiln_ipow(uvec2 x, uvec2 y) {
  if (kiln_i64_negative(y)) {
    if (x == uvec2(1u, 0u)) return x;
    if (x == uvec2(0xffffffffu)) return (y.x & 1u) != 0u ? x : uvec2(1u, 0u);
    return uvec2(0u);
  }
  uvec2 r = uvec2(1u, 0u);
  for (uvec2 e = y; e != uvec2(0u); e = kiln_u64_shr(e, 1u)) {
    if ((e.x & 1u) != 0u) r = kiln_i64_mul(r, x);
    x = kiln_i64_mul(x, x);
  }
  return r;
}
// int64 -> float rounded to nearest even, as a C++ cast rounds (float(hi) * 2^32 + lo would
// round twice).
float kiln_i64_to_float(uvec2 a) {
  const bool neg = kiln_i64_negative(a);
  const uvec2 m = neg ? kiln_i64_neg(a) : a;  // |a|; INT64_MIN stays 2^63, read unsigned
  const int top = m.y != 0u ? 32 + findMSB(m.y) : findMSB(m.x);
  float f;
  if (top < 24) {
    f = float(m.x);  // exact
  } else {
    const uint sh = uint(top - 23);  // bits below the 24-bit mantissa, >= 1
    const uint m25 = kiln_u64_shr(m, sh - 1u).x;  // mantissa and the rounding bit
    const bool sticky = sh > 1u && kiln_i64_shl(m, 65u - sh) != uvec2(0u);
    uint mant = m25 >> 1;
    if ((m25 & 1u) != 0u && (sticky || (mant & 1u) != 0u)) mant += 1u;
    f = float(mant) * uintBitsToFloat((127u + sh) << 23);  // exact: mant <= 2^24, times 2^sh
  }
  return neg ? -f : f;
}
// float -> int64 truncated toward zero, for |x| < 2^63 (the caller saturates and maps NaN).
uvec2 kiln_trunc_i64(float x) {
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23) & 0xffu) - 127;
  if (e < 0) return uvec2(0u);
  const uvec2 m = uvec2((u & 0x7fffffu) | 0x800000u, 0u);
  const uvec2 r = e >= 23 ? kiln_i64_shl(m, uint(e - 23)) : kiln_u64_shr(m, uint(23 - e));
  return (u >> 31) != 0u ? kiln_i64_neg(r) : r;
}
// An int64 index clamped into [0, last] (last < 2^32), as a uint.
uint kiln_i64_clamp_index(uvec2 v, uint last) {
  if (kiln_i64_negative(v)) return 0u;
  return v.y != 0u ? last : min(v.x, last);
}
