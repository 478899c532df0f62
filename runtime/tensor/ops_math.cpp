// The Tensor functions of the elementwise ops: every unary and binary op of
// kiln/elementwise_ops.def, one node each (rules in runtime/graph/op.cpp), and cumsum.
#include "capture/trace.h"
#include "tensor/apply_op.h"

namespace kiln {

// abs of a complex64 tensor is its magnitude (f32), the ComplexAbs op.
#define KILN_UNARY(e, name, ints, glsl)                                   \
  Tensor name(const Tensor& a, Loc loc) {                                 \
    if (OpKind::e == OpKind::Abs && a.defined() && is_complex(a.dtype())) \
      return apply_op(OpKind::ComplexAbs, {a}, {}, loc);                  \
    return apply_op(OpKind::e, {a}, {}, loc);                             \
  }
#define KILN_BINARY(e, name, dtypes, glsl)                 \
  Tensor name(const Tensor& a, const Tensor& b, Loc loc) { \
    return apply_op(OpKind::e, {a, b}, {}, loc);           \
  }
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
#undef KILN_UNARY

Tensor cumsum(const Tensor& a, int64_t axis, bool exclusive, bool reverse, Loc loc) {
  Attrs attrs;
  attrs.axis = axis;
  attrs.index = (exclusive ? kCumSumExclusive : 0) | (reverse ? kCumSumReverse : 0);
  return apply_op(OpKind::CumSum, {a}, std::move(attrs), loc);
}
}  // namespace kiln
