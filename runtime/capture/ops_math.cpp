// The Tensor functions of the elementwise math ops: trigonometric and hyperbolic functions and
// their inverses, floor, ceil and round; the remainders mod and fmod and the bit shifts (each
// one elementwise node; rules in runtime/graph/op.cpp).
#include "capture/trace.h"

namespace kiln {

Tensor sin(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Sin, {a}, {}, loc);
}
Tensor cos(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Cos, {a}, {}, loc);
}
Tensor tan(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Tan, {a}, {}, loc);
}
Tensor asin(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Asin, {a}, {}, loc);
}
Tensor acos(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Acos, {a}, {}, loc);
}
Tensor atan(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Atan, {a}, {}, loc);
}
Tensor sinh(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Sinh, {a}, {}, loc);
}
Tensor cosh(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Cosh, {a}, {}, loc);
}
Tensor asinh(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Asinh, {a}, {}, loc);
}
Tensor acosh(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Acosh, {a}, {}, loc);
}
Tensor atanh(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Atanh, {a}, {}, loc);
}
Tensor floor(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Floor, {a}, {}, loc);
}
Tensor ceil(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Ceil, {a}, {}, loc);
}
Tensor round(const Tensor& a, Loc loc) {
  return apply_op(OpKind::Round, {a}, {}, loc);
}

Tensor cumsum(const Tensor& a, int64_t axis, bool exclusive, bool reverse, Loc loc) {
  Attrs attrs;
  attrs.axis = axis;
  attrs.index = (exclusive ? kCumSumExclusive : 0) | (reverse ? kCumSumReverse : 0);
  return apply_op(OpKind::CumSum, {a}, std::move(attrs), loc);
}
Tensor mod(const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::Mod, {a, b}, {}, loc);
}
Tensor fmod(const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::FMod, {a, b}, {}, loc);
}
Tensor shift_left(const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::ShiftLeft, {a, b}, {}, loc);
}
Tensor shift_right(const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::ShiftRight, {a, b}, {}, loc);
}

}  // namespace kiln
