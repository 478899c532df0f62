// The Tensor op functions: each builds its attributes and goes through apply_op.
#include <cmath>

#include "capture/trace.h"

namespace kiln {
namespace {

Tensor unary(OpKind op, const Tensor& a, const Loc& loc) {
  return apply_op(op, {a}, {}, loc);
}
Tensor binary(OpKind op, const Tensor& a, const Tensor& b, const Loc& loc) {
  return apply_op(op, {a, b}, {}, loc);
}
Tensor dims_op(OpKind op, const Tensor& a, std::vector<int64_t> dims, bool keepdim,
               const Loc& loc) {
  Attrs attrs;
  attrs.dims = std::move(dims);
  attrs.keepdim = keepdim;
  return apply_op(op, {a}, std::move(attrs), loc);
}

/// The dtype a C++ number takes next to tensor `t` (PyTorch's rule for Python scalars).
DType scalar_dtype_for(const Tensor& t, double value) {
  DType d = t.dtype();
  if (is_floating(d)) return d;
  if (d == DType::kBool) return std::floor(value) == value ? DType::kI64 : DType::kF32;
  return std::floor(value) == value ? d : DType::kF32;
}

Tensor lit(const Tensor& like, double v) {
  return scalar(v, scalar_dtype_for(like, v), Loc());
}

}  // namespace

Tensor scalar(double value, DType dtype, Loc) {
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = TensorMeta{dtype, {}};
  impl->literal = value;
  return Tensor(std::move(impl));
}

Tensor add(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Add, a, b, loc);
}
Tensor sub(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Sub, a, b, loc);
}
Tensor mul(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Mul, a, b, loc);
}
Tensor div(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Div, a, b, loc);
}
Tensor maximum(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Maximum, a, b, loc);
}
Tensor minimum(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Minimum, a, b, loc);
}
Tensor eq(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Eq, a, b, loc);
}
Tensor ne(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Ne, a, b, loc);
}
Tensor lt(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Lt, a, b, loc);
}
Tensor le(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Le, a, b, loc);
}
Tensor gt(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Gt, a, b, loc);
}
Tensor ge(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Ge, a, b, loc);
}

Tensor neg(const Tensor& a, Loc loc) {
  return unary(OpKind::Neg, a, loc);
}
Tensor exp(const Tensor& a, Loc loc) {
  return unary(OpKind::Exp, a, loc);
}
Tensor log(const Tensor& a, Loc loc) {
  return unary(OpKind::Log, a, loc);
}
Tensor sqrt(const Tensor& a, Loc loc) {
  return unary(OpKind::Sqrt, a, loc);
}
Tensor rsqrt(const Tensor& a, Loc loc) {
  return unary(OpKind::Rsqrt, a, loc);
}
Tensor tanh(const Tensor& a, Loc loc) {
  return unary(OpKind::Tanh, a, loc);
}
Tensor sigmoid(const Tensor& a, Loc loc) {
  return unary(OpKind::Sigmoid, a, loc);
}
Tensor relu(const Tensor& a, Loc loc) {
  return unary(OpKind::Relu, a, loc);
}
Tensor gelu(const Tensor& a, Loc loc) {
  return unary(OpKind::Gelu, a, loc);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::Where, {cond, a, b}, {}, loc);
}

Tensor cast(const Tensor& a, DType dtype, Loc loc) {
  Attrs attrs;
  attrs.dtype = dtype;
  return apply_op(OpKind::Cast, {a}, std::move(attrs), loc);
}

Tensor sum(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Sum, a, std::move(axes), keepdim, loc);
}
Tensor mean(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Mean, a, std::move(axes), keepdim, loc);
}
Tensor max(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Max, a, std::move(axes), keepdim, loc);
}
Tensor reshape(const Tensor& a, Shape shape, Loc loc) {
  return dims_op(OpKind::Reshape, a, std::move(shape), false, loc);
}
Tensor permute(const Tensor& a, std::vector<int64_t> perm, Loc loc) {
  return dims_op(OpKind::Permute, a, std::move(perm), false, loc);
}
Tensor expand(const Tensor& a, Shape shape, Loc loc) {
  return dims_op(OpKind::Expand, a, std::move(shape), false, loc);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b, Loc());
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b, Loc());
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b, Loc());
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b, Loc());
}
Tensor operator-(const Tensor& a) {
  return neg(a, Loc());
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, lit(a, b), Loc());
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, lit(a, b), Loc());
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, lit(a, b), Loc());
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, lit(a, b), Loc());
}
Tensor operator+(double a, const Tensor& b) {
  return add(lit(b, a), b, Loc());
}
Tensor operator-(double a, const Tensor& b) {
  return sub(lit(b, a), b, Loc());
}
Tensor operator*(double a, const Tensor& b) {
  return mul(lit(b, a), b, Loc());
}
Tensor operator/(double a, const Tensor& b) {
  return div(lit(b, a), b, Loc());
}

}  // namespace kiln
