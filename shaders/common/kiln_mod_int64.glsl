// mod / fmod of int64 (the int and float ones are in kiln_math.glsl, which cannot name
// int64_t: the extension is declared only where a kernel uses it). Defined in the kernels that
// take mod or fmod of int64 (codegen/emit.cpp), after the int64 extension.
int64_t kiln_fmod(int64_t a, int64_t b) {
  if (b == int64_t(0)) return int64_t(0);
  const uint64_t r = uint64_t(a < int64_t(0) ? -a : a) % uint64_t(b < int64_t(0) ? -b : b);
  return a < int64_t(0) ? -int64_t(r) : int64_t(r);
}
int64_t kiln_mod(int64_t a, int64_t b) {
  const int64_t r = kiln_fmod(a, b);
  return r != int64_t(0) && (r < int64_t(0)) != (b < int64_t(0)) ? r + b : r;
}
