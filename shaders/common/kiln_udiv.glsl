// Unsigned division of an index by a size known at dispatch only (Emitter::udiv), for every
// generated kernel. Self-contained: tests compile it on its own.
//
// n / d and n % d for a divisor known at dispatch only, m = floor((2^32 - 1) / d) (a size slot):
// n * m / 2^32 is within n / 2^32 < 1 below n / d, so its integer part is the quotient or one
// less, and one compare corrects it. (A CPU driver has no vector division: it would divide lane
// by lane.)
uint kiln_udiv(uint n, uint d, uint m) {
  uint hi, lo;
  umulExtended(n, m, hi, lo);
  return hi + uint(n - hi * d >= d);
}
uint kiln_umod(uint n, uint d, uint m) {
  uint hi, lo;
  umulExtended(n, m, hi, lo);
  const uint r = n - hi * d;
  return r >= d ? r - d : r;
}
