// kiln_ipow of int64 (kiln_pow.glsl has the float and int ones): powers by squaring, wrapping
// like mul; a negative exponent truncates 1 / x^|y| toward zero. Defined in the kernels that use
// pow and int64 (codegen/emit.cpp), after the int64 extension.
int64_t kiln_ipow(int64_t x, int64_t y) {
  if (y < int64_t(0))
    return x == int64_t(1) ? int64_t(1)
         : (x == int64_t(-1) ? ((y & int64_t(1)) != int64_t(0) ? int64_t(-1) : int64_t(1))
                             : int64_t(0));
  int64_t r = int64_t(1);
  for (uint64_t e = uint64_t(y); e != uint64_t(0); e >>= 1) {
    if ((e & uint64_t(1)) != uint64_t(0)) r *= x;
    x *= x;
  }
  return r;
}
