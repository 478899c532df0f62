// The Tensor functions of the elementwise ops: every unary op of kiln/elementwise_ops.def (one
// node each), the remainders mod and fmod and the bit shifts (rules in runtime/graph/op.cpp).
#include "capture/trace.h"

namespace kiln {

#define KILN_UNARY(e, name, ints, glsl)       \
  Tensor name(const Tensor& a, Loc loc) {     \
    return apply_op(OpKind::e, {a}, {}, loc); \
  }
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY

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
